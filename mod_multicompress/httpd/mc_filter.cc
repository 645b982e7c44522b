// SPDX-License-Identifier: Apache-2.0
// The brigade filter: decide once on the first call (mc::decide), then stream through one
// mc::Encoder with one bounded output buffer (the mod_deflate skeleton).
#include "mc_filter.h"

#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <ap_expr.h>

#include <cstring>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <new>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "mc/alloc.h"
#include "mc/encoder.h"
#include "mc/headers.h"
#include "mc/oneshot.h"
#include "mc/policy.h"
#include "mc_bucket_sink.h"
#include "mc_cache.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_log.h"
#include "mc_pool.h"
#include "mc_response.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// A body that arrives whole with EOS in the first brigade, up to this size, is compressed before
// anything is passed on, so the response can carry its compressed Content-Length.
constexpr apr_off_t kWholeBodyLimit = 4 * 1024 * 1024;

// Set once in register_hooks, read-only afterwards.
ap_filter_rec_t* g_not_modified_filter = nullptr;
ap_filter_rec_t* g_probe_sink = nullptr;

// A FILE bucket (the default handler's) is read by mapping the file (EnableMMAP): an mmap and a
// munmap per response, and the munmap's TLB shootdown interrupts the other cores. For a small
// file one read() is much cheaper (perf on a 2.5 KB page: munmap alone was 8% of the server's
// CPU), so files up to kReadNotMapBytes are read instead. A file read goes in pieces of
// APR_BUCKET_BUFF_SIZE (8000 bytes), so this stays at a few reads.
constexpr apr_size_t kReadNotMapBytes = 16 * 1024;

apr_status_t read_bucket(apr_bucket* e, const char** data, apr_size_t* len, apr_read_type_e block) {
    if (APR_BUCKET_IS_FILE(e) && e->length <= kReadNotMapBytes) apr_bucket_file_enable_mmap(e, 0);
    return apr_bucket_read(e, data, len, block);
}

// Whole bodies of at least kGateMinBytes are compressed by at most as many threads of a child at
// once as the machine has cores. Compressing them is CPU-bound, so more at once only adds
// memory: every one holds a window of up to 4 MiB and its hash tables (256 slow br-4 downloads
// of a 1.7 MB file held 2.2 GB at once without it, bench/). Smaller bodies never wait. A gated
// compression passes nothing on while it holds its slot (a whole body without FLUSH buckets),
// so no slot ever waits for a client.
constexpr apr_off_t kGateMinBytes = 256 * 1024;
constexpr std::ptrdiff_t kGateMaxSlots = 64;

class CompressionGate {
public:
    CompressionGate()
        : sem_(std::clamp<std::ptrdiff_t>(std::thread::hardware_concurrency(), 2, kGateMaxSlots)) {}
    void acquire() {
        if (sem_.try_acquire()) return;
        count(mc::metrics::Event::kGateWait);
        sem_.acquire();
    }
    void release() { sem_.release(); }

private:
    std::counting_semaphore<kGateMaxSlots> sem_;
};

// Created per child in filter_child_init, shared by its threads.
CompressionGate* g_gate = nullptr;

// A held slot of g_gate, given back by release() or at the latest when destroyed.
class GateSlot {
public:
    GateSlot() = default;
    GateSlot(const GateSlot&) = delete;
    GateSlot& operator=(const GateSlot&) = delete;
    ~GateSlot() { release(); }

    void acquire_for(apr_off_t body_bytes) {
        if (g_gate == nullptr || held_ || body_bytes < kGateMinBytes) return;
        g_gate->acquire();
        held_ = true;
    }
    void release() {
        if (!held_) return;
        g_gate->release();
        held_ = false;
    }

private:
    bool held_ = false;
};

struct FilterCtx {
    FilterCtx(apr_bucket_brigade* out_bb, std::size_t chunk, std::unique_ptr<mc::Encoder> enc)
        : bb(out_bb), sink(out_bb, chunk), encoder(std::move(enc)), chunk_size(chunk) {}

