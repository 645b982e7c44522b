// SPDX-License-Identifier: Apache-2.0
// The one allocator behind the compression libraries' state and the module's large buffers.
//
// glibc malloc keeps freed memory in per-thread arenas (up to 8 per core) and raises its mmap
// threshold to the size of the first large block freed (up to 32 MiB), so the multi-MB states of
// brotli, zstd and zlib and the body-sized output buffers of a threaded server settle in arenas
// that are rarely trimmed: RSS climbs to the high-water mark of every arena and stays there.
// Here a block of kMapThreshold bytes or more is mapped on its own and unmapped when freed (it
// never enters an arena and never moves glibc's threshold); smaller ones come from malloc.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace mc {

/// Blocks of at least this many bytes are mapped and unmapped directly.
inline constexpr std::size_t kMapThreshold = 64 * 1024;

/// `n` bytes aligned to 16, or nullptr. Free with mc::mem_free (never with free()).
[[nodiscard]] void* mem_alloc(std::size_t n) noexcept;
/// Frees a block from mem_alloc; nullptr is ignored.
void mem_free(void* p) noexcept;

/// Callbacks in the shapes the libraries take (brotli alloc_func/free_func, ZSTD_customMem).
void* mem_alloc_cb(void* opaque, std::size_t n) noexcept;
void mem_free_cb(void* opaque, void* p) noexcept;

/// Bytes currently mapped by mem_alloc (its large blocks), for tests and diagnostics.
[[nodiscard]] std::size_t mem_mapped_bytes() noexcept;
/// How many blocks mem_alloc has handed out so far: a process is busy while this moves.
[[nodiscard]] std::uint64_t mem_allocations() noexcept;

/// Gives the free memory malloc holds back to the system (malloc_trim(0) on glibc, which also
/// releases the free pages inside its arenas; nothing elsewhere). Takes each arena's lock for
/// the time it walks it, so it is for idle moments (IdleTrimmer).
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
