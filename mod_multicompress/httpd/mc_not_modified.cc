// SPDX-License-Identifier: Apache-2.0
// Validators and 304s: If-None-Match without our ETag suffixes for the handler, and a 304 that
// carries the Vary and ETag of the 200 it stands for (RFC 9110 15.4.5).
#include "mc_not_modified.h"

#include <apr_strings.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>

#include <array>
#include <string>

#include "mc/headers.h"
#include "mc/policy.h"
#include "mc_config.h"
#include "mc_harness.h"
#include "mc_log.h"
#include "mc_lookahead.h"
#include "mc_response.h"
#include "mc_sidecar.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

namespace {

// Set once in register_hooks, read-only afterwards.
ap_filter_rec_t* g_not_modified_filter = nullptr;

}  // namespace

// A 304 carries the Vary and ETag that the 200 would (RFC 9110 §15.4.5): decide as if it were
// that 200, change only headers. Done once per request, whichever filter gets there first.
void not_modified_headers(ap_filter_t* f, mc::CodingSet codings) {
    request_rec* r = f->r;
    RequestState* st = request_state(r, true);
    if (st->decided) return;
    const mc::Config& cfg = dir_config(r);
    const std::string encoding = content_encoding_of(r);
    mc::ResponseView view = view_of(r, encoding, -1);
    view.status = HTTP_OK;
    // "Content-Length: 0" on a 304 (some backends send it) is not the length of the 200.
    if (view.body_length == 0) view.body_length = -1;
    add_late_no_transform(f, cfg, view);
    const mc::Decision verdict = mc::decide(view, cfg, codings);
    if (verdict.vary) merge_vary(r);
    // The ETag the 200 would carry. Without its body a 304 cannot always tell whether the 200
    // would be compressed (a backend's 304 has no Content-Type, the 200 might be already
    // encoded): when the client holds the identity tag of this same base tag, that is the one
    // it gets confirmed. Both name the current version, so this never confirms stale bytes.
    mc::Coding coding = verdict.coding;
    const char* etag = apr_table_get(r->headers_out, "ETag");
    if (etag != nullptr && st->if_none_match != nullptr &&
        cfg.etag_value() == mc::ETagMode::kAddSuffix &&
        !mc::etag_in_list(st->if_none_match, mc::alter_etag(etag, coding, cfg.etag_value(),
                                                            dcz_etag_tag(r, coding))) &&
        mc::etag_in_list(st->if_none_match,
                         mc::alter_etag(etag, mc::Coding::kIdentity, cfg.etag_value()))) {
        coding = mc::Coding::kIdentity;
    }
    mc::Decision as_sent = verdict;
    as_sent.coding = coding;
    st->decide_once(as_sent);
    alter_etag(r, coding, cfg.etag_value());
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "304 Not Modified: headers as for %s",
                  mc::coding_token(coding).data());
}

namespace {

// After our compressing filters and mod_headers: a 304 gets the Vary and ETag of its 200; any
// other response whose ETag no filter of ours handled (mod_filter did not dispatch to us) gets
// its identity validator, so that no tag that ends in one of our suffixes leaves unescaped.
apr_status_t out_not_modified(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    try {
        request_rec* r = f->r;
        if (const RequestState* st = request_state(r, false); st != nullptr) {
            if (r->status == HTTP_NOT_MODIFIED) {
                mc::CodingSet codings = st->codings;
                mc::CodingSet possible = st->codings;
                for (std::size_t i = 0; i < st->n_harnesses; ++i) {
                    codings = codings | codings_via_harness(r, st->harnesses[i]);
                    possible = possible | codings_in_harness(r, st->harnesses[i]);
                }
                // A proxied 304 has no Content-Type to pick a provider by: decide as the
                // harness's providers could.
                if (codings.empty() && r->content_type == nullptr) codings = possible;
                if (!codings.empty()) not_modified_headers(f, codings);
            } else if (!st->etag_done) {
                alter_etag(r, mc::Coding::kIdentity, dir_config(r).etag_value());
            }
        }
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00008) "304 filter failed");
    }
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

}  // namespace

void register_not_modified_filter() {
    // Internal: fixes up the headers of a 304 (added by prepare_request, mc_prepare.cc).
    g_not_modified_filter = ap_register_output_filter("MULTICOMPRESS_304", out_not_modified,
                                                      nullptr, AP_FTYPE_CONTENT_SET);
}

// If-None-Match as the handler or backend must see it (httpd bug 45023: it compares with its
// own ETag, without our suffixes). Each tag loses exactly the suffix alter_etag added, so a
// stripped tag is exactly the backend's tag of that representation. A tag for a coding this
// request will not get is left out: the 304 must carry the tag of the 200 it stands for
// (RFC 9110 §15.4.5), and that is not the client's. `possible`: our codings on the response.
void rewrite_if_none_match(request_rec* r, RequestState* st, mc::CodingSet possible) {
    const mc::Config& cfg = dir_config(r);
    const char* inm = apr_table_get(r->headers_in, "If-None-Match");
    if (inm == nullptr || cfg.etag_value() != mc::ETagMode::kAddSuffix) return;
    if (st->if_none_match == nullptr) st->if_none_match = inm;
    // The coding this request would get, from the request alone (the response may still turn
    // out identity: its tag is always kept).
    mc::ResponseView view = view_of(r, "", -1);
    view.status = HTTP_OK;
    view.content_type = "";
    view.response_cache_control = "";
    view.env_gzip_only_text_html = false;
    // A deploy-time delta answers with dcz whether or not the dictionary is held.
    if (!view.dictionary_available && st->named && cfg.static_on() &&
        delta_sidecar_there(r, *st).path != nullptr) {
        view.dictionary_available = true;
    }
    const mc::Coding likely = mc::decide(view, cfg, possible).coding;
    const std::string rewritten = mc::rewrite_if_none_match(
        inm, mc::CodingSet{mc::Coding::kIdentity, likely}, dcz_etag_tag(r, likely));
    if (rewritten == inm) return;
    if (rewritten.empty()) {
        apr_table_unset(r->headers_in, "If-None-Match");
    } else {
        apr_table_set(r->headers_in, "If-None-Match", rewritten.c_str());
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "If-None-Match: '%s' -> '%s'", inm,
                  rewritten.c_str());
}

void add_not_modified_filter(request_rec* r) {
    ap_add_output_filter_handle(g_not_modified_filter, nullptr, r, r->connection);
}

void reinsert_for_304(request_rec* r) noexcept {
    // Error responses start over with the protocol filters only (ap_send_error_response).
    const RequestState* st = request_state(r, false);
    if (st == nullptr || r->status != HTTP_NOT_MODIFIED || r->main != nullptr) return;
    add_not_modified_filter(r);
}

int strip_conditional_suffixes(request_rec* r) noexcept {
    // Only remembers the request's If-None-Match here (mod_cache's quick handler, which ran
    // before, may have put its stored validator there); prepare_request rewrites it once it
    // knows that our filters are on the response.
    try {
        if (r->main != nullptr) return DECLINED;
        if (const char* inm = apr_table_get(r->headers_in, "If-None-Match")) {
            request_state(r, true)->if_none_match = inm;
        }
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00006) "fixups failed");
    }
    return DECLINED;
}

}  // namespace mc::httpd