    apr_bucket_brigade* bb;  ///< compressed output waiting to be passed
    BucketSink sink;
    std::unique_ptr<mc::Encoder> encoder;
    std::size_t chunk_size;
    bool whole_body = false;   ///< hold output until EOS and set Content-Length
    bool unflushed = false;    ///< data went into the encoder since the last flush
    bool done = false;         ///< EOS seen
    bool finished = false;     ///< the encoder wrote its end of stream
    mc::MemString cache_copy;  ///< the compressed body, for the cache (see RequestState)
    int level = 0;
    mc::Coding coding = mc::Coding::kIdentity;
    mc::EncoderParams params;  ///< for the one-shot path
    bool one_shot = false;     ///< whole body in hand: compress it in one call, no encoder
    GateSlot gate;             ///< held while a large whole body is compressed
    std::uint64_t cpu_ns = 0;  ///< thread CPU time spent in the library, for the counters
};

// HEAD of a body streamed from a pipe or socket (CGI, proxy): a GET's compressed size depends
// on where that source stalls (flush_for_stall), so the HEAD response must not state one
// (RFC 9110 8.6: only the length a GET would send). Passing anything down before EOS keeps
// httpd's content-length filter from adding it; the headers then go out, and the rest of a HEAD
// body is discarded downstream, so it passes on uncompressed. Returns true when it did so.
bool head_of_stream(ap_filter_t* f, apr_bucket_brigade* bb, const apr_bucket* e, apr_status_t* rv) {
    if (!f->r->header_only || e->length != static_cast<apr_size_t>(-1)) return false;
    apr_bucket_brigade* flush = apr_brigade_create(f->r->pool, f->c->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(flush, apr_bucket_flush_create(f->c->bucket_alloc));
    ap_remove_output_filter(f);
    *rv = ap_pass_brigade(f->next, flush);
    if (*rv == APR_SUCCESS) *rv = ap_pass_brigade(f->next, bb);
    return true;
}

// ---- filter identity: which filter names offer which codings.

apr_status_t out_deflate(ap_filter_t* f, apr_bucket_brigade* bb) noexcept;
apr_status_t out_brotli(ap_filter_t* f, apr_bucket_brigade* bb) noexcept;
apr_status_t out_zstd(ap_filter_t* f, apr_bucket_brigade* bb) noexcept;
apr_status_t out_multi(ap_filter_t* f, apr_bucket_brigade* bb) noexcept;

// The codings a filter record offers, or an empty set if the filter is not ours.
mc::CodingSet codings_of(const ap_filter_rec_t* frec) {
    const ap_out_filter_func fn = frec->filter_func.out_func;
    if (fn == &out_deflate) return {mc::Coding::kGzip, mc::Coding::kDeflate};
    if (fn == &out_brotli) return {mc::Coding::kBrotli};
    if (fn == &out_zstd) return {mc::Coding::kZstd};
    if (fn == &out_multi) {
        return {mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli, mc::Coding::kZstd};
    }
    return {};
}

// mod_filter's provider record (AddOutputFilterByType and FilterProvider in httpd 2.4 attach
// filters through mod_filter's harness). It is private to mod_filter.c; this mirrors its 2.4
// layout, and we only act on a provider whose frec is one of our own filter records.
struct ModFilterProvider {
    ap_expr_info_t* expr;
    const char** types;
    ap_filter_rec_t* frec;
    ModFilterProvider* next;
};

// Whether mod_filter would dispatch `r` to provider `p` (its filter_lookup, done early).
bool provider_matches(request_rec* r, const ModFilterProvider* p) {
    if (p->expr != nullptr) {
        const char* err = nullptr;
        return ap_expr_exec(r, p->expr, &err) > 0 && err == nullptr;
    }
    if (p->types == nullptr || r->content_type == nullptr) return false;
    const std::size_t len = std::strcspn(r->content_type, "; \t");
    for (const char** type = p->types; *type != nullptr; ++type) {
        if (std::strncmp(*type, r->content_type, len) == 0 && (*type)[len] == '\0') return true;
    }
    return false;
}

// The codings a mod_filter harness record would dispatch to one of our filters for `r`.
mc::CodingSet codings_via_harness(request_rec* r, const ap_filter_rec_t* harness) {
    for (auto* p = reinterpret_cast<const ModFilterProvider*>(harness->providers); p != nullptr;
         p = p->next) {
        if (provider_matches(r, p)) return codings_of(p->frec);  // the first match wins
    }
    return {};
}

// Whether a harness has one of our filters among its providers (matching or not).
bool harness_has_ours(const ap_filter_rec_t* frec) {
    for (auto* p = reinterpret_cast<const ModFilterProvider*>(frec->providers); p != nullptr;
         p = p->next) {
        if (!codings_of(p->frec).empty()) return true;
    }
    return false;
}

// The codings that filter `g` would offer for `r`: ours directly, or through a mod_filter
// harness whose matching provider is ours. Empty if `g` would not compress.
mc::CodingSet codings_on(request_rec* r, const ap_filter_t* g) {
    const mc::CodingSet direct = codings_of(g->frec);
    if (!direct.empty()) return direct;
    // mod_filter's harness only dispatches 200 responses.
    if (g->frec->providers == nullptr || r->status != HTTP_OK) return {};
    return codings_via_harness(r, g->frec);
}

// Several of our filters on one response negotiate once from the union of their codings: the
// first one called takes the others' codings and removes them from the chain.
mc::CodingSet absorb_sibling_filters(ap_filter_t* f, mc::CodingSet own) {
    mc::CodingSet all = own;
    for (ap_filter_t* g = f->next; g != nullptr && g->r == f->r;) {
        ap_filter_t* const next = g->next;
        const mc::CodingSet theirs = codings_on(f->r, g);
        if (!theirs.empty()) {
            all = all | theirs;
            ap_remove_output_filter(g);
        }
        g = next;
    }
    return all;
}

// Length of the body if the brigade holds all of it (EOS present, every length known), else -1.
// `plain` tells whether it holds only data and the EOS (no FLUSH or other metadata).
apr_off_t whole_body_length(apr_bucket_brigade* bb, bool& plain) {
    plain = false;
    if (!APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb))) return -1;
    apr_off_t len = 0;
    bool only_data = true;
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (e->length == static_cast<apr_size_t>(-1)) return -1;  // a pipe or socket: streaming
        if (APR_BUCKET_IS_METADATA(e) && e != APR_BRIGADE_LAST(bb)) only_data = false;
        len += static_cast<apr_off_t>(e->length);
    }
    plain = only_data;
    return len;
}

