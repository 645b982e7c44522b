// SPDX-License-Identifier: Apache-2.0
// The brigade filter: decide once on the first call (mc::decide), then stream through one
// mc::Encoder with one bounded output buffer (the mod_deflate skeleton), or hand a whole body to
// the one-shot path (mc_whole_body.h).
#include "mc_filter.h"

#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>

#include <memory>
#include <string>

#include "mc/alloc.h"
#include "mc/encoder.h"
#include "mc/oneshot.h"
#include "mc/policy.h"
#include "mc_bucket_sink.h"
#include "mc_cache.h"
#include "mc_budget.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_brigade.h"
#include "mc_dictionary_lookup.h"
#include "mc_digest.h"
#include "mc_filter_names.h"
#include "mc_harness.h"
#include "mc_log.h"
#include "mc_lookahead.h"
#include "mc_not_modified.h"
#include "mc_pool.h"
#include "mc_request_state.h"
#include "mc_response.h"
#include "mc_saving.h"
#include "mc_shared.h"
#include "mc_whole_body.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

struct FilterCtx {
    FilterCtx(apr_bucket_brigade* out_bb, std::size_t chunk, std::unique_ptr<mc::Encoder> enc)
        : bb(out_bb), sink(out_bb, chunk), encoder(std::move(enc)), chunk_size(chunk) {}

    apr_bucket_brigade* bb;  ///< compressed output waiting to be passed
    BucketSink sink;
    /// dcz: the dictionary params.dictionary points to, held for as long as the response runs
    /// (declared before the encoder, which refers to it, so that it outlives it).
    std::shared_ptr<const mc::PreparedDictionary> dictionary;
    std::unique_ptr<mc::Encoder> encoder;  ///< null on the one-shot path
    std::size_t chunk_size;
    mc::EncoderParams params;  ///< the coding and level of the decision
    /// The body is known whole (up to kWholeBodyLimit): output is held until EOS and the
    /// response gets a Content-Length. With `encoder` null it is compressed in one call.
    bool hold_until_eos = false;
    bool unflushed = false;     ///< data went into the encoder since the last flush
    bool eos_seen = false;      ///< EOS passed on: later data is dropped
    bool stream_ended = false;  ///< the encoder wrote its end of stream
    /// A flush went into the encoder before the end: the output's size then says as much about
    /// the flushes as about the body, so it is not remembered as the body's saving.
    bool flushed = false;
    /// An error bucket came from upstream (a broken backend): the body is cut off, so the
    /// compressed stream is never ended as if it were whole (no end, no length, no cache entry).
    bool broken = false;
    mc::MemString cache_copy;  ///< the compressed body, for the cache (RequestState::fills_cache)
    GateSlot gate;             ///< held while a large whole body is compressed
    std::uint64_t cpu_ns = 0;  ///< thread CPU time spent in the library, for the counters
};

