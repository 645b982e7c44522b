// SPDX-License-Identifier: Apache-2.0
// Request bodies: the DEFLATE input filter (SetInputFilter DEFLATE) decodes gzip, deflate, br and
// zstd bodies, and before the handler runs the first MiB is decoded so that it sees the decoded
// body's headers (its length, no coding).
#include "mc_inflate_in.h"

#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>

#include <optional>
#include <string_view>

#include "mc/headers.h"
#include "mc/request_coding.h"
#include "mc_counters.h"
#include "mc_inflate.h"
#include "mc_log.h"
#include "mc_pool.h"
#include "mc_request_coding.h"
#include "mc_response.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// A request body's outermost coding when we decode it, and what Content-Encoding says once it is
// removed ("br, gzip" -> "br"; nullptr: none), read as the 415 check reads it.
struct OuterCoding {
    mc::Coding coding;
    const char* rest;
};

std::optional<OuterCoding> outer_coding(apr_pool_t* p, const char* content_encoding) {
    if (content_encoding == nullptr) return std::nullopt;
    const mc::RequestCoding rc = mc::outer_request_coding(content_encoding);
    if (rc.kind != mc::RequestCoding::Kind::kDecode) return std::nullopt;
    if (rc.rest.empty()) return OuterCoding{rc.coding, nullptr};
    return OuterCoding{rc.coding, apr_pstrmemdup(p, rc.rest.data(), rc.rest.size())};
}

// The request headers once its body is decoded: they describe what the handler reads (a CGI's
// CONTENT_LENGTH and HTTP_CONTENT_ENCODING, what mod_proxy_http forwards). The coding goes (or
// the ones under it stay); the compressed length and digests of the compressed bytes go; the
// decoded length is set when known. `decoded_length` < 0: not known, the body streams on; a
// Content-Length request then says Transfer-Encoding: chunked, as a chunked request does
// (httpd's HTTP_IN has framed the body by then and does not read these headers again).
void describe_decoded_body(request_rec* r, const InflateCtx* ctx, apr_off_t decoded_length) {
    const bool had_length = apr_table_get(r->headers_in, "Content-Length") != nullptr;
    apr_table_unset(r->headers_in, "Content-Encoding");
    unset_byte_headers(r->headers_in);
    apr_table_unset(r->headers_in, "Digest");  // RFC 3230, of the compressed instance
    if (ctx->rest_encoding != nullptr) {
        apr_table_setn(r->headers_in, "Content-Encoding", ctx->rest_encoding);
    }
    if (decoded_length >= 0) {
        apr_table_unset(r->headers_in, "Transfer-Encoding");
        apr_table_setn(r->headers_in, "Content-Length", apr_off_t_toa(r->pool, decoded_length));
    } else if (had_length && apr_table_get(r->headers_in, "Transfer-Encoding") == nullptr) {
        apr_table_setn(r->headers_in, "Transfer-Encoding", "chunked");
    }
}

// The decoded body is kept under this key in r->pool, which an internal redirect's request
// shares (its filter chain is rebuilt, with a fresh DEFLATE filter that takes it over).
constexpr const char* kCtxKey = "multicompress-inflate-body";

// At most this much decoded body is read before the handler runs, to give it the decoded
// Content-Length; a longer body streams on with its length unknown.
constexpr apr_off_t kPrebufferMax = 1 << 20;

apr_status_t guarded_in(ap_filter_t* f, apr_bucket_brigade* bb, ap_input_mode_t mode,
                        apr_read_type_e block, apr_off_t readbytes) noexcept;

// The context for a request whose body we decode, or nullptr (no coding we decode, a
// subrequest, a Content-Range body: as mod_deflate). *rv is set when the decoder cannot start.
InflateCtx* start_in(ap_filter_t* f, apr_status_t* rv) {
    request_rec* r = f->r;
    *rv = APR_SUCCESS;
    if (r->main != nullptr || apr_table_get(r->headers_in, "Content-Range") != nullptr) {
        return nullptr;
    }
    const auto outer = outer_coding(r->pool, apr_table_get(r->headers_in, "Content-Encoding"));
    if (!outer) return nullptr;
    auto decoder = mc::make_decoder(outer->coding, limits_for(r, true));
    if (!decoder.is_ok()) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00021) "cannot start decoder: %s",
                      decoder.status().reason());
        *rv = APR_EGENERAL;
        return nullptr;
    }
    auto* ctx = pool_new<InflateCtx>(r->pool, apr_brigade_create(r->pool, f->c->bucket_alloc),
                                     apr_brigade_create(r->pool, f->c->bucket_alloc),
                                     std::move(decoder).value());
    ctx->rest_encoding = outer->rest;
    ctx->coding = outer->coding;
    f->ctx = ctx;
    apr_pool_userdata_setn(ctx, kCtxKey, nullptr, r->pool);
    return ctx;
}