// One-shot compressors shared by the threads of a child process: a thread takes one for a body
// and gives it back, so library state stays warm without one copy per thread (event MPM children
// run dozens of threads). At most kPoolSize are kept; more are made when needed and freed after.
class CompressorPool {
public:
    static constexpr std::size_t kPoolSize = 4;

    std::unique_ptr<mc::OneShotCompressor> take() {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            if (!free_.empty()) {
                auto c = std::move(free_.back());
                free_.pop_back();
                return c;
            }
        }
        return std::make_unique<mc::OneShotCompressor>();
    }

    void give_back(std::unique_ptr<mc::OneShotCompressor> c) {
        const std::lock_guard<std::mutex> lock(mu_);
        if (free_.size() < kPoolSize) free_.push_back(std::move(c));
    }

    /// Frees the kept compressors (idle trim); the next bodies make new ones.
    void clear() {
        std::vector<std::unique_ptr<mc::OneShotCompressor>> drop;
        {
            const std::lock_guard<std::mutex> lock(mu_);
            drop.swap(free_);
        }
    }

private:
    std::mutex mu_;
    std::vector<std::unique_ptr<mc::OneShotCompressor>> free_;
};

// Created per child in filter_child_init, read-only afterwards (the pool locks itself).
CompressorPool* g_compressors = nullptr;

// A child that was busy and then saw no compression for this long frees its pooled compressors
// and gives malloc's free memory back (mc::mem_trim): what a burst left in the arenas of the
// child's threads is returned when it goes quiet, not kept until the child exits.
constexpr std::chrono::milliseconds kIdleTrimTick{1000};

