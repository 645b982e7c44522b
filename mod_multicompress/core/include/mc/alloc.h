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

#include <cstddef>

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

}  // namespace mc
