// SPDX-License-Identifier: Apache-2.0
// Our filters on a response, directly or through mod_filter's harness (AddOutputFilterByType,
// FilterDeclare/FilterProvider): the one place that reads mod_filter's private provider list.
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include "mc/coding.h"

namespace mc::httpd {

/// The codings filter `g` would offer for `r`: ours directly, or through a mod_filter harness
/// whose provider for `r` is ours (mod_filter dispatches only 200 responses). Empty if `g` would
/// not compress.
mc::CodingSet codings_on(request_rec* r, const ap_filter_t* g);
/// The codings a mod_filter harness would dispatch to one of our filters for `r` (the first
/// matching provider wins, as in mod_filter).
mc::CodingSet codings_via_harness(request_rec* r, const ap_filter_rec_t* harness);
/// Every coding of ours that a harness could dispatch to, whatever the content type.
mc::CodingSet codings_in_harness(request_rec* r, const ap_filter_rec_t* harness);
/// Whether a harness has one of our filters among its providers (matching or not).
bool harness_has_ours(request_rec* r, const ap_filter_rec_t* harness);
/// Whether a mod_filter harness leaves `r`'s body alone: the provider it would dispatch to is
/// ours, or none matches. A provider of another module that matches, or whose expression could
/// (it is evaluated only when the body comes), or a provider list of a layout we do not know,
/// may change the body.
bool harness_keeps_body(request_rec* r, const ap_filter_rec_t* harness);

/// Several of our filters on one response negotiate once from the union of their codings: the
/// first one called takes the others' codings and removes them from the chain.
mc::CodingSet absorb_sibling_filters(ap_filter_t* f, mc::CodingSet own);

/// post_config: refuses to start beside a mod_filter built for another httpd ABI than the
/// provider layout mirrored here (httpd 2.4's). Every harness is also checked each time before
/// it is read (harness_*): one from .htaccess lives in a request's pool.
int harness_post_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                        server_rec* s) noexcept;

}  // namespace mc::httpd