// The free function of heap buckets over mc::mem_alloc blocks.
void free_mapped(void* p) {
    mc::mem_free(p);
}

apr_status_t pass_through(ap_filter_t* f, apr_bucket_brigade* bb) {
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

// The end of the chain while probing (see no_transform_downstream): swallows what it gets.
apr_status_t out_probe_sink(ap_filter_t* /*f*/, apr_bucket_brigade* bb) noexcept {
    apr_brigade_cleanup(bb);
    return APR_SUCCESS;
}

// Whether a `Cache-Control: no-transform` will be in the response headers when the body
// leaves, though it is not there yet. mod_headers applies `Header set` and `Header always set`
// in its FIXUP_HEADERS_OUT filter, which its insert_filter hook (APR_HOOK_LAST) puts after ours:
// same filter type, added later (add_any_filter_handle appends after filters of the same type).
// So it runs only when we pass the first body on, after our decision. To know what it will do,
// run it now on copies of the header tables and an empty brigade, with the chain cut right
// behind it, then put the tables and the filter back: the real run still comes later, after
// our header changes, so `Header edit ETag ...` and `Header append Vary ...` see them as with
// mod_deflate. Returns true only for a no-transform that the probe shows.
bool no_transform_downstream(ap_filter_t* f) {
    request_rec* r = f->r;
    ap_filter_t* prev = f;
    for (ap_filter_t* g = f->next; g != nullptr && g->r == r && g->frec->ftype < AP_FTYPE_PROTOCOL;
         prev = g, g = g->next) {
        if (g->frec->name == nullptr || ap_cstr_casecmp(g->frec->name, "FIXUP_HEADERS_OUT") != 0 ||
            g->frec->filter_func.out_func == nullptr) {
            continue;
        }
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
        const bool found = has_token(r, "Cache-Control", "no-transform");
        r->headers_out = out;
        r->err_headers_out = err;
        ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, r, "mod_headers will %sset no-transform",
                      found ? "" : "not ");
        return found;
    }
    return false;
}

// The view, with a no-transform that a filter after ours will add (MultiCompressNoTransform
// Honor only; Ignore never looks).
void add_late_no_transform(ap_filter_t* f, const mc::Config& cfg, mc::ResponseView& view) {
    if (!cfg.honor_no_transform() ||
        mc::list_has_token(view.response_cache_control, "no-transform"))
        return;
    if (no_transform_downstream(f)) view.response_cache_control = "no-transform";
}

// A 304 carries the Vary and ETag that the 200 would (RFC 9110 §15.4.5): decide as if it were
// that 200, change only headers. Done once per request, whichever filter gets there first.
void not_modified_headers(ap_filter_t* f, mc::CodingSet codings) {
    request_rec* r = f->r;
    RequestState* st = request_state(r, true);
    if (st->not_modified_done) return;
    st->not_modified_done = true;
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
        !mc::etag_in_list(st->if_none_match, mc::alter_etag(etag, coding, cfg.etag_value())) &&
        mc::etag_in_list(st->if_none_match,
                         mc::alter_etag(etag, mc::Coding::kIdentity, cfg.etag_value()))) {
        coding = mc::Coding::kIdentity;
    }
    alter_etag(r, coding, cfg.etag_value());
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "304 Not Modified: headers as for %s",
                  mc::coding_token(coding).data());
}

