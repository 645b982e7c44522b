// SPDX-License-Identifier: Apache-2.0
// The compressing output filters (DEFLATE, BROTLI_COMPRESS, ZSTD, MULTICOMPRESS) and the
// request hooks that go with them.
#pragma once

#include <httpd.h>
#include <util_filter.h>

namespace mc::httpd {

/// child_init hook: the child's pool of one-shot compressors.
void filter_child_init(apr_pool_t* pchild, server_rec* s) noexcept;

/// Registers the four output filters.
void register_output_filters();

/// insert_filter hook (last): remembers which of our filters are on the response.
void remember_filters(request_rec* r) noexcept;
/// insert_error_filter hook: puts our filter back on a 304 from the default handler, so that it
/// carries the Vary and ETag the 200 would (httpd removes content filters before sending it).
void reinsert_for_304(request_rec* r) noexcept;

/// fixups hook: removes our ETag suffixes from If-None-Match so that httpd's conditional
/// evaluation sees the file's own ETag (httpd bug 45023).
int strip_conditional_suffixes(request_rec* r) noexcept;

}  // namespace mc::httpd
