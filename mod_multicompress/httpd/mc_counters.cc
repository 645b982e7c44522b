// SPDX-License-Identifier: Apache-2.0
// Shared counters: an anonymous shared mapping made once per server, blocks claimed per child.
#include "mc_counters.h"

#include <ap_mpm.h>
#include <apr_shm.h>
#include <apr_strings.h>
#include <http_log.h>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <type_traits>

#include "mc_log.h"
#include "mc_request_state.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

constexpr const char* kUserdataKey = "mc::httpd::counters";
constexpr std::uint64_t kMagic = 0x4d43434e54310001ULL;  // "MCCNT1", layout version 1
constexpr std::size_t kMaxLanes = 8;

// Each word is written with a relaxed atomic add and read with a relaxed load: counts are
// monotonic totals, no other memory is published through them.
struct SegmentHeader {
    std::uint64_t magic;
    std::uint32_t blocks;
    std::uint32_t lanes;
    std::uint32_t words;
    std::uint32_t block_words;  ///< words per block, owner word and padding included
};
// A block: word 0 is the owning pid, word 1 the child's dictionary memory and word 2 the bytes
// its tier of verified cache entries holds (gauges the child sets), words 8.. are
// lanes x metrics::kWords counters.
constexpr std::size_t kBlockHeadWords = 8;  // one cache line
constexpr std::size_t kDictionaryMemoryWord = 1;
constexpr std::size_t kCacheLocalWord = 2;
static_assert(kCacheLocalWord < kBlockHeadWords, "the gauges live in the block's head");

struct Segment {
    SegmentHeader* header = nullptr;
    std::uint64_t* blocks = nullptr;
};

// Set in post_config (single-threaded) and read-only afterwards; the mapping itself lives in
// the process pool and survives graceful restarts.
Segment g_segment;
// This child's block, claimed in child_init; read-only afterwards.
std::uint64_t* g_block = nullptr;
std::atomic<unsigned> g_next_lane{0};

std::uint64_t load(const std::uint64_t& w) {
    return std::atomic_ref<const std::uint64_t>(w).load(std::memory_order_relaxed);
}

std::uint64_t* block_at(const Segment& seg, std::size_t i) {
    return seg.blocks + i * seg.header->block_words;
}

bool process_gone(std::int64_t pid) {
    return pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

int mpm_limit(int query, int fallback) {
    int v = 0;
    return ap_mpm_query(query, &v) == APR_SUCCESS && v > 0 ? v : fallback;
}

apr_status_t make_segment(server_rec* s, Segment& out) {
    // Every child a scoreboard can hold, twice over for a graceful restart's overlap of
    // generations; more children than that share the last block (still exact: atomic adds).
    const auto daemons = static_cast<std::uint32_t>(mpm_limit(AP_MPMQ_HARD_LIMIT_DAEMONS, 16));
    const auto threads = static_cast<std::uint32_t>(mpm_limit(AP_MPMQ_HARD_LIMIT_THREADS, 1));
    const std::uint32_t blocks = std::clamp<std::uint32_t>(2 * daemons, 2, 65536);
    const std::uint32_t lanes = std::clamp<std::uint32_t>(threads, 1, kMaxLanes);
    const std::size_t counters = std::size_t{lanes} * metrics::kWords;
    const auto block_words =
        static_cast<std::uint32_t>(kBlockHeadWords + (counters + 7) / 8 * 8);  // cache lines
    const std::size_t bytes =
        sizeof(SegmentHeader) + 64 + std::size_t{blocks} * block_words * sizeof(std::uint64_t);
    apr_shm_t* shm = nullptr;
    // Anonymous: no file to clean up, inherited by every child.
    const apr_status_t rv = apr_shm_create(&shm, bytes, nullptr, s->process->pool);
    if (rv != APR_SUCCESS) return rv;
    auto* base = static_cast<char*>(apr_shm_baseaddr_get(shm));
    std::memset(base, 0, bytes);
    out.header = reinterpret_cast<SegmentHeader*>(base);
    *out.header = SegmentHeader{kMagic, blocks, lanes, static_cast<std::uint32_t>(metrics::kWords),
                                block_words};
    out.blocks = reinterpret_cast<std::uint64_t*>(base + 64);
    return APR_SUCCESS;
}

}  // namespace