// Whether the one-shot path may replace the streaming encoder for this body.
bool one_shot_suits(const mc::Config& cfg, const mc::EncoderParams& params) {
    if (!mc::OneShotCompressor::supports(params.coding)) return false;
    if (params.coding != mc::Coding::kGzip && params.coding != mc::Coding::kDeflate) return true;
    // libdeflate always uses a 32 KiB window and its own memory: a smaller MultiCompressWindow or
    // DeflateWindowSize, or a DeflateMemLevel, keeps zlib. Its levels 8 and 9 search much harder
    // than zlib's (bench/: gzip-9 0.9x mod_deflate), so those stay with zlib too.
    const int window = cfg.window_for(params.coding);
    return (window == 0 || window == 15) && cfg.mem_level < 0 && params.level <= 7;
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

    add_late_no_transform(f, cfg, view);
    const mc::Decision d = mc::decide(view, cfg, codings);
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
    params.exact_size = whole >= 0;
    const bool one_shot = plain && whole <= kWholeBodyLimit && one_shot_suits(cfg, params);
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
    set_compressed_headers(r, d.coding, cfg);
    set_source(r, cfg, "live");
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "compressing with %s (%s)",
                  mc::coding_token(d.coding).data(), d.reason);

    apr_bucket_brigade* out = apr_brigade_create(r->pool, f->c->bucket_alloc);
    auto* ctx = pool_new<FilterCtx>(r->pool, out, static_cast<std::size_t>(cfg.buffer_size_value()),
                                    std::move(encoder));
    ctx->whole_body = whole >= 0 && whole <= kWholeBodyLimit;
    ctx->level = params.level;
    ctx->coding = d.coding;
    ctx->params = params;
    ctx->one_shot = one_shot;
    if (const RequestState* st = request_state(r, false);
        st != nullptr && st->cache_key != nullptr && st->cache_coding == d.coding) {
        ctx->sink.copy_to(&ctx->cache_copy, static_cast<std::size_t>(cfg.cache_max_entry_value()));
    }
    // The whole body in this brigade, no FLUSH: it is compressed to the end in this call, and
    // compress_whole() or finish() gives the slot back before passing anything on.
    if (plain && ctx->whole_body) ctx->gate.acquire_for(whole);
    return ctx;
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
    facts.coding = ctx->coding;
    facts.source = mc::metrics::Source::kLive;
    facts.bytes_in = in;
    facts.bytes_out = out;
    facts.cpu_ns = ctx->cpu_ns;
    set_response_facts(r, facts);
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
    return APR_SUCCESS;
}

// A stall in the input (a CGI or backend with nothing more yet): flush what is compressed so far
// so the client sees it now, then wait.
apr_status_t flush_for_stall(ap_filter_t* f, FilterCtx* ctx) {
    if (!ctx->unflushed || ctx->whole_body) return APR_SUCCESS;
    if (apr_status_t rv = encode(f->r, ctx, {}, mc::Flush::kSync); rv != APR_SUCCESS) return rv;
    ctx->sink.seal();
    APR_BRIGADE_INSERT_TAIL(ctx->bb, apr_bucket_flush_create(f->c->bucket_alloc));
    return pass_out(f, ctx);
}

void store_in_cache(request_rec* r, int level, std::string_view body) {
    const RequestState* st = request_state(r, false);
    cache_store(r, st->cache_key, st->cache_coding, level, body);
}

