// SPDX-License-Identifier: Apache-2.0
// mem_alloc (small blocks from malloc, large ones mapped on their own) and the IdleTrimmer.
#include "mc/alloc.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

TEST(MemAlloc, SmallAndLargeBlocksAreAlignedWritableAndAccounted) {
    mc::mem_trim();  // nothing cached from an earlier test
    const std::size_t before = mc::mem_mapped_bytes();
    void* small = mc::mem_alloc(100);
    ASSERT_NE(small, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % 16, 0U);
    EXPECT_EQ(mc::mem_mapped_bytes(), before);  // from malloc
    std::memset(small, 0xab, 100);

    const std::size_t big_n = mc::kMapThreshold * 3 + 5;
    void* big = mc::mem_alloc(big_n);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big) % 16, 0U);
    EXPECT_GE(mc::mem_mapped_bytes(), before + big_n);
    std::memset(big, 0xcd, big_n);
    EXPECT_EQ(static_cast<unsigned char*>(big)[big_n - 1], 0xcd);

    mc::mem_free(big);
    EXPECT_EQ(mc::mem_mapped_bytes(), before);
    if (mc::mem_quarantined()) {
        EXPECT_EQ(mc::mem_cached_bytes(), 0U);  // never reused: see QuarantineFaults below
        mc::mem_free(small);
        return;
    }
    EXPECT_GE(mc::mem_cached_bytes(), big_n);  // kept for the next body...
    void* again = mc::mem_alloc(big_n);
    EXPECT_EQ(again, big);  // ...which gets it back
    mc::mem_free(again);
    mc::mem_trim();
    EXPECT_EQ(mc::mem_cached_bytes(), 0U);  // the idle trim unmaps it
    mc::mem_free(small);
    mc::mem_free(nullptr);
}

TEST(MemAlloc, CacheIsBounded) {
    if (mc::mem_quarantined()) GTEST_SKIP() << "a build with AddressSanitizer caches nothing";
    mc::mem_trim();
    std::vector<void*> blocks;
    for (int i = 0; i < 40; ++i) blocks.push_back(mc::mem_alloc(1024 * 1024));  // 40 MiB
    for (void* p : blocks) mc::mem_free(p);
    EXPECT_GT(mc::mem_cached_bytes(), 16U * 1024 * 1024);
    EXPECT_LE(mc::mem_cached_bytes(), 32U * 1024 * 1024);
    void* huge = mc::mem_alloc(16 * 1024 * 1024);
    const std::size_t cached = mc::mem_cached_bytes();
    mc::mem_free(huge);
    EXPECT_EQ(mc::mem_cached_bytes(), cached);  // over 9 MiB: unmapped at once
    mc::mem_trim();
    EXPECT_EQ(mc::mem_cached_bytes(), 0U);
}

TEST(MemAlloc, FullCacheMakesRoomForTheBlockFreedLast) {
    if (mc::mem_quarantined()) GTEST_SKIP() << "a build with AddressSanitizer caches nothing";
    // An earlier workload's blocks (here 64 small ones: every slot) must not keep today's out.
    mc::mem_trim();
    std::vector<void*> old;
    for (int i = 0; i < 64; ++i) old.push_back(mc::mem_alloc(mc::kMapThreshold));
    for (void* p : old) mc::mem_free(p);
    const std::size_t full = mc::mem_cached_bytes();
    const std::size_t n = 512 * 1024;
    void* p = mc::mem_alloc(n);
    ASSERT_NE(p, nullptr);
    mc::mem_free(p);
    EXPECT_GE(mc::mem_cached_bytes(), full + n - 2 * (mc::kMapThreshold + 4096));  // one slot freed
    // And by bytes: 1 MiB blocks up to the 32 MiB bound, then 8 MiB more go in too.
    mc::mem_trim();
    std::vector<void*> mid;
    for (int i = 0; i < 40; ++i) mid.push_back(mc::mem_alloc(1024 * 1024));
    for (void* q : mid) mc::mem_free(q);
    void* big = mc::mem_alloc(std::size_t{8} << 20);
    ASSERT_NE(big, nullptr);
    mc::mem_free(big);
    EXPECT_LE(mc::mem_cached_bytes(), 32U * 1024 * 1024);
    const std::size_t kept = mc::mem_cached_bytes();
    void* again = mc::mem_alloc(std::size_t{8} << 20);
    EXPECT_GE(kept - mc::mem_cached_bytes(), std::size_t{8} << 20);  // kept, and taken back
    mc::mem_free(again);
    mc::mem_trim();
}

TEST(MemAlloc, KeepsBlocksOfUpTo9MiB) {
    if (mc::mem_quarantined()) GTEST_SKIP() << "a build with AddressSanitizer caches nothing";
    // brotli-4 over a 1 MB body asks for exactly 4 MiB (a page more with the header); brotli's
    // ring buffer at its default window (a streamed body) for 2^23 + 2^16 + 9 bytes; 9 MiB is the
    // most kept: each is kept for the next body.
    for (const std::size_t n :
         {std::size_t{4} << 20, (std::size_t{1} << 23) + (1 << 16) + 9, std::size_t{9} << 20}) {
        mc::mem_trim();
        void* p = mc::mem_alloc(n);
        ASSERT_NE(p, nullptr);
        mc::mem_free(p);
        EXPECT_GE(mc::mem_cached_bytes(), n) << n;
        void* again = mc::mem_alloc(n);
        EXPECT_EQ(again, p) << n;
        mc::mem_free(again);
    }
    mc::mem_trim();
    EXPECT_EQ(mc::mem_cached_bytes(), 0U);
}

