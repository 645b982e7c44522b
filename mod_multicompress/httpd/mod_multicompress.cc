// SPDX-License-Identifier: Apache-2.0
// mod_multicompress: the module struct and hook registration, nothing else.
#include <httpd.h>
#include <http_config.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mc_cache_worker.h"
#include "mc_config.h"
#include "mc_filter.h"
#include "mc_filter_names.h"
#include "mc_budget.h"
#include "mc_conflicts.h"
#include "mc_counters.h"
#include "mc_dictionary.h"
#include "mc_inflate.h"
#include "mc_not_modified.h"
#include "mc_metrics.h"
#include "mc_socache.h"
#include "mc_static.h"
#include "mc_transcode.h"
#include "mc_whole_body.h"

namespace {

void register_hooks(apr_pool_t* /*p*/) noexcept {
    mc::httpd::register_output_filters();
    mc::httpd::register_inflate_filters();
    mc::httpd::register_dictionary_filter();
    mc::httpd::register_transcode_filter();
    // Before mod_cache and the default handler evaluate the request's validators.
    ap_hook_fixups(mc::httpd::strip_conditional_suffixes, nullptr, nullptr, APR_HOOK_LAST);
    ap_hook_insert_filter(mc::httpd::remember_filters, nullptr, nullptr, APR_HOOK_REALLY_LAST);
    ap_hook_insert_filter(mc::httpd::insert_dictionary_filter, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_insert_filter(mc::httpd::insert_transcode_filter, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_insert_error_filter(mc::httpd::reinsert_for_304, nullptr, nullptr, APR_HOOK_MIDDLE);
    // Before the default handler (REALLY_LAST): a fresh sidecar replaces compressing the file.
    ap_hook_handler(mc::httpd::serve_precompressed, nullptr, nullptr, APR_HOOK_LAST);
    // Before the access checks of the sidecar lookup's subrequest.
    ap_hook_post_perdir_config(mc::httpd::quiet_sidecar_probe, nullptr, nullptr,
                               APR_HOOK_REALLY_FIRST);
    ap_hook_pre_config(mc::httpd::socache_pre_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    // After the socache providers' modules have set themselves up.
    ap_hook_post_config(mc::httpd::socache_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    // The store's mutex first, then the worker that uses it.
    ap_hook_child_init(mc::httpd::socache_child_init, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_child_init(mc::httpd::cache_worker_child_init, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_child_init(mc::httpd::whole_body_child_init, nullptr, nullptr, APR_HOOK_MIDDLE);
    // After mod_filter read AddOutputFilterByType: its provider layout is what we read.
    ap_hook_post_config(mc::httpd::filter_names_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_post_config(mc::httpd::counters_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_post_config(mc::httpd::budget_post_config, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_child_init(mc::httpd::counters_child_init, nullptr, nullptr, APR_HOOK_FIRST);
    ap_hook_handler(mc::httpd::metrics_handler, nullptr, nullptr, APR_HOOK_MIDDLE);
    ap_hook_log_transaction(mc::httpd::count_response, nullptr, nullptr, APR_HOOK_MIDDLE);
    mc::httpd::register_status_hook();
    ap_hook_check_config(mc::httpd::refuse_conflicting_modules, nullptr, nullptr, APR_HOOK_MIDDLE);
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
