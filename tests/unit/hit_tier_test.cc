// SPDX-License-Identifier: Apache-2.0
// mc::HitTier and mc::TierBody: a process's verified cache bodies, refcounted, bounded by bytes,
// least recently used evicted first.
#include "mc/hit_tier.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "mc/alloc.h"

namespace {

using mc::HitTier;
using mc::TierBody;

// A body of `n` bytes of `fill`, with the caller's reference.
TierBody* body(std::size_t n, char fill, int level = 11, std::uint64_t window = 0) {
    TierBody* b = TierBody::make(std::string(n, fill), level, window);
    EXPECT_NE(b, nullptr);
    return b;
}

std::size_t fp(std::size_t n, const std::string& key) {
    return TierBody::footprint(n, key.size());
}

TEST(TierBody, BytesLevelWindowAndTheWayBackFromTheData) {
    TierBody* b = TierBody::make("hello", 19, 1U << 23);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(std::string(b->data(), b->size()), "hello");
    EXPECT_EQ(b->level(), 19);
    EXPECT_EQ(TierBody::of_data(b->data()), b);
    EXPECT_TRUE(b->fits_window(1U << 23));
    EXPECT_TRUE(b->fits_window(1U << 24));
    EXPECT_FALSE(b->fits_window(1U << 22));  // checked against more than this client keeps
    EXPECT_TRUE(b->fits_window(0));          // a coding without windows
    b->unref();
    TierBody* unchecked = body(10, 'u');
    EXPECT_FALSE(unchecked->fits_window(1U << 23));  // never checked: not for a zstd client
    unchecked->unref();
}

TEST(HitTier, FindGivesAReferenceThatOutlivesTheTier) {
    const std::string key = "mc2-aaaa";
    TierBody* held = nullptr;
    {
        HitTier tier(1 << 20);
        TierBody* b = body(1000, 'x');
        bool kept = false;
        EXPECT_EQ(tier.put(key, b, kept), 0U);
        EXPECT_TRUE(kept);
        b->unref();  // the tier's reference keeps it
        EXPECT_EQ(tier.find("mc2-other"), nullptr);
        held = tier.find(key);
        ASSERT_NE(held, nullptr);
        EXPECT_EQ(tier.size(), 1U);
        EXPECT_EQ(tier.bytes(), fp(1000, key));
    }
    // The tier is gone (a child's exit); the response in flight still reads its bytes.
    EXPECT_EQ(std::string(held->data(), held->size()), std::string(1000, 'x'));
    held->unref();
}

TEST(HitTier, FullItEvictsTheLeastRecentlyUsedAndNeverGrows) {
    const std::string a = "mc2-a", b = "mc2-b", c = "mc2-c";
    HitTier tier(2 * fp(1000, a) + 10);
    bool kept = false;
    for (const auto& [key, fill] : {std::pair{a, 'a'}, std::pair{b, 'b'}}) {
        TierBody* x = body(1000, fill);
        tier.put(key, x, kept);
        x->unref();
    }
    TierBody* got = tier.find(a);  // a is now more recent than b
    ASSERT_NE(got, nullptr);
    got->unref();
    TierBody* x = body(1000, 'c');
    EXPECT_EQ(tier.put(c, x, kept), 1U);
    x->unref();
    EXPECT_TRUE(kept);
    EXPECT_EQ(tier.find(b), nullptr);  // evicted
    for (const auto& key : {a, c}) {
        TierBody* y = tier.find(key);
        ASSERT_NE(y, nullptr) << key;
        y->unref();
    }
    EXPECT_LE(tier.bytes(), tier.budget());
    EXPECT_EQ(tier.size(), 2U);
}

TEST(HitTier, ABodyLargerThanTheBudgetIsNotKept) {
    HitTier tier(4096);
    TierBody* small = body(100, 's');
    bool kept = false;
    tier.put("mc2-s", small, kept);
    small->unref();
    TierBody* big = body(8192, 'b');
    EXPECT_EQ(tier.put("mc2-b", big, kept), 0U);
    EXPECT_FALSE(kept);
    big->unref();
    EXPECT_EQ(tier.size(), 1U);  // nothing evicted for a body that cannot fit anyway
    TierBody* s = tier.find("mc2-s");
    ASSERT_NE(s, nullptr);
    s->unref();
}

TEST(HitTier, PutReplacesAndEraseForgets) {
    HitTier tier(1 << 20);
    bool kept = false;
    TierBody* weak = body(500, 'w', 4);
    tier.put("mc2-k", weak, kept);
    TierBody* in_flight = tier.find("mc2-k");  // a response sending the weak copy
    weak->unref();
    TierBody* strong = body(300, 's', 11);
    tier.put("mc2-k", strong, kept);
    strong->unref();
    EXPECT_EQ(tier.size(), 1U);
    EXPECT_EQ(tier.bytes(), fp(300, "mc2-k"));
    TierBody* now = tier.find("mc2-k");
    ASSERT_NE(now, nullptr);
    EXPECT_EQ(now->level(), 11);
    now->unref();
    // the replaced body is still whole for the response that holds it
    EXPECT_EQ(std::string(in_flight->data(), in_flight->size()), std::string(500, 'w'));
    in_flight->unref();
    tier.erase("mc2-k");
    EXPECT_EQ(tier.find("mc2-k"), nullptr);
    EXPECT_EQ(tier.bytes(), 0U);
}

TEST(HitTier, ThreadsFindPutAndReleaseConcurrently) {
    HitTier tier(64 * 1024);
    const std::size_t before = mc::mem_mapped_bytes();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&tier, t] {
            bool kept = false;
            for (int i = 0; i < 2000; ++i) {
                const std::string key = "mc2-" + std::to_string((i * 7 + t) % 40);
                if (TierBody* b = tier.find(key)) {
                    // every byte of a body is the one it was made with
                    const char first = b->data()[0];
                    for (std::size_t j = 0; j < b->size(); ++j) ASSERT_EQ(b->data()[j], first);
                    b->unref();
                } else {
                    TierBody* n =
                        TierBody::make(std::string(3000, static_cast<char>('a' + i % 26)), 11, 0);
                    ASSERT_NE(n, nullptr);
                    tier.put(key, n, kept);
                    n->unref();
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_LE(tier.bytes(), tier.budget());
    EXPECT_EQ(mc::mem_mapped_bytes(), before);  // every body freed (3000 B: from malloc)
}

}  // namespace
