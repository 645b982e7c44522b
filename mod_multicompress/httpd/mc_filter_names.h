// SPDX-License-Identifier: Apache-2.0
// The filter table: our filter names (DEFLATE, BROTLI_COMPRESS, ZSTD, MULTICOMPRESS), their
// records and the codings each may choose.
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include "mc/coding.h"

namespace mc::httpd {

/// Registers DEFLATE, BROTLI_COMPRESS, ZSTD and MULTICOMPRESS, each running `engine` (the
/// brigade loop, mc_filter.cc) with the codings of its name.
using Engine = apr_status_t (*)(ap_filter_t* f, apr_bucket_brigade* bb, mc::CodingSet own);
void register_compress_filters(Engine engine);

/// The codings a filter record offers, or an empty set if the filter is not one of the four.
mc::CodingSet codings_of(const ap_filter_rec_t* frec);

/// Whether `frec` is the registered record of one of the four (the one
/// ap_get_output_filter_handle returns for its name), by address alone.
bool is_compress_filter_record(const ap_filter_rec_t* frec);

}  // namespace mc::httpd
