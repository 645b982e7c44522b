// SPDX-License-Identifier: Apache-2.0
// Response header helpers shared by the filters and the static handler.
#include "mc_response.h"

#include <apr_strings.h>
#include <http_config.h>

#include <new>
#include <span>

#include "mc/dictionary.h"
#include "mc/headers.h"
#include "mc_config.h"
#include "mc_dictionary_config.h"

namespace mc::httpd {
namespace {

struct TokenScan {
    const char* token;
    bool found;
};

int scan_for_token(void* data, const char* /*key*/, const char* value) {
    auto* scan = static_cast<TokenScan*>(data);
    if (mc::list_has_token(value, scan->token)) {
        scan->found = true;
        return 0;  // stop
    }
    return 1;
}

bool env_set(const request_rec* r, const char* name) {
    return apr_table_get(r->subprocess_env, name) != nullptr;
}

}  // namespace

bool table_has_token(const apr_table_t* t, const char* header, const char* token) {
    if (apr_table_get(t, header) == nullptr) return false;  // the usual case: no walk
    TokenScan scan{token, false};
    apr_table_do(scan_for_token, &scan, t, header, nullptr);
    return scan.found;
}

const char* all_fields(apr_pool_t* p, const apr_table_t* t, const char* name) {
    return apr_table_get(t, name) == nullptr ? nullptr : apr_table_getm(p, t, name);
}

const char* response_fields(request_rec* r, const char* name) {
    const char* a = all_fields(r->pool, r->headers_out, name);
    const char* b = all_fields(r->pool, r->err_headers_out, name);
    if (a != nullptr && b != nullptr) return apr_pstrcat(r->pool, a, ", ", b, nullptr);
    return a != nullptr ? a : b;
}

bool has_token(const request_rec* r, const char* header, const char* token) {
    return table_has_token(r->headers_out, header, token) ||
           table_has_token(r->err_headers_out, header, token);
}

// Vary: Accept-Encoding, merged into what is there, never twice. Under MultiCompressCrossSite
// Identity the coding also depends on Sec-Fetch-Site, so a shared cache must not hand a
// same-site compressed response to a cross-site request (the credentials themselves are not
// listed: Vary: Cookie would make such responses uncacheable for everyone).
void merge_vary(request_rec* r) {
    const bool cross_site = dir_config(r).cross_site_identity();
    const RequestState* st = request_state(r);
    // Also whenever the request names a dictionary dcz could answer with (held, or a delta
    // sidecar made against it): the response then depends on Available-Dictionary.
    const auto names_dictionary = [&] {
        return (st != nullptr && (st->dictionary || st->named)) || dictionary_may_apply(r);
    };
    if (apr_table_get(r->headers_out, "Vary") == nullptr &&
        apr_table_get(r->err_headers_out, "Vary") == nullptr) {
        // The usual case: no Vary yet, so ours is the whole field (one set, no walks).
        static constexpr const char* kFields[2][2] = {
            {"Accept-Encoding", "Accept-Encoding, Available-Dictionary"},
            {"Accept-Encoding, Sec-Fetch-Site",
             "Accept-Encoding, Sec-Fetch-Site, Available-Dictionary"}};
        apr_table_setn(r->headers_out, "Vary",
                       kFields[cross_site ? 1 : 0][names_dictionary() ? 1 : 0]);
        return;
    }
    if (!has_token(r, "Vary", "Accept-Encoding")) {
        apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
    }
    if (cross_site && !has_token(r, "Vary", "Sec-Fetch-Site")) {
        apr_table_mergen(r->headers_out, "Vary", "Sec-Fetch-Site");
    }
    if (!has_token(r, "Vary", "Available-Dictionary") && names_dictionary()) {
        apr_table_mergen(r->headers_out, "Vary", "Available-Dictionary");
    }
}

// Every place httpd keeps a response's content coding, joined; the same value kept in two places
// (r->content_encoding and the header it came from) counts once.
std::string content_encoding_of(const request_rec* r) {
    std::string all;
    const char* seen[3] = {};
    std::size_t n = 0;
    for (const char* v :
         {apr_table_get(r->headers_out, "Content-Encoding"),
          apr_table_get(r->err_headers_out, "Content-Encoding"), r->content_encoding}) {
        if (v == nullptr) continue;
        bool again = false;
        for (std::size_t i = 0; i < n; ++i) again = again || mc::iequals(seen[i], v);
        if (again) continue;
        seen[n++] = v;
        if (!all.empty()) all += ", ";
        all += v;
    }
    return all;
}

void unset_byte_headers(apr_table_t* t) {
    for (const char* h : {"Content-Length", "Content-MD5", "Content-Digest", "Repr-Digest"}) {
        apr_table_unset(t, h);
    }
}

std::string_view dcz_etag_tag(const request_rec* r, mc::Coding coding) {
    const RequestState* st = request_state(r);
    if (coding != mc::Coding::kDcz || st == nullptr || !st->named) return {};
    static_assert(mc::kDczEtagTagSize % 2 == 0, "hex digits of whole bytes");
    auto* tag = static_cast<char*>(apr_palloc(r->pool, mc::kDczEtagTagSize));  // hex digits
    const char* end = mc::hex_into(std::span(*st->named).first(mc::kDczEtagTagSize / 2), tag);
    return {tag, static_cast<std::size_t>(end - tag)};
}

void alter_etag(request_rec* r, mc::Coding coding, mc::ETagMode mode) {
    const char* etag = apr_table_get(r->headers_out, "ETag");
    if (etag == nullptr) return;
    RequestState* st = request_state(r, true);
    if (st->etag_done) return;
    st->etag_done = true;
    if (mode == mc::ETagMode::kRemove && coding != mc::Coding::kIdentity) {
        apr_table_unset(r->headers_out, "ETag");
        return;
    }
    if (coding == mc::Coding::kIdentity && mode == mc::ETagMode::kAddSuffix) {
        // Already encoded by the handler or backend, with a tag in our form for that coding
        // (a backend with mod_deflate or ours: "v1-gzip" for gzip): it means what our own tag
        // for that coding would mean, and stripping it gives the base tag. Keep it.
        mc::Coding encoded{};
        const std::string ce = content_encoding_of(r);
        if (mc::parse_encoding(mc::trim_ows(ce), encoded).is_ok() &&
            mc::etag_coding(etag) == encoded) {
            return;
        }
    }
    const std::string altered = mc::alter_etag(etag, coding, mode, dcz_etag_tag(r, coding));
    if (altered.empty()) {
        apr_table_unset(r->headers_out, "ETag");  // no validator for this representation
    } else if (altered != etag) {
        apr_table_setn(r->headers_out, "ETag",
                       apr_pstrmemdup(r->pool, altered.data(), altered.size()));
    }
}

void set_compressed_headers(request_rec* r, mc::Coding coding, const mc::Config& cfg) {
    const std::string_view token = mc::coding_token(coding);
    const char* value = apr_pstrmemdup(r->pool, token.data(), token.size());
    apr_table_unset(r->err_headers_out, "Content-Encoding");
    apr_table_setn(r->headers_out, "Content-Encoding", value);
    r->content_encoding = value;  // ap_http_header_filter copies it into the header
    unset_byte_headers(r->headers_out);
    unset_byte_headers(r->err_headers_out);
    alter_etag(r, coding, cfg.etag_value());
}

apr_off_t content_length_of(const request_rec* r) {
    const char* cl = apr_table_get(r->headers_out, "Content-Length");
    apr_off_t n = 0;
    return cl != nullptr && apr_strtoff(&n, cl, nullptr, 10) == APR_SUCCESS && n >= 0 ? n : -1;
}

mc::ResponseView view_of(request_rec* r, const std::string& content_encoding,
                         apr_off_t whole_length) {
    mc::ResponseView v;
    v.status = r->status;
    v.header_only = r->header_only != 0;
    v.content_encoding = content_encoding;
    v.content_type = r->content_type != nullptr ? r->content_type : "";
    v.has_content_range = apr_table_get(r->headers_out, "Content-Range") != nullptr ||
                          apr_table_get(r->err_headers_out, "Content-Range") != nullptr;
    v.request_has_range = apr_table_get(r->headers_in, "Range") != nullptr;
    const char* rcc = apr_table_get(r->headers_in, "Cache-Control");
    // `Header always set Cache-Control ...` goes to err_headers_out, beside what the handler
    // put in headers_out: both are sent, so both count. apr_table_get gives the first of
    // several fields only; merge them all.
    const char* scc = response_fields(r, "Cache-Control");
    v.request_cache_control = rcc != nullptr ? rcc : "";
    v.response_cache_control = scc != nullptr ? scc : "";
    v.body_length = whole_length >= 0 ? whole_length : content_length_of(r);
    const char* ae = apr_table_get(r->headers_in, "Accept-Encoding");
    v.accept_encoding_present = ae != nullptr;
    v.accept_encoding = ae != nullptr ? ae : "";
    RequestState* st = request_state(r, false);
    if (st != nullptr && ae != nullptr) {
        parse_accept(*st, ae);
        v.accept_parsed = &st->accept;
    }
    v.env_no_gzip = env_set(r, "no-gzip");
    v.env_no_brotli = env_set(r, "no-brotli");
    v.env_no_zstd = env_set(r, "no-zstd");
    v.env_no_multicompress = env_set(r, "no-multicompress");
    v.env_gzip_only_text_html = env_set(r, "gzip-only-text/html");
    v.env_force_gzip = env_set(r, "force-gzip");
    // Fetch Metadata (W3C): the browser says whether the request comes from another site.
    const char* site = apr_table_get(r->headers_in, "Sec-Fetch-Site");
    v.cross_site_with_credentials = site != nullptr &&
                                    mc::iequals(mc::trim_ows(site), "cross-site") &&
                                    (apr_table_get(r->headers_in, "Cookie") != nullptr ||
                                     apr_table_get(r->headers_in, "Authorization") != nullptr);
    v.dictionary_available = st != nullptr && st->dictionary != nullptr;
    return v;
}

void set_source(request_rec* r, const mc::Config& cfg, const char* source) {
    apr_table_setn(r->subprocess_env, "MULTICOMPRESS_SOURCE", source);
    if (const char* n = cfg.note(mc::NoteKind::kSource)) apr_table_setn(r->notes, n, source);
}

}  // namespace mc::httpd
