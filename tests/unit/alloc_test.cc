// SPDX-License-Identifier: Apache-2.0
// mem_alloc (small blocks from malloc, large ones mapped on their own) and the IdleTrimmer.
#include "mc/alloc.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

namespace {

TEST(MemAlloc, SmallAndLargeBlocksAreAlignedWritableAndAccounted) {
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
    EXPECT_EQ(mc::mem_mapped_bytes(), before);  // unmapped, not kept
    mc::mem_free(small);
    mc::mem_free(nullptr);
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