// One read from the filters below, decoded into ctx->out (EOS included at the end). *empty:
// the read brought nothing (a non-blocking read that would block).
apr_status_t fill(ap_filter_t* f, InflateCtx* ctx, apr_read_type_e block, apr_off_t readbytes,
                  bool* empty) {
    request_rec* r = f->r;
    if (ctx->decoder == nullptr) return APR_EGENERAL;  // failed before: keep failing
    apr_status_t rv = ap_get_brigade(f->next, ctx->raw, AP_MODE_READBYTES, block, readbytes);
    if (rv != APR_SUCCESS) return rv;
    if (!ctx->headers_done) {
        // Only now: HTTP_IN below reads Content-Length on its first call to frame the body.
        // (Normally the handler hook below has done this before the handler started.)
        describe_decoded_body(r, ctx, -1);
        ctx->headers_done = true;
    }
    *empty = APR_BRIGADE_EMPTY(ctx->raw);
    if (*empty) return block == APR_NONBLOCK_READ ? APR_EAGAIN : APR_SUCCESS;
    while (!APR_BRIGADE_EMPTY(ctx->raw)) {
        apr_bucket* e = APR_BRIGADE_FIRST(ctx->raw);
        if (APR_BUCKET_IS_EOS(e)) {
            // No bytes at all is an empty body, as mod_deflate; else the last member or frame
            // must be complete.
            if (!ctx->decoder->finished() && ctx->decoder->total_in() > 0) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                              MC_LOGNO(00022) "request body: compressed data is truncated");
                count(mc::metrics::Event::kInflateBadRequest);
                apr_brigade_cleanup(ctx->raw);
                ctx->decoder.reset();
                return APR_EGENERAL;
            }
            ctx->sink.seal();
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->out, e);
            ctx->eos = true;
            count(mc::metrics::Event::kInflateBody);
            count(mc::metrics::Event::kInflateBytesIn, ctx->decoder->total_in());
            count(mc::metrics::Event::kInflateBytesOut, ctx->decoder->total_out());
            break;
        }
        if (!APR_BUCKET_IS_METADATA(e)) {
            rv = decode_bucket(r, ctx, e, "request body");
            if (rv != APR_SUCCESS) {
                apr_brigade_cleanup(ctx->raw);
                return rv;
            }
        }
        apr_bucket_delete(e);
    }
    ctx->sink.seal();
    apr_brigade_cleanup(ctx->raw);
    return APR_SUCCESS;
}

apr_status_t inflate_in(ap_filter_t* f, apr_bucket_brigade* bb, ap_input_mode_t mode,
                        apr_read_type_e block, apr_off_t readbytes) {
    auto* ctx = static_cast<InflateCtx*>(f->ctx);
    if (mode != AP_MODE_READBYTES) return ap_get_brigade(f->next, bb, mode, block, readbytes);
    if (ctx == nullptr) {
        void* kept = nullptr;
        apr_pool_userdata_get(&kept, kCtxKey, f->r->pool);
        if (kept != nullptr && f->r->main == nullptr) {
            // An internal redirect: the first request's filter decoded (part of) the body.
            ctx = static_cast<InflateCtx*>(kept);
            f->ctx = ctx;
        } else {
            apr_status_t rv = APR_SUCCESS;
            ctx = start_in(f, &rv);
            if (rv != APR_SUCCESS) return rv;
            if (ctx == nullptr) {
                if (refused_in_filter(f, &rv)) return rv;  // 415
                ap_remove_input_filter(f);
                return ap_get_brigade(f->next, bb, mode, block, readbytes);
            }
        }
    }

    while (APR_BRIGADE_EMPTY(ctx->out) && !ctx->eos) {
        bool empty = false;
        const apr_status_t rv = fill(f, ctx, block, readbytes, &empty);
        if (rv != APR_SUCCESS || empty) return rv;
    }

    if (APR_BRIGADE_EMPTY(ctx->out)) {
        // After the end (e.g. ap_discard_request_body once the handler read everything): EOS
        // again, as HTTP_IN does; an empty brigade would make the caller read forever.
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
        return APR_SUCCESS;
    }
    // Hand on at most `readbytes` of what is decoded.
    apr_bucket* split = nullptr;
    const apr_status_t rv = apr_brigade_partition(ctx->out, readbytes, &split);
    if (rv == APR_INCOMPLETE) {
        APR_BRIGADE_CONCAT(bb, ctx->out);
    } else if (rv == APR_SUCCESS) {
        apr_bucket_brigade* rest = apr_brigade_split_ex(ctx->out, split, nullptr);
        APR_BRIGADE_CONCAT(bb, ctx->out);
        APR_BRIGADE_CONCAT(ctx->out, rest);
        apr_brigade_destroy(rest);
    } else {
        return rv;
    }
    return APR_SUCCESS;
}