TEST(MemAlloc, MappedPayloadsStartOnCacheLinesSpreadOverThePage) {
    // A copy into a block from a page-aligned source (the kernel's, from the page cache) or from
    // a block of another size (brotli's, from the module's piece into its ring buffer) is slow
    // when the destination is a little ahead of the source modulo 4 KiB: every mapped payload
    // started 16 bytes into its page, and a 266 KB body's br-4 paid 9 to 14 % for it.
    std::set<std::uintptr_t> places;
    for (std::size_t n = mc::kMapThreshold; n <= (std::size_t{4} << 20); n += 4096 * 7 + 48) {
        void* p = mc::mem_alloc(n);
        ASSERT_NE(p, nullptr) << n;
        const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p) % 4096;
        EXPECT_EQ(at % 64, 0U) << n;
        EXPECT_GE(at, 448U) << n;
        places.insert(at);
        static_cast<unsigned char*>(p)[n - 1] = 1;  // the block holds all n bytes
        mc::mem_free(p);
        void* again = mc::mem_alloc(n);  // the cached block, and its payload at the same place
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again) % 4096, at) << n;
        mc::mem_free(again);
    }
    EXPECT_GE(places.size(), 40U);
    mc::mem_trim();
}

TEST(MemAlloc, QuarantineFaultsOnUseAfterFree) {
    if (!mc::mem_quarantined()) GTEST_SKIP() << "only a build with AddressSanitizer quarantines";
    auto* p = static_cast<volatile char*>(mc::mem_alloc(mc::kMapThreshold * 2));
    ASSERT_NE(p, nullptr);
    p[100] = 1;
    mc::mem_free(const_cast<char*>(p));
    EXPECT_DEATH(p[100] = 2, "");  // NOLINT: the write after free is what is tested
    void* again = mc::mem_alloc(mc::kMapThreshold * 2);
    EXPECT_NE(again, const_cast<char*>(p));  // never handed out again
    mc::mem_free(again);
}

// Runs `f` with the calling thread on CPU `cpu` only, then lets it run anywhere again.
template <class F>
void on_cpu(int cpu, F&& f) {
    cpu_set_t was;
    ASSERT_EQ(sched_getaffinity(0, sizeof(was), &was), 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    f();
    ASSERT_EQ(sched_setaffinity(0, sizeof(was), &was), 0);
}

// The CPUs this thread may run on.
std::vector<int> allowed_cpus() {
    cpu_set_t set;
    std::vector<int> out;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
    for (int i = 0; i < CPU_SETSIZE; ++i) {
        if (CPU_ISSET(i, &set)) out.push_back(i);
    }
    return out;
}

TEST(MemAlloc, TakesTheBlockThisCpuFreedLast) {
    if (mc::mem_quarantined()) GTEST_SKIP() << "a build with AddressSanitizer caches nothing";
    const std::vector<int> cpus = allowed_cpus();
    ASSERT_FALSE(cpus.empty());
    constexpr std::size_t kSize = 512 * 1024;  // brotli-4's hash table
    mc::mem_trim();
    // On one CPU: of two blocks of one size, the one freed last comes back first.
    on_cpu(cpus[0], [&] {
        void* a = mc::mem_alloc(kSize);
        void* b = mc::mem_alloc(kSize);
        ASSERT_NE(a, nullptr);
        ASSERT_NE(b, nullptr);
        mc::mem_free(a);
        mc::mem_free(b);
        void* again = mc::mem_alloc(kSize);
        EXPECT_EQ(again, b);
        mc::mem_free(again);
    });
    mc::mem_trim();
    if (cpus.size() < 2) GTEST_SKIP() << "one CPU: no other CPU's block to pass over";
    // A block freed on this CPU is taken before a later one freed on another CPU.
    void* mine = nullptr;
    void* other = nullptr;
    on_cpu(cpus[0], [&] { mine = mc::mem_alloc(kSize); });
    on_cpu(cpus[1], [&] { other = mc::mem_alloc(kSize); });
    on_cpu(cpus[0], [&] { mc::mem_free(mine); });
    on_cpu(cpus[1], [&] { mc::mem_free(other); });
    on_cpu(cpus[0], [&] {
        void* again = mc::mem_alloc(kSize);
        EXPECT_EQ(again, mine);
        mc::mem_free(again);
    });
    mc::mem_trim();
}

TEST(MemAlloc, CallbacksCountAllocations) {
    const std::uint64_t n0 = mc::mem_allocations();
    void* p = mc::mem_alloc_cb(nullptr, mc::kMapThreshold);
    ASSERT_NE(p, nullptr);
    mc::mem_free_cb(nullptr, p);
    EXPECT_EQ(mc::mem_allocations(), n0 + 1);
    mc::mem_trim();  // harmless at any time
}

TEST(IdleTrimmer, TrimsOnceAfterEachBusySpell) {
    std::atomic<int> calls{0};
    mc::IdleTrimmer trimmer(std::chrono::milliseconds(20), [&] { ++calls; });
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    EXPECT_EQ(calls.load(), 0);  // no activity yet: nothing to trim

    mc::mem_free(mc::mem_alloc(10));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (calls.load() == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(calls.load(), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_EQ(calls.load(), 1);  // idle since: no second trim
    EXPECT_EQ(trimmer.trims(), 1U);
}

}  // namespace