// HEAD of a body streamed from a pipe or socket (CGI, proxy): a GET's compressed size depends
// on where that source stalls (flush_for_stall), so the HEAD response must not state one
// (RFC 9110 8.6: only the length a GET would send). Passing anything down before EOS keeps
// httpd's content-length filter from adding it; the headers then go out, and the rest of a HEAD
// body is discarded downstream, so it passes on uncompressed. Returns true when it removed the
// filter and passed `bb` on (the caller then returns *rv).
bool passed_head_of_stream(ap_filter_t* f, apr_bucket_brigade* bb, const apr_bucket* e,
                           apr_status_t* rv) {
    if (!f->r->header_only || e->length != static_cast<apr_size_t>(-1)) return false;
    apr_bucket_brigade* flush = apr_brigade_create(f->r->pool, f->c->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(flush, apr_bucket_flush_create(f->c->bucket_alloc));
    ap_remove_output_filter(f);
    *rv = ap_pass_brigade(f->next, flush);
    if (*rv == APR_SUCCESS) *rv = ap_pass_brigade(f->next, bb);
    return true;
}

apr_status_t pass_through(ap_filter_t* f, apr_bucket_brigade* bb) {
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

// One module's Ratio/Input/Output notes. mod_deflate writes "-" for a zero input or output,
// mod_brotli the number; both write the ratio as a whole percentage, "-" with no input.
void set_size_notes(request_rec* r, const mc::Config& cfg, mc::NoteOwner owner, apr_off_t in,
                    apr_off_t out) {
    const bool dash_for_zero = owner == mc::NoteOwner::kDeflate;
    const auto size = [&](apr_off_t n) {
        return n == 0 && dash_for_zero ? "-" : apr_off_t_toa(r->pool, n);
    };
    if (const char* n = cfg.note(owner, mc::NoteKind::kInput))
        apr_table_setn(r->notes, n, size(in));
    if (const char* n = cfg.note(owner, mc::NoteKind::kOutput)) {
        apr_table_setn(r->notes, n, size(out));
    }
    if (const char* n = cfg.note(owner, mc::NoteKind::kRatio)) {
        apr_table_setn(r->notes, n,
                       in > 0 ? apr_itoa(r->pool, static_cast<int>(out * 100 / in)) : "-");
    }
}

// MultiCompressNote for every coding; DeflateFilterNote only for what mod_deflate would have
// compressed (gzip, and our deflate), BrotliFilterNote only for br, as mod_brotli.
// What a live response adds to the counters (mc_counters.h), once its body is compressed.
void set_live_facts(request_rec* r, const FilterCtx* ctx, std::uint64_t in, std::uint64_t out) {
    mc::metrics::ResponseFacts facts;
    facts.coding = ctx->params.coding;
    facts.source = mc::metrics::Source::kLive;
    facts.bytes_in = in;
    facts.bytes_out = out;
    facts.cpu_ns = ctx->cpu_ns;
    set_response_facts(r, facts);
    if (!ctx->flushed) remember_saving(r, ctx->params.coding, in, out);
}

void set_notes(request_rec* r, const mc::Config& cfg, mc::Coding coding, apr_off_t in,
               apr_off_t out) {
    set_size_notes(r, cfg, mc::NoteOwner::kMultiCompress, in, out);
    if (coding == mc::Coding::kGzip || coding == mc::Coding::kDeflate) {
        set_size_notes(r, cfg, mc::NoteOwner::kDeflate, in, out);
    } else if (coding == mc::Coding::kBrotli) {
        set_size_notes(r, cfg, mc::NoteOwner::kBrotli, in, out);
    }
    if (const char* n = cfg.note(mc::NoteKind::kEncoding)) {
        apr_table_setn(r->notes, n, apr_pstrdup(r->pool, mc::coding_token(coding).data()));
    }
}

// Passes the compressed output collected so far (plus any metadata queued behind it).
apr_status_t pass_out(ap_filter_t* f, FilterCtx* ctx) {
    ctx->sink.seal();
    ctx->sink.reset_pending();
    const apr_status_t rv = ap_pass_brigade(f->next, ctx->bb);
    apr_brigade_cleanup(ctx->bb);
    return rv;
}

apr_status_t encode(request_rec* r, FilterCtx* ctx, std::span<const std::byte> data,
                    mc::Flush flush) {
    const std::uint64_t t0 = thread_cpu_ns();
    const mc::Status st = ctx->encoder->write(data, flush, ctx->sink);
    ctx->cpu_ns += thread_cpu_ns() - t0;
    if (!st.is_ok()) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00002) "%s compression failed: %s",
                      mc::coding_token(ctx->encoder->coding()).data(), st.reason());
        return APR_EGENERAL;
    }
    ctx->unflushed = flush == mc::Flush::kNone && (ctx->unflushed || !data.empty());
    ctx->flushed = ctx->flushed || flush == mc::Flush::kSync;
    return APR_SUCCESS;
}

// A stall in the input (a CGI or backend with nothing more yet): flush what is compressed so far
// so the client sees it now, then wait.
apr_status_t flush_for_stall(ap_filter_t* f, FilterCtx* ctx) {
    if (!ctx->unflushed || ctx->hold_until_eos) return APR_SUCCESS;
    if (apr_status_t rv = encode(f->r, ctx, {}, mc::Flush::kSync); rv != APR_SUCCESS) return rv;
    ctx->sink.seal();
    APR_BRIGADE_INSERT_TAIL(ctx->bb, apr_bucket_flush_create(f->c->bucket_alloc));
    return pass_out(f, ctx);
}

