// SPDX-License-Identifier: Apache-2.0
// The MULTICOMPRESS_TRANSCODE filter: decodes a response in a coding the client lacks, within
// the request-body inflate limits; a corrupt body ends the response as a broken backend does.
#include "mc_transcode.h"

#include <apr_strings.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>

#include <memory>
#include <string>

#include "mc/decoder.h"
#include "mc/transcode.h"
#include "mc_bucket_sink.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_inflate.h"
#include "mc_log.h"
#include "mc_pool.h"
#include "mc_response.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// The decoder is given at most this much encoded input per call, so the output one call makes
// (bounded by the inflate ratio) is passed on before the next: memory stays bounded.
constexpr std::size_t kSlice = 8 * 1024;
// Nothing is passed on (the headers can still be left as they are) until this much input has
// decoded, this much output is held, a FLUSH or the end: a body that is not in its declared
// coding usually fails here, and then gets a 502 instead of a cut-off 200.
constexpr std::uint64_t kProbeIn = 16 * 1024;
constexpr std::size_t kProbeOut = 64 * 1024;

ap_filter_rec_t* g_filter = nullptr;

struct TranscodeCtx {
    TranscodeCtx(apr_bucket_brigade* out_bb, std::size_t chunk_size, std::unique_ptr<mc::Decoder> d,
                 mc::Coding c)
        : out(out_bb),
          sink(out_bb, chunk_size),
          decoder(std::move(d)),
          from(c),
          chunk(chunk_size) {}
    apr_bucket_brigade* out;  ///< decoded output not yet passed on
    BucketSink sink;
    std::unique_ptr<mc::Decoder> decoder;
    mc::Coding from;
    std::size_t chunk;
    bool probing = true;          ///< nothing passed on yet
    bool done = false;            ///< EOS passed on, or the response ended as broken
    bool upstream_broke = false;  ///< an error bucket came from the handler (mod_proxy's 502)
};

mc::ResponseView view_for(request_rec* r, const std::string& content_encoding) {
    mc::ResponseView v;
    v.status = r->status;
    v.content_encoding = content_encoding;
    v.has_content_range = apr_table_get(r->headers_out, "Content-Range") != nullptr ||
                          apr_table_get(r->err_headers_out, "Content-Range") != nullptr;
    const char* rcc = apr_table_get(r->headers_in, "Cache-Control");
    v.request_cache_control = rcc != nullptr ? rcc : "";
    const char* scc = response_fields(r, "Cache-Control");
    v.response_cache_control = scc != nullptr ? scc : "";
    const char* ae = apr_table_get(r->headers_in, "Accept-Encoding");
    v.accept_encoding_present = ae != nullptr;
    v.accept_encoding = ae != nullptr ? ae : "";
    return v;
}

// The headers of the decoded response: no coding, no length or digests of the encoded bytes
// (Unencoded-Digest stays: it describes these bytes), no byte ranges of them, and a weak ETag
// (the same content, other bytes: as nginx's gunzip filter does).
void decoded_headers(request_rec* r) {
    for (const char* h : {"Content-Encoding", "Content-Length", "Content-MD5", "Content-Digest",
                          "Repr-Digest", "Accept-Ranges"}) {
        apr_table_unset(r->headers_out, h);
        apr_table_unset(r->err_headers_out, h);
    }
    r->content_encoding = nullptr;
    const char* etag = apr_table_get(r->headers_out, "ETag");
    if (etag != nullptr && etag[0] == '"') {
        apr_table_setn(r->headers_out, "ETag", apr_pstrcat(r->pool, "W/", etag, nullptr));
    }
}

apr_status_t pass_out(ap_filter_t* f, TranscodeCtx* ctx) {
    ctx->sink.seal();
    ctx->sink.reset_pending();
    const apr_status_t rv = ap_pass_brigade(f->next, ctx->out);
    apr_brigade_cleanup(ctx->out);
    return rv;
}

