// SPDX-License-Identifier: Apache-2.0
// The compressing output filters (DEFLATE, BROTLI_COMPRESS, ZSTD, MULTICOMPRESS): one brigade
// loop behind the four names, and the module's internal filters.
#pragma once

#include <httpd.h>
#include <util_filter.h>

namespace mc::httpd {

/// Registers the four compressing filters (DEFLATE, BROTLI_COMPRESS, ZSTD, MULTICOMPRESS).
void register_output_filters();

}  // namespace mc::httpd
