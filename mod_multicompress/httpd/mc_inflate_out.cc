// SPDX-License-Identifier: Apache-2.0
// The INFLATE output filter: decodes a gzip, deflate, br or zstd response (e.g. from a backend
// that compresses, for mod_substitute behind it), within mod_deflate's ratio limits.
#include "mc_inflate_out.h"

#include <http_log.h>
#include <util_filter.h>

#include <optional>
#include <string>

#include "mc/headers.h"
#include "mc_inflate.h"
#include "mc_log.h"
#include "mc_pool.h"
#include "mc_response.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// The single coding of a Content-Encoding value we can decode, if any.
std::optional<mc::Coding> decodable(const std::string& content_encoding) {
    const auto c = mc::parse_coding(mc::trim_ows(content_encoding));
    // dcz needs a dictionary: left as it is, like any coding we do not decode.
    if (!c || *c == mc::Coding::kIdentity || *c == mc::Coding::kDcz) return std::nullopt;
    return c;
}

// The response is decoded: no coding, and nothing that described the encoded bytes.
void unset_coding_headers(request_rec* r) {
    for (apr_table_t* t : {r->headers_out, r->err_headers_out}) {
        apr_table_unset(t, "Content-Encoding");
        unset_byte_headers(t);
    }
    r->content_encoding = nullptr;
}

apr_status_t inflate_out(ap_filter_t* f, apr_bucket_brigade* bb) {
    request_rec* r = f->r;
    auto* ctx = static_cast<InflateCtx*>(f->ctx);
    if (ctx == nullptr) {
        if (APR_BRIGADE_EMPTY(bb)) return APR_SUCCESS;
        // Every place httpd keeps the coding, AddEncoding's r->content_encoding included.
        const auto coding = decodable(content_encoding_of(r));
        if (!coding || r->main != nullptr ||
            apr_table_get(r->headers_out, "Content-Range") != nullptr) {
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        if (r->header_only != 0) {
            // HEAD: the headers GET would get (decoded, length unknown). The encoded body is
            // dropped here, or the CONTENT_LENGTH filter would announce its length.
            unset_coding_headers(r);
            for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);) {
                apr_bucket* const next = APR_BUCKET_NEXT(e);
                if (!APR_BUCKET_IS_METADATA(e)) apr_bucket_delete(e);
                e = next;
            }
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        auto decoder = mc::make_decoder(*coding, limits_for(r, false));
        if (!decoder.is_ok()) {
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        unset_coding_headers(r);
        ctx =
            pool_new<InflateCtx>(r->pool, nullptr, apr_brigade_create(r->pool, f->c->bucket_alloc),
                                 std::move(decoder).value());
        f->ctx = ctx;
    }
    if (ctx->eos || ctx->decoder == nullptr) {
        apr_brigade_cleanup(bb);
        return ctx->eos ? APR_SUCCESS : APR_EGENERAL;
    }
    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket* e = APR_BRIGADE_FIRST(bb);
        if (APR_BUCKET_IS_EOS(e) || APR_BUCKET_IS_FLUSH(e) || APR_BUCKET_IS_METADATA(e)) {
            const bool eos = APR_BUCKET_IS_EOS(e);
            if (eos && !ctx->decoder->finished()) {
                ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                              MC_LOGNO(00023) "response: compressed data is truncated");
            }
            ctx->sink.seal();
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->out, e);
            if (eos || APR_BUCKET_IS_FLUSH(e)) {
                ctx->eos = eos;
                ctx->sink.reset_pending();
                const apr_status_t rv = ap_pass_brigade(f->next, ctx->out);
                apr_brigade_cleanup(ctx->out);
                if (eos) {
                    ctx->decoder.reset();
                    apr_brigade_cleanup(bb);
                }
                if (rv != APR_SUCCESS || eos) return rv;
            }
            continue;
        }
        if (const apr_status_t rv = decode_bucket(r, ctx, e, "response"); rv != APR_SUCCESS) {
            apr_brigade_cleanup(bb);
            return APR_EGENERAL;
        }
        apr_bucket_delete(e);
        if (ctx->sink.pending() >= kInflateChunk) {
            ctx->sink.reset_pending();
            const apr_status_t rv = ap_pass_brigade(f->next, ctx->out);
            apr_brigade_cleanup(ctx->out);
            if (rv != APR_SUCCESS) return rv;
        }
    }
    return APR_SUCCESS;
}

apr_status_t guarded_out(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    try {
        return inflate_out(f, bb);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00025) "INFLATE filter failed");
    }
    return APR_EGENERAL;
}

}  // namespace

void register_inflate_output_filter() {
    // As mod_deflate: before content filters such as mod_substitute see the body.
    ap_register_output_filter("INFLATE", guarded_out, nullptr,
                              static_cast<ap_filter_type>(AP_FTYPE_RESOURCE - 1));
}

}  // namespace mc::httpd