// First call: decide, set headers, build the context. Returns nullptr when the response goes out
// unchanged (the filter has then removed itself).
FilterCtx* start(ap_filter_t* f, apr_bucket_brigade* bb, mc::CodingSet own) {
    request_rec* r = f->r;
    const mc::Config& cfg = dir_config(r);
    const mc::CodingSet codings = absorb_sibling_filters(f, own);
    const std::string encoding = content_encoding_of(r);
    // A 304, or a HEAD whose handler sent no body, says nothing about the length of the body a
    // GET would get: use Content-Length then.
    const bool body_less = APR_BUCKET_IS_EOS(APR_BRIGADE_FIRST(bb)) &&
                           (r->header_only || r->status == HTTP_NOT_MODIFIED);
    bool plain = false;
    const apr_off_t whole = body_less ? -1 : whole_body_length(bb, plain);
    mc::ResponseView view = view_of(r, encoding, whole);

    if (r->status == HTTP_NOT_MODIFIED) {
        not_modified_headers(f, codings);
        return nullptr;
    }

    // The one decision for this response, from its final headers (see RequestState).
    add_late_no_transform(f, cfg, view);
    mc::Decision d = mc::decide(view, cfg, codings, budget_step(cfg));
    check_saving(r, bb, cfg, d);  // MultiCompressMinSaving
    RequestState* st = request_state(r, true);
    st->decide_once(d);
    if (d.vary) merge_vary(r);
    if (d.coding == mc::Coding::kIdentity) {
        // Its own validator too (a no-op for a sidecar or cache hit, whose ETag is done).
        alter_etag(r, mc::Coding::kIdentity, cfg.etag_value());
        // A sidecar or cache hit passes through here already encoded: keep its source.
        if (apr_table_get(r->subprocess_env, "MULTICOMPRESS_SOURCE") == nullptr) {
            set_source(r, cfg, "identity");
        }
        if (!has_response_facts(r)) {
            mc::metrics::ResponseFacts facts;
            facts.why = d.why;
            set_response_facts(r, facts);
        }
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not compressing (%s)", d.reason);
        return nullptr;
    }

    if (body_less) {
        // HEAD gets the headers GET would get; httpd drops the "Content-Length: 0" it would
        // otherwise add to a HEAD response.
        set_compressed_headers(r, d.coding, cfg);
        mc::metrics::ResponseFacts facts;
        facts.coding = d.coding;
        facts.source = mc::metrics::Source::kLive;
        set_response_facts(r, facts);
        return nullptr;
    }

    mc::EncoderParams params = cfg.params_for(d.coding, view.body_length);
    params.level = mc::budget_level(d.coding, params.level, d.budget);
    params.exact_size = whole >= 0;
    std::shared_ptr<const mc::PreparedDictionary> dictionary;
    if (d.coding == mc::Coding::kDcz) {
        if (st->dictionary) dictionary = prepared_dictionary(st->dictionary, params.level);
        if (!dictionary) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                          MC_LOGNO(00273) "cannot prepare the dictionary for dcz");
            set_response_facts(r, mc::metrics::ResponseFacts{});  // identity, why: other
            return nullptr;
        }
        params.dictionary = dictionary.get();
    }
    const bool one_shot =
        plain && whole <= kWholeBodyLimit && mc::OneShotCompressor::suits(cfg, params);
    std::unique_ptr<mc::Encoder> encoder;
    if (!one_shot) {
        auto made = mc::make_encoder(params);
        if (!made.is_ok()) {
            // Nothing passed yet: fall back to the uncompressed response, as mod_deflate does.
            ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                          MC_LOGNO(00001) "cannot start %s encoder: %s",
                          mc::coding_token(d.coding).data(), made.status().reason());
            set_response_facts(r, mc::metrics::ResponseFacts{});  // identity, why: other
            return nullptr;
        }
        encoder = std::move(made).value();
    }
    if (whole >= 0 && whole <= kWholeBodyLimit) keep_digests_of_body(r, bb);
    set_compressed_headers(r, d.coding, cfg);
    set_source(r, cfg, "live");
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "compressing with %s (%s; %s)",
                  mc::coding_token(d.coding).data(), d.reason,
                  one_shot ? "one call" : (whole >= 0 ? "encoder, whole body" : "streamed"));
    apr_bucket_brigade* out = apr_brigade_create(r->pool, f->c->bucket_alloc);
    auto* ctx = pool_new<FilterCtx>(r->pool, out, static_cast<std::size_t>(cfg.buffer_size_value()),
                                    std::move(encoder));
    ctx->hold_until_eos = whole >= 0 && whole <= kWholeBodyLimit;
    ctx->params = params;
    ctx->dictionary = std::move(dictionary);
    if (d.coding == mc::Coding::kDcz) count(mc::metrics::Event::kDictionaryUsed);
    // The handler saw the file's response; a filter added since could still change the body.
    if (st->fills_cache() && chain_keeps_body(r)) {
        ctx->sink.copy_to(&ctx->cache_copy, static_cast<std::size_t>(cfg.cache_max_entry_value()));
    }
    // The whole body in this brigade, no FLUSH: it is compressed to the end in this call, and
    // compress_whole() or finish() gives the slot back before passing anything on.
    if (plain && ctx->hold_until_eos) ctx->gate.acquire_for(whole);
    return ctx;
}

