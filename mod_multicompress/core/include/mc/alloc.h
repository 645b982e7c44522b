// SPDX-License-Identifier: Apache-2.0
// The one allocator behind the compression libraries' state and the module's large buffers.
//
// glibc malloc keeps freed memory in per-thread arenas (up to 8 per core) and raises its mmap
// threshold to the size of the first large block freed (up to 32 MiB), so the multi-MB states of
// brotli, zstd and zlib and the body-sized output buffers of a threaded server settle in arenas
// that are rarely trimmed: RSS climbs to the high-water mark of every arena and stays there.
// Here a block of kMapThreshold bytes or more is mapped on its own (it never enters an arena and
// never moves glibc's threshold) and, when freed, kept in a small cache for the next body or
// unmapped; smaller ones come from malloc. 16 KiB and not more: a br-4 response of a 31 KB file
// also allocates 31 and 62 KB blocks, and with them in malloc their free at the end of every
// response grew a thread's arena top past the trim threshold, so glibc gave the pages back
// (madvise, 0.22 per response over TLS + HTTP/2, with a TLB shootdown each) and the next
// response faulted them in again (0.58 faults per response; with 16 KiB: no madvise, 0.12).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <thread>

namespace mc {

/// Blocks of at least this many bytes are mapped and unmapped directly.
inline constexpr std::size_t kMapThreshold = 16 * 1024;

/// `n` bytes aligned to 16, or nullptr. Free with mc::mem_free (never with free()).
[[nodiscard]] void* mem_alloc(std::size_t n) noexcept;
/// Frees a block from mem_alloc; nullptr is ignored.
void mem_free(void* p) noexcept;

/// Callbacks in the shapes the libraries take (brotli alloc_func/free_func, ZSTD_customMem, and
/// zlib's alloc_func, items x size, with mem_free_cb as its free_func): library state is mapped
/// on its own rather than left in a malloc arena (zlib's deflate state is ~256 KiB).
void* mem_alloc_cb(void* opaque, std::size_t n) noexcept;
void* mem_zalloc_cb(void* opaque, unsigned int items, unsigned int size) noexcept;
void mem_free_cb(void* opaque, void* p) noexcept;

/// Bytes of mem_alloc's large blocks in use, for tests and diagnostics.
[[nodiscard]] std::size_t mem_mapped_bytes() noexcept;
/// Bytes of freed large blocks kept mapped for reuse (at most 32 MiB in 64 blocks of 9 MiB of
/// payload at most; emptied by mem_trim).
[[nodiscard]] std::size_t mem_cached_bytes() noexcept;
/// Whether freed large blocks are quarantined instead of cached (a build with AddressSanitizer:
/// never reused, left mapped without access, so a use after mem_free faults); the cache is then
/// always empty.
[[nodiscard]] bool mem_quarantined() noexcept;
/// A standard allocator over mem_alloc, for containers that grow to body sizes: a std::string
/// grown by doubling frees multi-MB malloc blocks, and every such free raises glibc's mmap and
/// trim thresholds for the whole process (to 32 MiB at most), after which nothing is trimmed.
template <class T>
struct MemAllocator {
    using value_type = T;
    MemAllocator() noexcept = default;
    template <class U>
    MemAllocator(const MemAllocator<U>& /*other*/) noexcept {
    }  // NOLINT(google-explicit-constructor)
    T* allocate(std::size_t n) {
        if (n > SIZE_MAX / 2 / sizeof(T)) throw std::bad_alloc();
        void* p = mem_alloc(n * sizeof(T));
        if (p == nullptr) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t /*n*/) noexcept { mem_free(p); }
    friend bool operator==(const MemAllocator& /*a*/, const MemAllocator& /*b*/) { return true; }
};

/// Bytes (a body, a cache entry) in mem_alloc memory.
using MemString = std::basic_string<char, std::char_traits<char>, MemAllocator<char>>;

/// How many blocks mem_alloc has handed out so far: a process is busy while this moves.
[[nodiscard]] std::uint64_t mem_allocations() noexcept;

/// Unmaps the cached blocks and gives the free memory malloc holds back to the system
/// (malloc_trim(0) on glibc, which releases the free pages inside its arenas). Takes each arena's
/// lock for the time it walks it, so it is for idle moments (IdleTrimmer).
void mem_trim() noexcept;

/// A thread that calls `on_idle` once after every busy spell: when mem_allocations() moved
/// since the last trim but not during the last `tick`. Stopped and joined when destroyed.
class IdleTrimmer {
public:
    IdleTrimmer(std::chrono::milliseconds tick, std::function<void()> on_idle);
    ~IdleTrimmer();
    IdleTrimmer(const IdleTrimmer&) = delete;
    IdleTrimmer& operator=(const IdleTrimmer&) = delete;

    /// Times on_idle ran (tests).
    [[nodiscard]] std::uint64_t trims() const;

private:
    void loop();

    std::chrono::milliseconds tick_;
    std::function<void()> on_idle_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::uint64_t trims_ = 0;
    std::thread thread_;
};

}  // namespace mc