int counters_post_config(apr_pool_t* /*pconf*/, apr_pool_t* /*plog*/, apr_pool_t* /*ptemp*/,
                         server_rec* s) noexcept {
    try {
        void* data = nullptr;
        apr_pool_userdata_get(&data, kUserdataKey, s->process->pool);
        const auto* kept = static_cast<const Segment*>(data);
        // A graceful restart into a module whose counter layout differs starts new counts.
        if (kept == nullptr || kept->header == nullptr || kept->header->magic != kMagic ||
            kept->header->words != metrics::kWords) {
            auto* seg = static_cast<Segment*>(apr_pcalloc(s->process->pool, sizeof(Segment)));
            if (const apr_status_t rv = make_segment(s, *seg); rv != APR_SUCCESS) {
                // Counters are an observation aid: the server runs without them.
                ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                             MC_LOGNO(00200) "cannot create the shared counters; "
                             "/server-status and multicompress-metrics will show zeros");
                return OK;
            }
            apr_pool_userdata_set(seg, kUserdataKey, apr_pool_cleanup_null, s->process->pool);
            data = seg;
        }
        g_segment = *static_cast<const Segment*>(data);
    } catch (...) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, MC_LOGNO(00201) "counters: post_config failed");
    }
    return OK;
}

void counters_child_init(apr_pool_t* /*pchild*/, server_rec* /*s*/) noexcept {
    if (g_segment.header == nullptr) return;
    const std::int64_t me = getpid();
    const std::uint32_t n = g_segment.header->blocks;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::atomic_ref<std::uint64_t> owner(block_at(g_segment, i)[0]);
        auto seen = owner.load(std::memory_order_relaxed);
        const auto pid = static_cast<std::int64_t>(seen);
        if (seen != 0 && !process_gone(pid)) continue;
        if (owner.compare_exchange_strong(seen, static_cast<std::uint64_t>(me))) {
            g_block = block_at(g_segment, i);
            // The gauges were the exited child's: this one holds nothing yet.
            std::atomic_ref<std::uint64_t>(g_block[kDictionaryMemoryWord]).store(0);
            std::atomic_ref<std::uint64_t>(g_block[kCacheLocalWord]).store(0);
            return;
        }
    }
    g_block = block_at(g_segment, n - 1);  // all taken: share the last one
}

void count(std::size_t word, std::uint64_t n) noexcept {
    if (g_block == nullptr || word >= metrics::kWords || n == 0) return;
    thread_local const unsigned lane =
        g_next_lane.fetch_add(1, std::memory_order_relaxed) % g_segment.header->lanes;
    std::uint64_t* w = g_block + kBlockHeadWords + std::size_t{lane} * metrics::kWords + word;
    std::atomic_ref<std::uint64_t>(*w).fetch_add(n, std::memory_order_relaxed);
}

namespace {

void set_gauge(std::size_t word, std::uint64_t value) noexcept {
    if (g_block == nullptr) return;
    std::atomic_ref<std::uint64_t>(g_block[word]).store(value, std::memory_order_relaxed);
}

// A gauge word of the head summed over the blocks of running children.
std::uint64_t gauge_sum(std::size_t word) noexcept {
    std::uint64_t sum = 0;
    if (g_segment.header == nullptr) return sum;
    for (std::uint32_t b = 0; b < g_segment.header->blocks; ++b) {
        const std::uint64_t* block = block_at(g_segment, b);
        const auto owner = static_cast<std::int64_t>(load(block[0]));
        if (owner != 0 && !process_gone(owner)) sum += load(block[word]);
    }
    return sum;
}

}  // namespace