// The whole body is in `bb` (data buckets and EOS): compress it in one call with the thread's
// reused compressor, straight into the memory of the bucket that carries it.
apr_status_t compress_whole(ap_filter_t* f, FilterCtx* ctx, apr_bucket_brigade* bb) {
    request_rec* r = f->r;
    std::span<const std::byte> input;
    std::size_t total = 0;
    int pieces = 0;
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (APR_BUCKET_IS_METADATA(e)) continue;
        const char* data = nullptr;
        apr_size_t len = 0;
        if (apr_status_t rv = read_bucket(e, &data, &len, APR_BLOCK_READ); rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                          MC_LOGNO(00009) "reading the response failed");
            return rv;
        }
        if (len == 0) continue;
        if (++pieces == 1) input = {reinterpret_cast<const std::byte*>(data), len};
        total += len;
    }
    // A body in several buckets is joined first, in a block mapped on its own (mc/alloc.h):
    // the buckets were read above, so reading them again only returns their memory.
    std::unique_ptr<void, void (*)(void*)> joined(nullptr, free_mapped);
    if (pieces > 1) {
        joined.reset(mc::mem_alloc(total));
        if (!joined) throw std::bad_alloc();
        auto* at = static_cast<char*>(joined.get());
        for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
             e = APR_BUCKET_NEXT(e)) {
            if (APR_BUCKET_IS_METADATA(e)) continue;
            const char* data = nullptr;
            apr_size_t len = 0;
            if (apr_status_t rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
                rv != APR_SUCCESS) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                              MC_LOGNO(00180) "reading the response failed");
                return rv;
            }
            if (len > total - static_cast<std::size_t>(at - static_cast<char*>(joined.get()))) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                              MC_LOGNO(00181) "response bucket grew between two reads");
                return APR_EGENERAL;
            }
            if (len > 0) std::memcpy(at, data, len);
            at += len;
        }
        input = {static_cast<const std::byte*>(joined.get()), total};
    }

    std::unique_ptr<mc::OneShotCompressor> compressor =
        g_compressors != nullptr ? g_compressors->take()
                                 : std::make_unique<mc::OneShotCompressor>();
    const std::size_t cap = mc::OneShotCompressor::bound(ctx->coding, input.size());
    // The output of a large body is mapped on its own (mc/alloc.h), not taken from malloc's
    // arenas through the connection's allocator.
    const bool mapped = cap >= mc::kMapThreshold;
    auto* out =
        static_cast<char*>(mapped ? mc::mem_alloc(cap) : apr_bucket_alloc(cap, f->c->bucket_alloc));
    if (out == nullptr) throw std::bad_alloc();
    const std::uint64_t t0 = thread_cpu_ns();
    const auto done =
        compressor->compress(ctx->params, input, {reinterpret_cast<std::byte*>(out), cap});
    ctx->cpu_ns += thread_cpu_ns() - t0;
    if (g_compressors != nullptr) g_compressors->give_back(std::move(compressor));
    ctx->gate.release();
    joined.reset();
    void (*free_out)(void*) = mapped ? free_mapped : apr_bucket_free;
    if (!done.is_ok()) {
        free_out(out);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00011) "%s compression failed: %s",
                      mc::coding_token(ctx->coding).data(), done.status().reason());
        return APR_EGENERAL;
    }
    const std::size_t n = done.value();
    set_notes(r, dir_config(r), ctx->coding, static_cast<apr_off_t>(input.size()),
              static_cast<apr_off_t>(n));
    set_live_facts(r, ctx, input.size(), n);
    ap_set_content_length(r, static_cast<apr_off_t>(n));
    if (ctx->sink.copying() &&
        static_cast<std::int64_t>(n) <= dir_config(r).cache_max_entry_value()) {
        store_in_cache(r, ctx->level, {out, n});
    }
    ctx->done = true;
    APR_BRIGADE_INSERT_TAIL(ctx->bb, apr_bucket_heap_create(out, n, free_out, f->c->bucket_alloc));
    apr_bucket* eos = APR_BRIGADE_LAST(bb);
    APR_BUCKET_REMOVE(eos);
    APR_BRIGADE_INSERT_TAIL(ctx->bb, eos);
    apr_brigade_cleanup(bb);
    return pass_out(f, ctx);
}

