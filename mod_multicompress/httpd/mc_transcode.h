// SPDX-License-Identifier: Apache-2.0
// MultiCompressTranscode: a response its handler or backend already encoded in a coding the
// client did not accept (br or zstd to a gzip-only client) is decoded, so that the compressing
// filter after it can encode it again in a coding the client does accept.
#pragma once

#include <httpd.h>
#include <http_config.h>

namespace mc::httpd {

/// Registers the MULTICOMPRESS_TRANSCODE output filter (before every compressing filter and
/// before the dictionary learning filter).
void register_transcode_filter();

/// insert_filter hook: adds the filter where MultiCompressTranscode is On.
void insert_transcode_filter(request_rec* r) noexcept;

}  // namespace mc::httpd