void set_dictionary_memory(std::uint64_t bytes) noexcept {
    set_gauge(kDictionaryMemoryWord, bytes);
}

std::uint64_t dictionary_memory() noexcept {
    return gauge_sum(kDictionaryMemoryWord);
}

void set_cache_local_bytes(std::uint64_t bytes) noexcept {
    set_gauge(kCacheLocalWord, bytes);
}

std::uint64_t cache_local_bytes() noexcept {
    return gauge_sum(kCacheLocalWord);
}

std::uint64_t counters_cpu_ns() noexcept {
    std::uint64_t sum = 0;
    if (g_segment.header == nullptr) return sum;
    const SegmentHeader& h = *g_segment.header;
    for (std::uint32_t b = 0; b < h.blocks; ++b) {
        const std::uint64_t* lanes = block_at(g_segment, b) + kBlockHeadWords;
        for (std::uint32_t l = 0; l < h.lanes; ++l) {
            for (std::size_t c = 0; c < kCodingCount; ++c) {
                sum += load(lanes[std::size_t{l} * metrics::kWords +
                                  metrics::cpu_ns_word(static_cast<Coding>(c))]);
            }
        }
    }
    return sum;
}

metrics::Totals counters_total() noexcept {
    metrics::Totals t{};
    if (g_segment.header == nullptr) return t;
    const SegmentHeader& h = *g_segment.header;
    for (std::uint32_t b = 0; b < h.blocks; ++b) {
        const std::uint64_t* lanes = block_at(g_segment, b) + kBlockHeadWords;
        for (std::uint32_t l = 0; l < h.lanes; ++l) {
            for (std::size_t w = 0; w < metrics::kWords; ++w) {
                t[w] += load(lanes[std::size_t{l} * metrics::kWords + w]);
            }
        }
    }
    return t;
}

namespace {

// The facts of an internal redirect chain (ErrorDocument, mod_rewrite's [PT] to a handler...):
// the last request's, else those of the one before it. log_transaction gets the chain's first
// request (the EOR bucket's), as mod_log_config does, and the filters the last.
const metrics::ResponseFacts* facts_of(const request_rec* r) {
    const request_rec* last = r;
    while (last->next != nullptr) last = last->next;
    for (const request_rec* rr = last; rr != nullptr; rr = rr->prev) {
        const RequestState* st = request_state(rr);
        if (st != nullptr && st->facts != nullptr) return st->facts;
    }
    return nullptr;
}

}  // namespace

void set_response_facts(request_rec* r, const metrics::ResponseFacts& facts) {
    RequestState* st = request_state(r, true);
    if (st->facts != nullptr) {
        *st->facts = facts;
        return;
    }
    static_assert(std::is_trivially_destructible_v<metrics::ResponseFacts>);  // no pool cleanup
    st->facts =
        new (apr_palloc(r->pool, sizeof(metrics::ResponseFacts))) metrics::ResponseFacts(facts);
}

bool has_response_facts(const request_rec* r) {
    return facts_of(r) != nullptr;
}

int count_response(request_rec* r) noexcept {
    if (r->main != nullptr) return DECLINED;
    const metrics::ResponseFacts* f = facts_of(r);
    if (f == nullptr) return DECLINED;
    count(metrics::response_word(f->coding, f->source));
    if (f->coding == Coding::kIdentity) {
        count(metrics::why_word(f->why));
    } else {
        count(metrics::bytes_in_word(f->coding), f->bytes_in);
        count(metrics::bytes_out_word(f->coding), f->bytes_out);
        if (f->source == metrics::Source::kLive) {
            count(metrics::live_bytes_in_word(f->coding), f->bytes_in);
            count(metrics::live_bytes_out_word(f->coding), f->bytes_out);
            count(metrics::cpu_ns_word(f->coding), f->cpu_ns);
        }
    }
    return DECLINED;
}

std::uint64_t thread_cpu_ns() noexcept {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace mc::httpd
