// SPDX-License-Identifier: Apache-2.0
// The look-ahead at mod_headers: the response headers as its filter, after ours, will leave them
// (a Cache-Control: no-transform or private, a Set-Cookie that `Header set` adds after us).
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include "mc/config.h"
#include "mc/policy.h"

namespace mc::httpd {

/// Registers the internal filter that ends the chain while probing.
void register_probe_sink();

/// post_config: the guard of the out-of-turn call into mod_headers' FIXUP_HEADERS_OUT filter.
/// With mod_headers loaded, its filter must be registered as httpd 2.4's mod_headers registers it
/// (a content-set output filter of a module of this ABI); otherwise startup is refused. The probe
/// only ever calls that very record.
int lookahead_post_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                          server_rec* s) noexcept;

/// The response's header tables as they will be when the body leaves: copies after a dry run of
/// mod_headers' FIXUP_HEADERS_OUT filter if it is after `f` in the chain, else the tables
/// themselves. Read-only for the caller.
struct LateHeaders {
    const apr_table_t* out;
    const apr_table_t* err;
};
LateHeaders headers_when_sent(ap_filter_t* f);

/// The view, with a no-transform that a filter after `f` will add (MultiCompressNoTransform
/// Honor only; Ignore never looks).
void add_late_no_transform(ap_filter_t* f, const mc::Config& cfg, mc::ResponseView& view);

}  // namespace mc::httpd