void store_in_cache(request_rec* r, int level, std::string_view body) {
    const RequestState* st = request_state(r, false);
    cache_store(r, st->plan.cache_key, st->plan.coding, level, body);
}

// The whole body is in `bb`: compress it in one call (mc_whole_body.h) and pass it with its
// Content-Length.
apr_status_t compress_whole(ap_filter_t* f, FilterCtx* ctx, apr_bucket_brigade* bb) {
    request_rec* r = f->r;
    WholeBody out;
    if (apr_status_t rv = compress_body(r, ctx->params, bb, ctx->gate, ctx->cpu_ns, out);
        rv != APR_SUCCESS) {
        return rv;
    }
    set_notes(r, dir_config(r), ctx->params.coding, static_cast<apr_off_t>(out.in_size),
              static_cast<apr_off_t>(out.size));
    set_live_facts(r, ctx, out.in_size, out.size);
    ap_set_content_length(r, static_cast<apr_off_t>(out.size));
    put_digests(r, std::string_view(out.data, out.size));
    if (ctx->sink.copying() &&
        static_cast<std::int64_t>(out.size) <= dir_config(r).cache_max_entry_value()) {
        store_in_cache(r, ctx->params.level, {out.data, out.size});
    }
    ctx->eos_seen = true;
    APR_BRIGADE_INSERT_TAIL(ctx->bb, out.bucket);
    flush_if_small(ctx->bb, out.size);
    apr_bucket* eos = APR_BRIGADE_LAST(bb);
    APR_BUCKET_REMOVE(eos);
    APR_BRIGADE_INSERT_TAIL(ctx->bb, eos);
    apr_brigade_cleanup(bb);
    return pass_out(f, ctx);
}

apr_status_t finish(ap_filter_t* f, FilterCtx* ctx, apr_bucket* eos) {
    request_rec* r = f->r;
    if (!ctx->stream_ended && !ctx->broken) {
        if (apr_status_t rv = encode(r, ctx, {}, mc::Flush::kFinish); rv != APR_SUCCESS) return rv;
    }
    set_notes(r, dir_config(r), ctx->params.coding,
              static_cast<apr_off_t>(ctx->encoder->bytes_in()),
              static_cast<apr_off_t>(ctx->encoder->bytes_out()));
    set_live_facts(r, ctx, ctx->encoder->bytes_in(), ctx->encoder->bytes_out());
    if (ctx->hold_until_eos && !ctx->broken)
        ap_set_content_length(r, static_cast<apr_off_t>(ctx->encoder->bytes_out()));
    ctx->encoder.reset();  // free the library state now, not at the end of the request
    ctx->gate.release();
    ctx->eos_seen = true;
    ctx->sink.seal();
    if (ctx->hold_until_eos && !ctx->broken) put_digests(r, ctx->bb);
    if (ctx->sink.copying() && !ctx->broken) {
        store_in_cache(r, ctx->params.level, {ctx->cache_copy.data(), ctx->cache_copy.size()});
        mc::MemString().swap(ctx->cache_copy);
    }
    APR_BUCKET_REMOVE(eos);
    APR_BRIGADE_INSERT_TAIL(ctx->bb, eos);
    return pass_out(f, ctx);
}