void end_probe(ap_filter_t* f, TranscodeCtx* ctx) {
    if (!ctx->probing) return;
    ctx->probing = false;
    decoded_headers(f->r);
    count(mc::metrics::Event::kTranscodeDecoded);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, f->r,
                  "decoding the %s response for a client that does not accept it",
                  mc::coding_token(ctx->from).data());
}

// The body is not what its Content-Encoding says: end the response as mod_proxy ends one whose
// backend broke (ap_proxy_backend_broke): a 502 error bucket and EOS. Before anything went out
// httpd then answers 502; after, the response is cut off without its end (no last chunk, the
// connection closed, and the compressing filter does not finish its stream), so the client
// never takes it for whole. What the failing call decoded is dropped.
apr_status_t broken(ap_filter_t* f, TranscodeCtx* ctx, const char* why) {
    request_rec* r = f->r;
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                  MC_LOGNO(00320) "the %s response is corrupt (%s) after %" APR_UINT64_T_FMT
                                  " encoded bytes: ending it as broken",
                  mc::coding_token(ctx->from).data(), why,
                  static_cast<apr_uint64_t>(ctx->decoder->total_in()));
    count(mc::metrics::Event::kTranscodeCorrupt);
    ctx->done = true;
    ctx->decoder.reset();
    ctx->sink.seal();
    apr_brigade_cleanup(ctx->out);
    r->no_cache = 1;
    r->connection->keepalive = AP_CONN_CLOSE;
    APR_BRIGADE_INSERT_TAIL(
        ctx->out, ap_bucket_error_create(HTTP_BAD_GATEWAY, nullptr, r->pool, f->c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(ctx->out, apr_bucket_eos_create(f->c->bucket_alloc));
    const apr_status_t rv = ap_pass_brigade(f->next, ctx->out);
    apr_brigade_cleanup(ctx->out);
    return rv != APR_SUCCESS ? rv : APR_EGENERAL;
}

apr_status_t decode_bucket(ap_filter_t* f, TranscodeCtx* ctx, apr_bucket* e) {
    const char* data = nullptr;
    apr_size_t len = 0;
    apr_status_t rv = apr_bucket_read(e, &data, &len, APR_NONBLOCK_READ);
    if (rv == APR_EAGAIN) {
        // The handler has nothing more yet (a CGI): let the client have what is decoded.
        if (!ctx->probing) {
            ctx->sink.seal();
            APR_BRIGADE_INSERT_TAIL(ctx->out, apr_bucket_flush_create(f->c->bucket_alloc));
            if ((rv = pass_out(f, ctx)) != APR_SUCCESS) return rv;
        }
        rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
    }
    if (rv != APR_SUCCESS) return rv;
    for (apr_size_t at = 0; at < len; at += kSlice) {
        const apr_size_t n = len - at < kSlice ? len - at : kSlice;
        const mc::Status st =
            ctx->decoder->write({reinterpret_cast<const std::byte*>(data + at), n}, ctx->sink);
        if (st.code() == mc::Code::kWindowTooLarge) {
            return broken(f, ctx,
                          "its window is larger than MultiCompressInflateWindow, which raises it");
        }
        if (!st.is_ok()) return broken(f, ctx, st.reason());
        if (ctx->probing) {
            if (ctx->decoder->total_in() < kProbeIn && ctx->sink.pending() < kProbeOut) continue;
            end_probe(f, ctx);
        } else if (ctx->sink.pending() < ctx->chunk) {
            continue;
        }
        if ((rv = pass_out(f, ctx)) != APR_SUCCESS) return rv;
    }
    return APR_SUCCESS;
}

apr_status_t run(ap_filter_t* f, apr_bucket_brigade* bb) {
    auto* ctx = static_cast<TranscodeCtx*>(f->ctx);
    if (ctx != nullptr && ctx->done) {
        apr_brigade_cleanup(bb);
        return APR_SUCCESS;
    }
    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket* e = APR_BRIGADE_FIRST(bb);
        if (APR_BUCKET_IS_EOS(e)) {
            // An empty body is an empty body in any coding (as for request bodies).
            if (!ctx->upstream_broke && !ctx->decoder->finished() && ctx->decoder->total_in() > 0) {
                apr_brigade_cleanup(bb);
                return broken(f, ctx, "the encoded data is truncated");
            }
            end_probe(f, ctx);
            ctx->sink.seal();
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->out, e);
            ctx->done = true;
            ctx->decoder.reset();
            apr_brigade_cleanup(bb);
            return pass_out(f, ctx);
        }
        if (APR_BUCKET_IS_METADATA(e)) {
            if (AP_BUCKET_IS_ERROR(e)) ctx->upstream_broke = true;
            const bool flush = APR_BUCKET_IS_FLUSH(e);
            if (flush) end_probe(f, ctx);
            ctx->sink.seal();  // in order with the data around it
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->out, e);
            if (flush) {
                if (apr_status_t rv = pass_out(f, ctx); rv != APR_SUCCESS) return rv;
            }
            continue;
        }
        if (apr_status_t rv = decode_bucket(f, ctx, e); rv != APR_SUCCESS) {
            apr_brigade_cleanup(bb);
            return rv;
        }
        apr_bucket_delete(e);
    }
    return APR_SUCCESS;
}