// Before any handler: a CGI's environment and mod_proxy_http's request headers are made from
// r->headers_in when the handler starts, before it reads the body through the input filters.
// So the body is decoded here first, up to kPrebufferMax, and the headers are made to describe
// the decoded body (its length when it all fit). A bad body gets httpd's own 400 or 413 from
// here, before the handler ran.
int prebuffer_body(request_rec* r) {
    if (r->main != nullptr) return DECLINED;
    void* kept = nullptr;
    apr_pool_userdata_get(&kept, kCtxKey, r->pool);
    if (kept != nullptr) return DECLINED;  // decoding already (an internal redirect, a module)
    ap_filter_t* f = r->input_filters;
    while (f != nullptr && f != r->proto_input_filters &&
           f->frec->filter_func.in_func != guarded_in) {
        f = f->next;
    }
    if (f == nullptr || f == r->proto_input_filters || f->ctx != nullptr) return DECLINED;
    if (!ap_request_has_body(r)) return DECLINED;
    if (const int refused = refuse_unsupported_coding(f); refused != DECLINED) return refused;
    apr_status_t rv = APR_SUCCESS;
    InflateCtx* ctx = start_in(f, &rv);
    if (ctx == nullptr) return rv == APR_SUCCESS ? DECLINED : HTTP_INTERNAL_SERVER_ERROR;
    while (!ctx->eos && static_cast<apr_off_t>(ctx->decoder->total_out()) < kPrebufferMax) {
        bool empty = false;
        rv = fill(f, ctx, APR_BLOCK_READ, static_cast<apr_off_t>(kInflateChunk), &empty);
        if (rv != APR_SUCCESS) {
            // Our own errors were logged (MC00020, MC00022); HTTP_IN's too (AP_FILTER_ERROR:
            // it has sent its error response already).
            return ap_map_http_request_error(rv, HTTP_BAD_REQUEST);
        }
        if (empty) break;  // not seen from HTTP_IN on a blocking read; the handler reads on
    }
    const auto decoded = static_cast<apr_off_t>(ctx->decoder->total_out());
    describe_decoded_body(r, ctx, ctx->eos ? decoded : -1);
    ctx->headers_done = true;
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  MC_LOGNO(00160) "request body: %s%" APR_OFF_T_FMT
                                  " bytes decoded before the handler, from %" APR_UINT64_T_FMT,
                  ctx->eos ? "" : "first ", decoded,
                  static_cast<apr_uint64_t>(ctx->decoder->total_in()));
    return DECLINED;
}

apr_status_t guarded_in(ap_filter_t* f, apr_bucket_brigade* bb, ap_input_mode_t mode,
                        apr_read_type_e block, apr_off_t readbytes) noexcept {
    try {
        return inflate_in(f, bb, mode, block, readbytes);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00024) "input filter failed");
    }
    return APR_EGENERAL;
}

}  // namespace

int prebuffer_request_body(request_rec* r) noexcept {
    try {
        return prebuffer_body(r);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00161) "request body: failed");
    }
    return HTTP_INTERNAL_SERVER_ERROR;
}

void register_inflate_input_filter() {
    ap_register_input_filter("DEFLATE", guarded_in, nullptr, AP_FTYPE_CONTENT_SET);
}

}  // namespace mc::httpd
