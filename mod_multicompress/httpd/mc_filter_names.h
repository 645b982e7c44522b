// SPDX-License-Identifier: Apache-2.0
// The filter table: our filter names, their records and codings, and mod_filter's harnesses that
// dispatch to them (the one place that reads mod_filter's private provider list).
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include "mc/coding.h"

namespace mc::httpd {

/// Registers DEFLATE, BROTLI_COMPRESS, ZSTD and MULTICOMPRESS, each running `engine` (the
/// brigade loop, mc_filter.cc) with the codings of its name.
using Engine = apr_status_t (*)(ap_filter_t* f, apr_bucket_brigade* bb, mc::CodingSet own);
void register_compress_filters(Engine engine);

/// The codings a filter record offers, or an empty set if the filter is not ours.
mc::CodingSet codings_of(const ap_filter_rec_t* frec);
/// The codings filter `g` would offer for `r`: ours directly, or through a mod_filter harness
/// whose provider for `r` is ours (mod_filter dispatches only 200 responses). Empty if `g` would
/// not compress.
mc::CodingSet codings_on(request_rec* r, const ap_filter_t* g);
/// The codings a mod_filter harness record would dispatch to one of our filters for `r` (the
/// first matching provider wins, as in mod_filter).
mc::CodingSet codings_via_harness(request_rec* r, const ap_filter_rec_t* harness);
/// Every coding of ours that a harness could dispatch to, whatever the content type.
mc::CodingSet codings_in_harness(const ap_filter_rec_t* harness);
/// Whether a harness has one of our filters among its providers (matching or not).
bool harness_has_ours(const ap_filter_rec_t* harness);
/// Whether a mod_filter harness leaves `r`'s body alone: the provider it would dispatch to is
/// ours, or none matches. A provider of another module that matches, or whose expression could
/// (it is evaluated only when the body comes), may change the body.
bool harness_keeps_body(request_rec* r, const ap_filter_rec_t* harness);

/// Several of our filters on one response negotiate once from the union of their codings: the
/// first one called takes the others' codings and removes them from the chain.
mc::CodingSet absorb_sibling_filters(ap_filter_t* f, mc::CodingSet own);

/// post_config: checks that mod_filter's harnesses for our filters (AddOutputFilterByType) have
/// the provider layout this module reads. Returns an error message (startup is refused) or
/// nullptr.
const char* check_mod_filter_layout(apr_pool_t* p);
/// post_config hook running check_mod_filter_layout().
int filter_names_post_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                             server_rec* s) noexcept;

}  // namespace mc::httpd
