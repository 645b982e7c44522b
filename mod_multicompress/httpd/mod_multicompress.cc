// SPDX-License-Identifier: Apache-2.0
// mod_multicompress: the module struct and the registration of every hook and filter, nothing
// else. docs/design.md walks a request through them.
#include <httpd.h>
#include <http_config.h>
#include <apr_optional_hooks.h>
#include <http_protocol.h>
#include <http_request.h>
#include <mod_status.h>

#include "mc_budget.h"
#include "mc_cache_worker.h"
#include "mc_config.h"
#include "mc_conflicts.h"
#include "mc_counters.h"
#include "mc_dictionary_learn.h"
#include "mc_directives.h"
#include "mc_filter.h"
#include "mc_harness.h"
#include "mc_hit_tier.h"
#include "mc_inflate_in.h"
#include "mc_inflate_out.h"
#include "mc_lookahead.h"
#include "mc_metrics.h"
#include "mc_not_modified.h"
#include "mc_prepare.h"
#include "mc_sidecar.h"
#include "mc_site_dictionary.h"
#include "mc_socache.h"
#include "mc_static.h"
#include "mc_transcode.h"
#include "mc_whole_body.h"

namespace {

void register_hooks(apr_pool_t* /*p*/) noexcept {
    using namespace mc::httpd;
    // ---- filters
    register_output_filters();         // DEFLATE, BROTLI_COMPRESS, ZSTD, MULTICOMPRESS (mc_filter)
    register_not_modified_filter();    // MULTICOMPRESS_304 (mc_not_modified)
    register_dictionary_filter();      // MULTICOMPRESS_DICTIONARY (mc_dictionary_learn)
    register_probe_sink();             // MULTICOMPRESS_PROBE_SINK (mc_lookahead)
    register_inflate_input_filter();   // DEFLATE, input (mc_inflate_in)
    register_inflate_output_filter();  // INFLATE (mc_inflate_out)
    register_transcode_filter();       // MULTICOMPRESS_TRANSCODE (mc_transcode)

    // ---- configuration and process life
    ap_hook_pre_config(socache_pre_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_pre_config(hit_tier_pre_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_check_config(refuse_conflicting_modules, nullptr, nullptr, APR_HOOK_MIDDLE);
    // After the socache providers' modules have set themselves up.
    ap_hook_post_config(socache_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    // The guards of the two private things read from other modules: mod_filter's provider list
    // and mod_headers' filter, run ahead of its turn.
    ap_hook_post_config(harness_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_post_config(lookahead_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_post_config(counters_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_post_config(budget_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_child_init(counters_child_init, nullptr, nullptr, APR_HOOK_FIRST);
    // The store's mutex first, then the worker that uses it.
    ap_hook_child_init(socache_child_init, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_child_init(cache_worker_child_init, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_child_init(whole_body_child_init, nullptr, nullptr, APR_HOOK_MIDDLE);
    // After counters_child_init: the tier's gauge is a word of the child's block.
    ap_hook_child_init(hit_tier_child_init, nullptr, nullptr, APR_HOOK_MIDDLE);

    // ---- a request, in the order httpd runs its hooks
    // The sidecar lookup's subrequest logs quietly: from its translation on (the location walk
    // before it may set a section's log), and again before its access checks.
    ap_hook_translate_name(quiet_sidecar_probe, nullptr, nullptr, APR_HOOK_REALLY_FIRST);
    ap_hook_post_perdir_config(quiet_sidecar_probe, nullptr, nullptr, APR_HOOK_REALLY_FIRST);
    // Before mod_cache and the default handler evaluate the request's validators.
    ap_hook_fixups(strip_conditional_suffixes, nullptr, nullptr, APR_HOOK_LAST);
    ap_hook_fixups(announce_site_dictionary, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_insert_filter(insert_dictionary_filter, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_insert_filter(insert_transcode_filter, nullptr, nullptr, APR_HOOK_MIDDLE);
    // After every other module has added its filters: what the request brings to the decision.
    ap_hook_insert_filter(prepare_request, nullptr, nullptr, APR_HOOK_REALLY_LAST);
    ap_hook_insert_error_filter(reinsert_for_304, nullptr, nullptr, APR_HOOK_MIDDLE);
    // First of all handlers: they build what they pass on from the request headers.
    ap_hook_handler(prebuffer_request_body, nullptr, nullptr, APR_HOOK_REALLY_FIRST);
    ap_hook_handler(metrics_handler, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_handler(serve_site_dictionary, nullptr, nullptr, APR_HOOK_MIDDLE);
    // Before the default handler (REALLY_LAST): a sidecar or cache entry replaces the file.
    ap_hook_handler(serve_precompressed, nullptr, nullptr, APR_HOOK_LAST);
    ap_hook_log_transaction(count_response, nullptr, nullptr, APR_HOOK_MIDDLE);
    // mod_status's section (an optional hook: nothing happens without mod_status).
    APR_OPTIONAL_HOOK(ap, status_hook, status_section, nullptr, nullptr, APR_HOOK_MIDDLE);
}

}  // namespace

extern "C" {
// The one exported symbol (-fvisibility=hidden elsewhere).
__attribute__((visibility("default"))) module AP_MODULE_DECLARE_DATA multicompress_module = {
    STANDARD20_MODULE_STUFF,
    mc::httpd::create_dir_config,
    mc::httpd::merge_dir_config,
    mc::httpd::create_server_config,  // the cache store
    mc::httpd::merge_server_config,
    mc::httpd::kCommands,
    register_hooks,
    AP_MODULE_FLAG_NONE,
};
}
