// SPDX-License-Identifier: Apache-2.0
// Compress-once at the handler: a fresh sidecar (MultiCompressStatic) or a cache entry
// (MultiCompressCache) sent instead of the file the default handler would send.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// handler hook: for a response that is its file for everyone and that our filters would
/// compress, sends the negotiated coding's sidecar or cache entry; else DECLINED (the default
/// handler serves the file and the filter compresses it live, filling a missed entry).
int serve_precompressed(request_rec* r) noexcept;

}  // namespace mc::httpd