// First call: whether to decode, and the context. False: the filter has stepped aside.
bool start(ap_filter_t* f, apr_bucket_brigade* bb) {
    request_rec* r = f->r;
    if (r->main != nullptr) return false;
    const std::string ce = content_encoding_of(r);
    if (ce.empty()) return false;
    const mc::Config& cfg = dir_config(r);
    const mc::TranscodeVerdict v = mc::transcode_verdict(view_for(r, ce), cfg);
    if (v.varies) merge_vary(r);
    if (!v.decode) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not decoding the %s response (%s)",
                      ce.c_str(), v.reason);
        return false;
    }
    if (r->header_only) {
        // HEAD: the headers GET would get; the encoded body (if any) is not sent anyway.
        decoded_headers(r);
        for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);) {
            apr_bucket* const next = APR_BUCKET_NEXT(e);
            if (!APR_BUCKET_IS_METADATA(e)) apr_bucket_delete(e);
            e = next;
        }
        return false;
    }
    // The request bodies' limits (ratio, and any window cap), without their size limit: a
    // response may be as long as it is.
    mc::InflateLimits limits = limits_for(r, true);
    limits.max_output = 0;
    auto decoder = mc::make_decoder(v.from, limits);
    if (!decoder.is_ok()) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      MC_LOGNO(00321) "cannot start a %s decoder (sending the response as it is):"
                                      " %s",
                      mc::coding_token(v.from).data(), decoder.status().reason());
        return false;
    }
    f->ctx = pool_new<TranscodeCtx>(r->pool, apr_brigade_create(r->pool, f->c->bucket_alloc),
                                    static_cast<std::size_t>(cfg.buffer_size_value()),
                                    std::move(decoder).value(), v.from);
    return true;
}

apr_status_t guarded(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    try {
        if (f->ctx == nullptr) {
            if (APR_BRIGADE_EMPTY(bb)) return APR_SUCCESS;
            if (!start(f, bb)) {
                ap_remove_output_filter(f);
                return ap_pass_brigade(f->next, bb);
            }
        }
        return run(f, bb);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r,
                      MC_LOGNO(00322) "MULTICOMPRESS_TRANSCODE filter failed");
    }
    return APR_EGENERAL;
}

}  // namespace

void register_transcode_filter() {
    // Before the dictionary learning filter (AP_FTYPE_CONTENT_SET - 1) and every compressing
    // filter (AP_FTYPE_CONTENT_SET): they see the decoded body.
    g_filter = ap_register_output_filter("MULTICOMPRESS_TRANSCODE", guarded, nullptr,
                                         static_cast<ap_filter_type>(AP_FTYPE_CONTENT_SET - 2));
}

void insert_transcode_filter(request_rec* r) noexcept {
    try {
        if (r->main == nullptr && dir_config(r).transcode_on()) {
            ap_add_output_filter_handle(g_filter, nullptr, r, r->connection);
        }
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00323) "insert_filter failed");
    }
}

}  // namespace mc::httpd