apr_status_t run(ap_filter_t* f, apr_bucket_brigade* bb, mc::CodingSet own) {
    request_rec* r = f->r;
    auto* ctx = static_cast<FilterCtx*>(f->ctx);
    if (ctx == nullptr) {
        if (APR_BRIGADE_EMPTY(bb)) return APR_SUCCESS;
        // Subrequests (SSI includes, ...) become part of the main response, which is compressed
        // once as a whole; a sidecar or cache hit is sent encoded, its headers set (mc_static.cc).
        if (r->main != nullptr || sent_encoded(r)) return pass_through(f, bb);
        ctx = start(f, bb, own);
        if (ctx == nullptr) return pass_through(f, bb);
        f->ctx = ctx;
        if (!ctx->encoder) return compress_whole(f, ctx, bb);
    }
    if (ctx->eos_seen || (r->header_only && r->bytes_sent != 0)) {
        // After EOS, data is dropped as the core does. For HEAD, once headers went out the rest
        // of the body is discarded downstream anyway: stop compressing it (as mod_deflate).
        if (!ctx->eos_seen) {
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        apr_brigade_cleanup(bb);
        return APR_SUCCESS;
    }

    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket* e = APR_BRIGADE_FIRST(bb);
        if (APR_BUCKET_IS_EOS(e)) {
            const apr_status_t rv = finish(f, ctx, e);
            apr_brigade_cleanup(bb);
            return rv;
        }
        if (APR_BUCKET_IS_FLUSH(e)) {
            if (apr_status_t rv = encode(r, ctx, {}, mc::Flush::kSync); rv != APR_SUCCESS)
                return rv;
            ctx->sink.seal();
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->bb, e);
            if (apr_status_t rv = pass_out(f, ctx); rv != APR_SUCCESS) return rv;
            continue;
        }
        if (APR_BUCKET_IS_METADATA(e)) {
            if (AP_BUCKET_IS_ERROR(e)) ctx->broken = true;
            ctx->sink.seal();  // keep metadata in order with the data around it
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->bb, e);
            continue;
        }

        apr_status_t rv = APR_SUCCESS;
        if (passed_head_of_stream(f, bb, e, &rv)) return rv;
        if (ctx->hold_until_eos && is_large_file(e)) {
            const bool last = ends_body(bb, e);
            // Copied in pieces, not mapped; nothing is passed on meanwhile (held until EOS), and
            // large whole bodies are compressed a few at a time (the gate).
            rv = read_file_in_pieces(r, e, [&](std::span<const std::byte> in, bool end) {
                return encode(r, ctx, in, last && end ? mc::Flush::kFinish : mc::Flush::kNone);
            });
            if (rv != APR_SUCCESS) return rv;
            ctx->stream_ended = last;
            apr_bucket_delete(e);
            continue;
        }
        const char* data = nullptr;
        apr_size_t len = 0;
        rv = read_or_flush(e, &data, &len, [&] { return flush_for_stall(f, ctx); });
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                          MC_LOGNO(00003) "reading the response failed");
            return rv;
        }
        if (len > 0) {
            const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), len);
            // The last data before EOS finishes the stream in the same call: libraries then
            // compress in one pass (zstd skips its input buffer) instead of a second, empty call.
            // (After the read: reading a pipe or socket bucket inserts the rest behind it.)
            const bool last = ends_body(bb, e);
            if ((rv = encode(r, ctx, in, last ? mc::Flush::kFinish : mc::Flush::kNone)) !=
                APR_SUCCESS) {
                return rv;
            }
            ctx->stream_ended = last;
        }
        apr_bucket_delete(e);
        if (!ctx->hold_until_eos && ctx->sink.pending() >= ctx->chunk_size) {
            if ((rv = pass_out(f, ctx)) != APR_SUCCESS) return rv;
        }
    }
    return APR_SUCCESS;
}

// The engine of every filter name (mc_filter_names.cc); exceptions never cross into httpd.
apr_status_t guarded_run(ap_filter_t* f, apr_bucket_brigade* bb, mc::CodingSet own) noexcept {
    try {
        return run(f, bb, own);
    } catch (const std::exception& ex) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00004) "filter failed: %s",
                      ex.what());
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00005) "filter failed");
    }
    return APR_EGENERAL;
}

}  // namespace

void register_output_filters() {
    register_compress_filters(guarded_run);
}

}  // namespace mc::httpd
