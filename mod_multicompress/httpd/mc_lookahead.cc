// SPDX-License-Identifier: Apache-2.0
// The look-ahead at mod_headers: the response headers as its filter, after ours, will leave them.
#include "mc_lookahead.h"

#include <ap_mmn.h>
#include <http_config.h>
#include <http_log.h>

#include "mc/headers.h"
#include "mc_log.h"
#include "mc_response.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Set once in register_hooks, read-only afterwards.
ap_filter_rec_t* g_probe_sink = nullptr;
// mod_headers' FIXUP_HEADERS_OUT record, as checked at post_config (nullptr: not loaded).
ap_filter_rec_t* g_fixup = nullptr;

// The end of the chain while probing (see probe_headers): swallows what it gets.
apr_status_t out_probe_sink(ap_filter_t* /*f*/, apr_bucket_brigade* bb) noexcept {
    apr_brigade_cleanup(bb);
    return APR_SUCCESS;
}

// The header tables as they will be when the body leaves. mod_headers applies `Header set` and
// `Header always set` in its FIXUP_HEADERS_OUT filter, which its insert_filter hook
// (APR_HOOK_LAST) puts after ours: same filter type, added later (add_any_filter_handle appends
// after filters of the same type). So it runs only when we pass the first body on, after our
// decisions. To know what it will do, run it now on copies of the header tables and an empty
// brigade, with the chain cut right behind it, then put the tables and the filter back: the real
// run still comes later, after our header changes, so `Header edit ETag ...` and `Header append
// Vary ...` see them as with mod_deflate.
LateHeaders probe_headers(ap_filter_t* f) {
    request_rec* r = f->r;
    ap_filter_t* prev = f;
    for (ap_filter_t* g = f->next; g != nullptr && g->r == r && g->frec->ftype < AP_FTYPE_PROTOCOL;
         prev = g, g = g->next) {
        if (g_fixup == nullptr || g->frec != g_fixup) continue;
        apr_table_t* const out = r->headers_out;
        apr_table_t* const err = r->err_headers_out;
        r->headers_out = apr_table_copy(r->pool, out);
        r->err_headers_out = apr_table_copy(r->pool, err);
        ap_filter_t sink{};
        sink.frec = g_probe_sink;
        sink.r = r;
        sink.c = r->connection;
        ap_filter_t* const next = g->next;
        g->next = &sink;
        apr_bucket_brigade* empty = apr_brigade_create(r->pool, r->connection->bucket_alloc);
        (void)g->frec->filter_func.out_func(g, empty);
        // It removed itself (prev->next now skips it): relink it where it was.
        prev->next = g;
        g->next = next;
        const LateHeaders late{r->headers_out, r->err_headers_out};
        r->headers_out = out;
        r->err_headers_out = err;
        return late;
    }
    return {r->headers_out, r->err_headers_out};
}

}  // namespace

LateHeaders headers_when_sent(ap_filter_t* f) {
    return probe_headers(f);
}

// The view, with a no-transform that a filter after ours will add (MultiCompressNoTransform
// Honor only; Ignore never looks).
void add_late_no_transform(ap_filter_t* f, const mc::Config& cfg, mc::ResponseView& view) {
    if (!cfg.honor_no_transform() ||
        mc::list_has_token(view.response_cache_control, "no-transform"))
        return;
    const LateHeaders late = probe_headers(f);
    const bool found = table_has_token(late.out, "Cache-Control", "no-transform") ||
                       table_has_token(late.err, "Cache-Control", "no-transform");
    ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, f->r, "mod_headers will %sset no-transform",
                  found ? "" : "not ");
    if (found) view.response_cache_control = "no-transform";
}

int lookahead_post_config(apr_pool_t* /*pconf*/, apr_pool_t* /*plog*/, apr_pool_t* /*ptemp*/,
                          server_rec* s) noexcept {
    g_fixup = nullptr;
    const module* m = ap_find_linked_module("mod_headers.c");
    if (m == nullptr) return OK;
    ap_filter_rec_t* frec = ap_get_output_filter_handle("FIXUP_HEADERS_OUT");
    if (m->version != MODULE_MAGIC_NUMBER_MAJOR || frec == nullptr ||
        frec->ftype != AP_FTYPE_CONTENT_SET || frec->filter_func.out_func == nullptr) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     MC_LOGNO(00222) "mod_headers' FIXUP_HEADERS_OUT filter is not the httpd 2.4 "
                                     "content-set filter this module runs ahead of time to see "
                                     "the headers it will set; refusing to start");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    g_fixup = frec;
    return OK;
}

void register_probe_sink() {
    // Internal: never in a chain, only the end of one while probing (no_transform_downstream).
    g_probe_sink = ap_register_output_filter("MULTICOMPRESS_PROBE_SINK", out_probe_sink, nullptr,
                                             AP_FTYPE_CONTENT_SET);
}

}  // namespace mc::httpd
