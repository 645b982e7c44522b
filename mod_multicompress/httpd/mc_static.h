// SPDX-License-Identifier: Apache-2.0
// MultiCompressStatic: serving a fresh precompressed sidecar (FILE.zst, FILE.br, FILE.gz).
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// handler hook: for a static file that the default handler would serve and our filters would
/// compress, sends the sidecar of the negotiated encoding when it is fresh; else DECLINED (the
/// default handler serves the file and the filter compresses it on the fly).
int serve_precompressed(request_rec* r) noexcept;

/// translate_name and post_perdir_config hook: keeps the sidecar lookup's subrequest quiet (its
/// refusals are the answer the handler asked for, not errors to log for every request).
int quiet_sidecar_probe(request_rec* r) noexcept;

}  // namespace mc::httpd
