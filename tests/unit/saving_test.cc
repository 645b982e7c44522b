// SPDX-License-Identifier: Apache-2.0
// MultiCompressMinSaving: percentages, the zstd-1 probe, the bounded memory.
#include "mc/saving.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = mc::SavingMemory::Clock;

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::byte> out(n);
    for (auto& b : out) b = static_cast<std::byte>(rng() & 0xff);
    return out;
}

std::vector<std::byte> text(std::size_t n) {
    std::string s;
    for (int i = 0; s.size() < n; ++i) {
        s += "<p>line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog</p>\n";
    }
    s.resize(n);
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    return {p, p + n};
}

TEST(SavingTest, Percent) {
    EXPECT_EQ(mc::saving_percent(0, 0), 0);
    EXPECT_EQ(mc::saving_percent(100, 25), 75);
    EXPECT_EQ(mc::saving_percent(100, 96), 4);
    EXPECT_EQ(mc::saving_percent(1000, 951), 4) << "rounded toward zero";
    EXPECT_EQ(mc::saving_percent(100, 100), 0);
    EXPECT_EQ(mc::saving_percent(100, 103), -3);
    EXPECT_EQ(mc::saving_percent(1, 1000000), -1000) << "bounded";
}

TEST(SavingTest, WorthCompressing) {
    EXPECT_TRUE(mc::worth_compressing(5, 5));
    EXPECT_FALSE(mc::worth_compressing(4, 5));
    EXPECT_FALSE(mc::worth_compressing(-1, 1));
    EXPECT_TRUE(mc::worth_compressing(-50, 0)) << "Off: every body";
}

TEST(SavingProbeTest, RandomDoesNotShrinkTextDoes) {
    mc::SavingProbe probe;
    const auto random = probe.saving(random_bytes(64 * 1024, 1));
    ASSERT_TRUE(random.is_ok());
    EXPECT_LE(random.value(), 0);
    const auto html = probe.saving(text(64 * 1024));
    ASSERT_TRUE(html.is_ok());
    EXPECT_GE(html.value(), 70);
    // The context is reused: the same answer again.
    EXPECT_EQ(probe.saving(random_bytes(64 * 1024, 1)).value(), random.value());
    const auto tiny = probe.saving(text(600));
    ASSERT_TRUE(tiny.is_ok());
    EXPECT_GT(tiny.value(), 20);
    EXPECT_TRUE(probe.saving({}).is_ok());
}

TEST(SavingMemoryTest, RecallsUntilExpiry) {
    mc::SavingMemory m;
    const Clock::time_point t0 = Clock::now();
    EXPECT_FALSE(m.recall("a", t0));
    m.remember("a", -2, t0 + std::chrono::seconds(10));
    EXPECT_EQ(m.recall("a", t0), -2);
    EXPECT_EQ(m.recall("a", t0 + std::chrono::seconds(9)), -2);
    EXPECT_FALSE(m.recall("a", t0 + std::chrono::seconds(10)));
    m.remember("a", 60, t0 + std::chrono::seconds(20));  // measured again
    EXPECT_EQ(m.recall("a", t0 + std::chrono::seconds(15)), 60);
    EXPECT_FALSE(m.recall("b", t0));
}

TEST(SavingMemoryTest, Bounded) {
    mc::SavingMemory m(64);
    const Clock::time_point later = Clock::now() + std::chrono::hours(1);
    for (int i = 0; i < 10000; ++i) m.remember("key " + std::to_string(i), i % 100, later);
    EXPECT_LE(m.size(), 64u);
    EXPECT_EQ(m.recall("key 9999", Clock::now()), 99) << "the newest is kept";
    const std::string long_key(mc::SavingMemory::kMaxKey + 1, 'k');
    m.remember(long_key, 1, later);
    EXPECT_FALSE(m.recall(long_key, Clock::now()));
}

TEST(SavingMemoryTest, ExpiredEntriesGoFirst) {
    mc::SavingMemory m(16);  // one entry per shard
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < 200; ++i)
        m.remember("old " + std::to_string(i), 1, now - std::chrono::seconds(1));
    m.remember("new", 42, now + std::chrono::hours(1));
    EXPECT_EQ(m.recall("new", now), 42);
}

TEST(SavingMemoryTest, ThreadsAtOnce) {
    mc::SavingMemory m(256);
    const Clock::time_point later = Clock::now() + std::chrono::hours(1);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&m, t, later] {
            for (int i = 0; i < 5000; ++i) {
                const std::string k = "k" + std::to_string((i * 7 + t) % 300);
                m.remember(k, i % 50, later);
                (void)m.recall(k, Clock::now());
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_LE(m.size(), 256u);
}

}  // namespace
