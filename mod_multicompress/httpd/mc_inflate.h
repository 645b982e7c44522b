// SPDX-License-Identifier: Apache-2.0
// mod_deflate's other two filters: the DEFLATE input filter (decodes gzip, deflate, br and zstd
// request bodies within the inflate limits) and the INFLATE output filter.
#pragma once

#include <httpd.h>

#include "mc/decoder.h"

namespace mc::httpd {

/// The decoders' limits for `r`: a request body's (MultiCompressInflateLimit or LimitRequestBody,
/// MultiCompressInflateRatio), or without `request_body` only the ratio (the INFLATE filter).
mc::InflateLimits inflate_limits(const request_rec* r, bool request_body);

/// Registers the DEFLATE input filter and the INFLATE output filter.
void register_inflate_filters();

}  // namespace mc::httpd
