/* SPDX-License-Identifier: Apache-2.0 */
/* mod_mc_floor: bench-only. Plain Apache plus the one check mod_multicompress may not skip before
 * it sends a sidecar (docs/contract.md: a sidecar is sent only when httpd would send that file at
 * its own URL to this client): a subrequest lookup of a URL in the same directory, and the access
 * hooks run again when httpd skipped them because the merged per-directory configuration is the
 * page's own (mc_sidecar.cc, lookup_sidecar and check_access_again). Nothing else: the core
 * handler then sends the requested file as plain Apache does. bench/delta_perf.py,
 * bench/hits_perf.py and bench/instructions.py load it into a third Apache (`floor`) to show
 * what that check costs by itself, the limit of a sidecar hit against plain Apache. */
#include <httpd.h>
#include <http_config.h>
#include <http_core.h>
#include <http_request.h>

static int check_access_again(request_rec *sub)
{
    int first;
    int rv;
    sub->user = NULL;
    sub->ap_auth_type = NULL;
    first = ap_run_access_checker(sub);
    if (ap_satisfies(sub) == SATISFY_ANY) {
        if (first == OK) return OK;
    }
    else if (first != OK) {
        return first;
    }
    rv = ap_run_access_checker_ex(sub);
    if (rv == DECLINED || (rv == OK && ap_run_force_authn(sub) == OK)) {
        if ((rv = ap_run_check_user_id(sub)) != OK) return rv;
        if (sub->user == NULL) return HTTP_INTERNAL_SERVER_ERROR;
        return ap_run_auth_checker(sub);
    }
    return rv;
}

static int floor_handler(request_rec *r)
{
    request_rec *sub;
    int ok;
    if (r->main != NULL || r->method_number != M_GET || r->finfo.filetype != APR_REG) {
        return DECLINED;
    }
    /* The requested file's own URL: the same directory, walks and checks as a sibling's. */
    sub = ap_sub_req_lookup_uri(ap_escape_uri(r->pool, r->uri), r, NULL);
    ok = sub->status == HTTP_OK && sub->finfo.filetype == APR_REG &&
         (sub->per_dir_config != r->per_dir_config || check_access_again(sub) == OK);
    ap_destroy_sub_req(sub);
    return ok ? DECLINED : HTTP_FORBIDDEN;
}

static void register_hooks(apr_pool_t *p)
{
    (void)p;
    ap_hook_handler(floor_handler, NULL, NULL, APR_HOOK_REALLY_FIRST);
}

AP_DECLARE_MODULE(mc_floor) = {
    STANDARD20_MODULE_STUFF, NULL, NULL, NULL, NULL, NULL, register_hooks, 0
};
