// SPDX-License-Identifier: Apache-2.0
// mc::DictionaryCache: a process's dictionaries within a budget, their origins, store claims,
// remembered misses and file hashes.
#include "mc/dictionary_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace {

using mc::DictionaryCache;
using mc::MicroTime;

DictionaryCache::Shared dict(std::size_t size, char fill) {
    auto d = std::make_shared<mc::DictionaryBytes>();
    d->bytes.assign(size, fill);
    d->hash = mc::sha256(std::as_bytes(std::span(d->bytes)));
    return d;
}

constexpr MicroTime kNow = MicroTime{1'700'000'000} * 1'000'000;
const std::string kA = "https://a.test:443";
const std::string kB = "https://b.test:443";

TEST(DictionaryCache, UsedOnlyOnTheOriginsItWasOfferedOn) {
    DictionaryCache c;
    const auto d = dict(1000, 'a');
    EXPECT_EQ(c.find(d->hash), nullptr);
    c.put(d, kA);
    EXPECT_EQ(c.find(d->hash, kA), d);
    EXPECT_EQ(c.find(d->hash, kB), nullptr);
    // An origin is compared whole, by its bytes: not a prefix of a kept one, nor one longer.
    const std::string with_path = kA + "/x";
    EXPECT_EQ(c.find(d->hash, std::string_view(with_path).substr(0, kA.size())), d);
    EXPECT_EQ(c.find(d->hash, std::string_view(kA).substr(0, kA.size() - 1)), nullptr);
    EXPECT_EQ(c.find(d->hash, with_path), nullptr);
    EXPECT_EQ(c.find(d->hash), d);  // the bytes, whatever the origin
    c.put(dict(1000, 'a'), kB);     // the same bytes offered again elsewhere: one copy kept
    EXPECT_EQ(c.find(d->hash, kB), d);
    EXPECT_EQ(c.size(), 1U);
    EXPECT_EQ(c.footprint(), 1000U);
}

TEST(DictionaryCache, MissesAreRememberedForAWhile) {
    DictionaryCache c;
    const auto d = dict(100, 'm');
    EXPECT_FALSE(c.missed_lately(d->hash, kA, kNow));
    c.note_miss(d->hash, kA, kNow);
    EXPECT_TRUE(c.missed_lately(d->hash, kA, kNow + DictionaryCache::kMissMemory - 1));
    EXPECT_FALSE(c.missed_lately(d->hash, kA, kNow + DictionaryCache::kMissMemory));
    EXPECT_FALSE(c.missed_lately(d->hash, kB, kNow));
    c.put(d, kA);  // learned meanwhile: no longer a miss
    EXPECT_FALSE(c.missed_lately(d->hash, kA, kNow));
    for (std::size_t i = 0; i <= DictionaryCache::kMaxMisses; ++i) {
        c.note_miss(dict(1, static_cast<char>(i))->hash, std::to_string(i), kNow);
    }  // bounded: it starts over rather than grow
    SUCCEED();
}

TEST(DictionaryCache, StoredOncePerHourAndOrigin) {
    DictionaryCache c;
    const auto d = dict(100, 's');
    EXPECT_FALSE(c.claim_store(d->hash, kA, kNow));  // not held: nothing to store
    c.put(d, kA);
    EXPECT_FALSE(c.stored_recently(d->hash, kA, kNow));
    EXPECT_TRUE(c.claim_store(d->hash, kA, kNow));
    EXPECT_TRUE(c.stored_recently(d->hash, kA, kNow + 1));
    EXPECT_FALSE(c.claim_store(d->hash, kA, kNow + 1));
    EXPECT_TRUE(c.claim_store(d->hash, kA, kNow + DictionaryCache::kRestoreAfter));
    c.put(d, kB);  // another origin is claimed on its own
    EXPECT_TRUE(c.claim_store(d->hash, kB, kNow + 1));
}

TEST(DictionaryCache, LeastRecentlyUsedGoFirstWithinTheBudget) {
    DictionaryCache c(2500);
    const auto a = dict(1000, '1');
    const auto b = dict(1000, '2');
    const auto n = dict(1000, '3');
    c.put(a, kA);
    c.put(b, kA);
    EXPECT_EQ(c.find(a->hash, kA), a);  // a is now used more recently than b
    c.put(n, kA);
    EXPECT_EQ(c.find(b->hash), nullptr);
    EXPECT_EQ(c.find(a->hash), a);
    EXPECT_EQ(c.find(n->hash), n);
    EXPECT_EQ(c.footprint(), 2000U);
    DictionaryCache tiny(10);  // the newest is kept even over the budget
    tiny.put(a, kA);
    EXPECT_EQ(tiny.find(a->hash), a);
}

TEST(DictionaryCache, PreparedOncePerLevelAndCounted) {
    DictionaryCache c;
    const auto d = dict(50000, 'p');
    c.put(d, kA);
    const auto p3 = c.prepared(d, 3);
    ASSERT_NE(p3, nullptr);
    EXPECT_EQ(c.prepared(d, 3), p3);
    EXPECT_EQ(p3->level(), 3);
    EXPECT_GT(c.footprint(), d->bytes.size());
    const auto p19 = c.prepared(d, 19);
    ASSERT_NE(p19, nullptr);
    EXPECT_NE(p19, p3);
    // preparing a dictionary not put yet keeps it too (a response that names it)
    const auto e = dict(2000, 'q');
    EXPECT_NE(c.prepared(e, 3), nullptr);
    EXPECT_EQ(c.find(e->hash), e);
    EXPECT_EQ(c.find(e->hash, kA), nullptr);  // but for no origin
}

TEST(DictionaryCache, FileHashes) {
    DictionaryCache c;
    const auto d = dict(10, 'f');
    EXPECT_FALSE(c.file_hash("/srv/a.js|10|1|2"));
    c.remember_file("/srv/a.js|10|1|2", d->hash);
    EXPECT_EQ(c.file_hash("/srv/a.js|10|1|2"), d->hash);
    // Looked up by a view of any buffer; a file learned again keeps its newest hash.
    const std::string longer = "/srv/a.js|10|1|2|more";
    EXPECT_EQ(c.file_hash(std::string_view(longer).substr(0, 16)), d->hash);
    const auto e = dict(11, 'g');
    c.remember_file("/srv/a.js|10|1|2", e->hash);
    EXPECT_EQ(c.file_hash("/srv/a.js|10|1|2"), e->hash);
    for (std::size_t i = 0; i < DictionaryCache::kMaxFiles; ++i) {
        c.remember_file("/f" + std::to_string(i), d->hash);
    }
    EXPECT_FALSE(c.file_hash("/srv/a.js|10|1|2"));  // bounded: started over
}

TEST(DictionaryCache, FileStoredRecentlyNeedsTheFileTheBytesAndAStoreForTheOrigin) {
    DictionaryCache c;
    const auto d = dict(10, 'k');
    const std::string file = "/srv/k.js|10|1|2";
    EXPECT_FALSE(c.file_stored_recently(file, kA, kNow));  // not learned
    c.remember_file(file, d->hash);
    EXPECT_FALSE(c.file_stored_recently(file, kA, kNow));  // bytes not held
    c.put(d, kA);
    EXPECT_FALSE(c.file_stored_recently(file, kA, kNow));  // held, not stored
    ASSERT_TRUE(c.claim_store(d->hash, kA, kNow));
    EXPECT_TRUE(c.file_stored_recently(file, kA, kNow + 1));
    EXPECT_FALSE(c.file_stored_recently(file, kB, kNow + 1));                // another origin
    EXPECT_FALSE(c.file_stored_recently("/srv/k.js|10|1|3", kA, kNow + 1));  // another version
    EXPECT_FALSE(c.file_stored_recently(file, kA, kNow + DictionaryCache::kRestoreAfter));
}

}  // namespace
