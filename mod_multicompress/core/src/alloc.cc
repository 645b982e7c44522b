// SPDX-License-Identifier: Apache-2.0
// mem_alloc: large blocks mapped on their own, small ones from malloc (see mc/alloc.h).
#include "mc/alloc.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace mc {
namespace {

// Every block starts with this header, so mem_free needs no size and tells the kinds apart.
struct alignas(16) Header {
    std::size_t length;  ///< bytes mapped (kMapped) or requested (kMalloc)
    std::uint64_t kind;
};
static_assert(sizeof(Header) == 16);

constexpr std::uint64_t kMalloc = 0x6d632d6d616c6c63;  // "mc-mallc"
constexpr std::uint64_t kMapped = 0x6d632d6d6d617070;  // "mc-mmapp"

std::atomic<std::size_t> g_mapped{0};
std::atomic<std::uint64_t> g_allocations{0};

std::size_t page_size() noexcept {
    static const std::size_t size = [] {
        const long n = sysconf(_SC_PAGESIZE);
        return n > 0 ? static_cast<std::size_t>(n) : std::size_t{4096};
    }();
    return size;
}

}  // namespace

void* mem_alloc(std::size_t n) noexcept {
    if (n > SIZE_MAX / 2) return nullptr;
    const std::size_t total = n + sizeof(Header);
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    Header* h = nullptr;
    if (n < kMapThreshold) {
        h = static_cast<Header*>(std::malloc(total));
        if (h == nullptr) return nullptr;
        h->length = n;
        h->kind = kMalloc;
    } else {
        const std::size_t page = page_size();
        const std::size_t length = (total + page - 1) / page * page;
        void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        h = static_cast<Header*>(p);
        h->length = length;
        h->kind = kMapped;
        g_mapped.fetch_add(length, std::memory_order_relaxed);
    }
    return h + 1;
}

void mem_free(void* p) noexcept {
    if (p == nullptr) return;
    Header* h = static_cast<Header*>(p) - 1;
    if (h->kind == kMapped) {
        const std::size_t length = h->length;
        h->kind = 0;
        g_mapped.fetch_sub(length, std::memory_order_relaxed);
        munmap(h, length);
        return;
    }
    h->kind = 0;
    std::free(h);
}

void* mem_alloc_cb(void* /*opaque*/, std::size_t n) noexcept {
    return mem_alloc(n);
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
