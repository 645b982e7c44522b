// SPDX-License-Identifier: Apache-2.0
// mc::LastParse: a thread's last parse of a header value, parsed again only for another value.
#include "mc/last_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <type_traits>

namespace {

struct Counted {
    std::size_t size = 0;
    int calls = 0;
};

TEST(LastParse, ParsesAgainOnlyForAnotherValue) {
    mc::LastParse<16, Counted> memo;
    int calls = 0;
    const auto parse = [&calls](std::string_view v) { return Counted{v.size(), ++calls}; };
    EXPECT_EQ(memo.of("gzip, br", parse).size, 8U);
    EXPECT_EQ(memo.of(std::string("gzip, br"), parse).calls, 1);  // the same bytes: kept
    EXPECT_EQ(memo.of("gzip", parse).size, 4U);                   // a prefix is another value
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(memo.of("gzip, br", parse).calls, 3);  // one value kept, the last
    EXPECT_EQ(memo.of("", parse).size, 0U);
    EXPECT_EQ(memo.of("", parse).calls, 4);
}

TEST(LastParse, LongerValuesAreParsedEveryTime) {
    mc::LastParse<4, Counted> memo;
    int calls = 0;
    const auto parse = [&calls](std::string_view v) { return Counted{v.size(), ++calls}; };
    EXPECT_EQ(memo.of("abcdef", parse).size, 6U);
    EXPECT_EQ(memo.of("abcdef", parse).calls, 2);
    EXPECT_EQ(memo.of("abcd", parse).calls, 3);  // N bytes fit
    EXPECT_EQ(memo.of("abcd", parse).calls, 3);
    // A longer value whose first N bytes are the kept one is not the kept one.
    EXPECT_EQ(memo.of("abcde", parse).size, 5U);
    EXPECT_EQ(memo.of("abcd", parse).calls, 5);
}

static_assert(std::is_trivially_destructible_v<mc::LastParse<8, Counted>>,
              "a thread_local of it must not register a destructor");

}  // namespace