apr_status_t finish(ap_filter_t* f, FilterCtx* ctx, apr_bucket* eos) {
    request_rec* r = f->r;
    if (!ctx->finished) {
        if (apr_status_t rv = encode(r, ctx, {}, mc::Flush::kFinish); rv != APR_SUCCESS) return rv;
    }
    set_notes(r, dir_config(r), ctx->coding, static_cast<apr_off_t>(ctx->encoder->bytes_in()),
              static_cast<apr_off_t>(ctx->encoder->bytes_out()));
    set_live_facts(r, ctx, ctx->encoder->bytes_in(), ctx->encoder->bytes_out());
    if (ctx->whole_body)
        ap_set_content_length(r, static_cast<apr_off_t>(ctx->encoder->bytes_out()));
    ctx->encoder.reset();  // free the library state now, not at the end of the request
    ctx->gate.release();
    ctx->done = true;
    ctx->sink.seal();
    if (ctx->sink.copying()) {
        store_in_cache(r, ctx->level, {ctx->cache_copy.data(), ctx->cache_copy.size()});
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
        // once as a whole.
        if (r->main != nullptr) return pass_through(f, bb);
        ctx = start(f, bb, own);
        if (ctx == nullptr) return pass_through(f, bb);
        f->ctx = ctx;
        if (ctx->one_shot) return compress_whole(f, ctx, bb);
    }
    if (ctx->done || (r->header_only && r->bytes_sent != 0)) {
        // After EOS, data is dropped as the core does. For HEAD, once headers went out the rest
        // of the body is discarded downstream anyway: stop compressing it (as mod_deflate).
        if (!ctx->done) {
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
            ctx->sink.seal();  // keep metadata in order with the data around it
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->bb, e);
            continue;
        }

        apr_status_t rv = APR_SUCCESS;
        if (head_of_stream(f, bb, e, &rv)) return rv;
        const char* data = nullptr;
        apr_size_t len = 0;
        rv = read_bucket(e, &data, &len, APR_NONBLOCK_READ);
        if (rv == APR_EAGAIN) {
            if ((rv = flush_for_stall(f, ctx)) != APR_SUCCESS) return rv;
            rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
        }
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                          MC_LOGNO(00003) "reading the response failed");
            return rv;
        }
        if (len > 0) {
            const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), len);
            // The last data before EOS finishes the stream in the same call: libraries then
            // compress in one pass (zstd skips its input buffer) instead of a second, empty call.
            const apr_bucket* next = APR_BUCKET_NEXT(e);
            const bool last = next != APR_BRIGADE_SENTINEL(bb) && APR_BUCKET_IS_EOS(next);
            if ((rv = encode(r, ctx, in, last ? mc::Flush::kFinish : mc::Flush::kNone)) !=
                APR_SUCCESS) {
                return rv;
            }
            ctx->finished = last;
        }
        apr_bucket_delete(e);
        if (!ctx->whole_body && ctx->sink.pending() >= ctx->chunk_size) {
            if ((rv = pass_out(f, ctx)) != APR_SUCCESS) return rv;
        }
    }
    return APR_SUCCESS;
}

// One entry per filter name; exceptions never cross into httpd.
template <mc::CodingSet (*Own)()>
apr_status_t guarded_run(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    try {
        return run(f, bb, Own());
    } catch (const std::exception& ex) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00004) "filter failed: %s",
                      ex.what());
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00005) "filter failed");
    }
    return APR_EGENERAL;
}

// Every coding of ours that a harness could dispatch to, whatever the content type.
mc::CodingSet codings_in_harness(const ap_filter_rec_t* frec) {
    mc::CodingSet all;
    for (auto* p = reinterpret_cast<const ModFilterProvider*>(frec->providers); p != nullptr;
         p = p->next) {
        all = all | codings_of(p->frec);
    }
    return all;
}

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
                    possible = possible | codings_in_harness(st->harnesses[i]);
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

constexpr mc::CodingSet own_deflate() {
    return {mc::Coding::kGzip, mc::Coding::kDeflate};
}
constexpr mc::CodingSet own_brotli() {
    return {mc::Coding::kBrotli};
}
constexpr mc::CodingSet own_zstd() {
    return {mc::Coding::kZstd};
}
constexpr mc::CodingSet own_multi() {
    return {mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli, mc::Coding::kZstd};
}

apr_status_t out_deflate(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    return guarded_run<own_deflate>(f, bb);
}
apr_status_t out_brotli(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    return guarded_run<own_brotli>(f, bb);
}
apr_status_t out_zstd(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    return guarded_run<own_zstd>(f, bb);
}
apr_status_t out_multi(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    return guarded_run<own_multi>(f, bb);
}

}  // namespace

void filter_child_init(apr_pool_t* pchild, server_rec* s) noexcept {
    try {
        g_compressors = pool_new<CompressorPool>(pchild);
        g_gate = pool_new<CompressionGate>(pchild);
        // Destroyed (stopped and joined) before the pool above, registered earlier.
        pool_new<mc::IdleTrimmer>(pchild, kIdleTrimTick, [] {
            if (g_compressors != nullptr) g_compressors->clear();
            mc::mem_trim();
        });
    } catch (...) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     MC_LOGNO(00012) "cannot create the compressor pool");
    }
}

