// SPDX-License-Identifier: Apache-2.0
// mem_alloc: large blocks mapped on their own, small ones from malloc (see mc/alloc.h).
#include "mc/alloc.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <utility>

namespace mc {
namespace {

// Every block starts with this header, so mem_free needs no size and tells the kinds apart; a
// mapped block has a second one just before its payload (kPlaced: see payload_offset).
struct alignas(16) Header {
    std::size_t length;  ///< bytes mapped (kMapped), requested (kMalloc) or before it (kPlaced)
    std::uint64_t kind;
};
static_assert(sizeof(Header) == 16);

constexpr std::uint64_t kMalloc = 0x6d632d6d616c6c63;  // "mc-mallc"
constexpr std::uint64_t kMapped = 0x6d632d6d6d617070;  // "mc-mmapp"
constexpr std::uint64_t kPlaced = 0x6d632d706c616365;  // "mc-place": before a mapped payload

// Where a mapped block's payload starts in its first page: one of 56 cache lines from 448 bytes on,
// chosen by the size asked for (a hash of it, so a block taken back from the cache for the same
// array keeps its place). A copy whose destination is a little ahead of its source modulo 4 KiB
// makes every load wait for the store before it (the CPU first compares only an address's low 12
// bits): with every payload 16 bytes into its page, a 266 KB body paid it twice, in the kernel's
// copy of each piece from the page cache (page-aligned) into the module's block (171 against 33 us
// per response placed as here) and in brotli's copy of that piece into its ring buffer, 18 bytes
// into another such page (216 against 39 us): its br-4 cost 9 to 14 % more CPU
// (bench/results/br4-stylesheet.md). From 448 bytes on, a payload is at least that far ahead of a
// page-aligned source, and blocks of different sizes (a library's input buffer, ring buffer, hash
// table) start at different places.
constexpr std::size_t kLine = 64;
constexpr std::size_t kPlaces = 56;
constexpr std::size_t kFirstPlace = 7 * kLine;

std::size_t payload_offset(std::size_t n) noexcept {
    const std::uint64_t mixed = static_cast<std::uint64_t>(n / 16) * 0x9e3779b97f4a7c15ULL;
    return kFirstPlace + static_cast<std::size_t>((mixed >> 58) % kPlaces) * kLine;
}

std::atomic<std::size_t> g_mapped{0};
std::atomic<std::uint64_t> g_allocations{0};

std::size_t page_size() noexcept {
    static const std::size_t size = [] {
        const long n = sysconf(_SC_PAGESIZE);
        return n > 0 ? static_cast<std::size_t>(n) : std::size_t{4096};
    }();
    return size;
}

// Freed mapped blocks kept for the next body: mapping fresh memory for every response costs a
// page fault per page written and a munmap (a TLB shootdown across the threads) at the end, three
// times the compression time of a small body. Bounded in count, size and total, and emptied by
// mem_trim (the idle trim). Sized for two large bodies compressed at once (the gate lets a child
// of a 2-core machine compress two at a time): a br-4 compression of a 1 MB script holds 10.8 MB
// in nine blocks, the largest 4 MiB of payload (which its header puts one page over 4 MiB); the
// bench's 1 MB row paid a thousand page faults per response while that block was not kept. And
// for brotli's ring buffer at its default window (22), which every streamed body (a CGI, a proxy,
// length unknown) of more than one write gets: 2^23 + 2^16 + 9 bytes; a 30 KB CGI response in
// 8 KiB writes cost 691 us with it mapped fresh every time, 246 us with it kept.
constexpr std::size_t kCacheSlots = 64;
constexpr std::size_t kCacheBytes = 32 * 1024 * 1024;
constexpr std::size_t kCacheBlockMax = 9 * 1024 * 1024;  // payload; the block is a page more

// Kept in the order they were freed, each with the CPU that freed it: a body takes a block its
// own CPU wrote last where one fits, the most recent first, so the brotli hash table it clears
// (512 KiB at br-4) is likely still in that CPU's cache rather than in the other's.
struct BlockCache {
    std::mutex mu;
    std::array<Header*, kCacheSlots> blocks{};
    std::array<int, kCacheSlots> cpus{};
    std::size_t count = 0;
    std::size_t bytes = 0;
};

int current_cpu() noexcept {
#if defined(__GLIBC__)
    return sched_getcpu();
#else
    return -1;
#endif
}

BlockCache& block_cache() {
    static auto* cache = new BlockCache;  // never destroyed: blocks may be freed at exit
    return *cache;
}

// A cached block of `length` to 1.5 x `length` bytes, or nullptr: the smallest; among those,
// one freed on this CPU; then the most recently freed.
Header* cache_take(std::size_t length) noexcept {
    const int cpu = current_cpu();
    BlockCache& c = block_cache();
    const std::lock_guard<std::mutex> lock(c.mu);
    std::size_t best = kCacheSlots;
    for (std::size_t i = c.count; i-- > 0;) {
        const std::size_t have = c.blocks[i]->length;
        if (have < length || have > length + length / 2) continue;
        if (best == kCacheSlots || have < c.blocks[best]->length ||
            (have == c.blocks[best]->length && c.cpus[best] != cpu && c.cpus[i] == cpu)) {
            best = i;
        }
    }
    if (best == kCacheSlots) return nullptr;
    Header* h = c.blocks[best];
    for (std::size_t i = best + 1; i < c.count; ++i) {  // keep the order of the others
        c.blocks[i - 1] = c.blocks[i];
        c.cpus[i - 1] = c.cpus[i];
    }
    --c.count;
    c.bytes -= h->length;
    return h;
}

// Keeps `h`, making room by unmapping the blocks freed longest ago: the cache follows what the
// child compresses now. Without that, blocks of an earlier workload (a 1 MB script at br-4, a page
// at zstd-19) filled it for good and every block of today's smaller bodies was mapped fresh and
// unmapped again: a br-4 response of a 160 KB stylesheet took 8 to 32 page faults and 1.2 to 1.6x
// its CPU after such a warm-up, against 0.5 faults on a fresh child.
bool cache_put(Header* h) noexcept {
    if (h->length > kCacheBlockMax + page_size()) return false;
    const int cpu = current_cpu();
    std::array<Header*, kCacheSlots> evicted{};  // the oldest `drop`, unmapped after the lock
    std::size_t drop = 0;
    {
        BlockCache& c = block_cache();
        const std::lock_guard<std::mutex> lock(c.mu);
        std::size_t bytes = c.bytes;
        while (drop < c.count &&
               (c.count - drop == kCacheSlots || bytes + h->length > kCacheBytes)) {
            bytes -= c.blocks[drop]->length;
            evicted[drop] = c.blocks[drop];
            ++drop;
        }
        for (std::size_t i = drop; i < c.count; ++i) {  // keep the order of the others
            c.blocks[i - drop] = c.blocks[i];
            c.cpus[i - drop] = c.cpus[i];
        }
        c.count -= drop;
        c.bytes = bytes;
        c.cpus[c.count] = cpu;
        c.blocks[c.count++] = h;
        c.bytes += h->length;
    }
    for (std::size_t i = 0; i < drop; ++i) munmap(evicted[i], evicted[i]->length);
    return true;
}

// In a build with AddressSanitizer a freed mapped block is never reused: its pages are given back
// and the range is left mapped without access, so a read or write after mem_free faults at once
// (ASan reports the fault with its stack when started with allow_user_segv_handler=0; see
// tests/soak/asan_run.sh) instead of landing in the next body's block unseen. ASan itself does
// not watch memory mapped here. The oldest ranges are unmapped past kQuarantineBytes.
constexpr std::size_t kQuarantineBytes = std::size_t{1} << 30;
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kQuarantine = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kQuarantine = true;
#else
constexpr bool kQuarantine = false;
#endif
#else
constexpr bool kQuarantine = false;
#endif

struct Quarantine {
    std::mutex mu;
    std::deque<std::pair<void*, std::size_t>> ranges;  // the headers are unreadable
    std::size_t bytes = 0;
};

Quarantine& quarantine() {
    static auto* q = new Quarantine;  // never destroyed, as the cache
    return *q;
}

void quarantine_put(Header* h, std::size_t length) noexcept {
    Quarantine* q = &quarantine();
    madvise(h, length, MADV_DONTNEED);
    mprotect(h, length, PROT_NONE);
    const std::lock_guard<std::mutex> lock(q->mu);
    try {
        q->ranges.emplace_back(h, length);
    } catch (...) {
        munmap(h, length);
        return;
    }
    q->bytes += length;
    while (q->bytes > kQuarantineBytes) {
        const auto [p, n] = q->ranges.front();
        munmap(p, n);
        q->bytes -= n;
        q->ranges.pop_front();
    }
}

void cache_drop_all() noexcept {
    std::array<Header*, kCacheSlots> drop{};
    std::size_t n = 0;
    {
        BlockCache& c = block_cache();
        const std::lock_guard<std::mutex> lock(c.mu);
        drop = c.blocks;
        n = c.count;
        c.count = 0;
        c.bytes = 0;
    }
    for (std::size_t i = 0; i < n; ++i) munmap(drop[i], drop[i]->length);
}

}  // namespace

bool mem_quarantined() noexcept {
    return kQuarantine;
}

std::size_t mem_cached_bytes() noexcept {
    BlockCache& c = block_cache();
    const std::lock_guard<std::mutex> lock(c.mu);
    return c.bytes;
}

void* mem_alloc(std::size_t n) noexcept {
    if (n > SIZE_MAX / 2) return nullptr;
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (n < kMapThreshold) {
        auto* h = static_cast<Header*>(std::malloc(n + sizeof(Header)));
        if (h == nullptr) return nullptr;
        h->length = n;
        h->kind = kMalloc;
        return h + 1;
    }
    // The block's own Header at its start (its length, for the cache), and one just before the
    // payload that says how far back the block starts.
    const std::size_t page = page_size();
    const std::size_t offset = payload_offset(n);
    const std::size_t length = (n + offset + page - 1) / page * page;
    Header* h = cache_take(length);
    if (h == nullptr) {
        void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        h = static_cast<Header*>(p);
        h->length = length;
    }
    h->kind = kMapped;
    g_mapped.fetch_add(h->length, std::memory_order_relaxed);
    Header* placed = reinterpret_cast<Header*>(reinterpret_cast<char*>(h) + offset) - 1;
    placed->length = offset;
    placed->kind = kPlaced;
    return placed + 1;
}

void mem_free(void* p) noexcept {
    if (p == nullptr) return;
    Header* h = static_cast<Header*>(p) - 1;
    if (h->kind == kPlaced) {
        h->kind = 0;
        h = reinterpret_cast<Header*>(static_cast<char*>(p) - h->length);
    }
    if (h->kind == kMapped) {
        const std::size_t length = h->length;
        h->kind = 0;
        g_mapped.fetch_sub(length, std::memory_order_relaxed);
        if (kQuarantine) {
            quarantine_put(h, length);
        } else if (!cache_put(h)) {
            munmap(h, length);
        }
        return;
    }
    h->kind = 0;
    std::free(h);
}

void* mem_alloc_cb(void* /*opaque*/, std::size_t n) noexcept {
    return mem_alloc(n);
}

void* mem_zalloc_cb(void* /*opaque*/, unsigned int items, unsigned int size) noexcept {
    return mem_alloc(std::size_t{items} * std::size_t{size});
}

void mem_free_cb(void* /*opaque*/, void* p) noexcept {
    mem_free(p);
}

std::size_t mem_mapped_bytes() noexcept {
    return g_mapped.load(std::memory_order_relaxed);
}

std::uint64_t mem_allocations() noexcept {
    return g_allocations.load(std::memory_order_relaxed);
}

void mem_trim() noexcept {
    cache_drop_all();
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

IdleTrimmer::IdleTrimmer(std::chrono::milliseconds tick, std::function<void()> on_idle)
    : tick_(tick), on_idle_(std::move(on_idle)), thread_([this] { loop(); }) {}

IdleTrimmer::~IdleTrimmer() {
    {
        const std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

std::uint64_t IdleTrimmer::trims() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return trims_;
}

void IdleTrimmer::loop() {
    std::uint64_t trimmed_at = mem_allocations();
    std::uint64_t last = trimmed_at;
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, tick_, [this] { return stop_; })) {
        const std::uint64_t now = mem_allocations();
        const bool quiet = now == last;
        last = now;
        if (!quiet || now == trimmed_at) continue;
        trimmed_at = now;
        lock.unlock();
        on_idle_();
        lock.lock();
        ++trims_;
    }
}

}  // namespace mc