void register_output_filters() {
    ap_register_output_filter("DEFLATE", out_deflate, nullptr, AP_FTYPE_CONTENT_SET);
    ap_register_output_filter("BROTLI_COMPRESS", out_brotli, nullptr, AP_FTYPE_CONTENT_SET);
    ap_register_output_filter("ZSTD", out_zstd, nullptr, AP_FTYPE_CONTENT_SET);
    ap_register_output_filter("MULTICOMPRESS", out_multi, nullptr, AP_FTYPE_CONTENT_SET);
    // Internal: fixes up the headers of a 304 (see remember_filters).
    g_not_modified_filter = ap_register_output_filter("MULTICOMPRESS_304", out_not_modified,
                                                      nullptr, AP_FTYPE_CONTENT_SET);
    // Internal: never in a chain, only the end of one while probing (no_transform_downstream).
    g_probe_sink = ap_register_output_filter("MULTICOMPRESS_PROBE_SINK", out_probe_sink, nullptr,
                                             AP_FTYPE_CONTENT_SET);
}

namespace {

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
    const mc::Coding likely = mc::decide(view, cfg, possible).coding;
    const std::string rewritten =
        mc::rewrite_if_none_match(inm, mc::CodingSet{mc::Coding::kIdentity, likely});
    if (rewritten == inm) return;
    if (rewritten.empty()) {
        apr_table_unset(r->headers_in, "If-None-Match");
    } else {
        apr_table_set(r->headers_in, "If-None-Match", rewritten.c_str());
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "If-None-Match: '%s' -> '%s'", inm,
                  rewritten.c_str());
}

}  // namespace

void remember_filters(request_rec* r) noexcept {
    // The default handler sends its 304 through the chain, but mod_filter's harness (which runs
    // AddOutputFilterByType) passes non-200 responses by untouched. So remember which of our
    // codings are on this response (insert_filter runs after mod_filter and SetOutputFilter have
    // added theirs) and add a small filter that only fixes up a 304's headers.
    try {
        if (r->main != nullptr) return;
        mc::CodingSet on_response;
        std::array<const ap_filter_rec_t*, RequestState::kMaxHarnesses> harnesses{};
        std::size_t n_harnesses = 0;
        for (ap_filter_t* f = r->output_filters; f != nullptr; f = f->next) {
            if (f->r != r) continue;
            on_response = on_response | codings_on(r, f);
            // A handler may set the content type only later (CGI): keep the harnesses to
            // evaluate their providers when a 304 goes out.
            if (f->frec->providers != nullptr && n_harnesses < harnesses.size() &&
                harness_has_ours(f->frec)) {
                harnesses[n_harnesses++] = f->frec;
            }
        }
        if (on_response.empty() && n_harnesses == 0) return;
        RequestState* st = request_state(r, true);
        st->codings = on_response;
        st->harnesses = harnesses;
        st->n_harnesses = n_harnesses;
        ap_add_output_filter_handle(g_not_modified_filter, nullptr, r, r->connection);
        mc::CodingSet possible = on_response;
        for (std::size_t i = 0; i < n_harnesses; ++i) {
            possible = possible | codings_in_harness(harnesses[i]);
        }
        rewrite_if_none_match(r, st, possible);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00007) "insert_filter failed");
    }
}

void reinsert_for_304(request_rec* r) noexcept {
    // Error responses start over with the protocol filters only (ap_send_error_response).
    const RequestState* st = request_state(r, false);
    if (st == nullptr || r->status != HTTP_NOT_MODIFIED || r->main != nullptr) return;
    ap_add_output_filter_handle(g_not_modified_filter, nullptr, r, r->connection);
}

int strip_conditional_suffixes(request_rec* r) noexcept {
    // Only remembers the request's If-None-Match here (mod_cache's quick handler, which ran
    // before, may have put its stored validator there); remember_filters rewrites it once it
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
