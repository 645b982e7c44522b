// SPDX-License-Identifier: Apache-2.0
// negotiate(): highest q wins, ties go to the server's order, identity and "allowed" rules.
#include "mc/negotiate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mc/accept_encoding.h"
#include "mc/coding.h"

namespace {

using mc::AcceptEncoding;
using mc::Coding;
using mc::CodingSet;

constexpr Coding kIdentity = Coding::kIdentity;
constexpr Coding kGzip = Coding::kGzip;
constexpr Coding kDeflate = Coding::kDeflate;
constexpr Coding kBr = Coding::kBrotli;
constexpr Coding kZstd = Coding::kZstd;

const std::vector<Coding> kDefaultOrder = {kZstd, kBr, kGzip};  // docs/contract.md default
const CodingSet kAll{kGzip, kDeflate, kBr, kZstd};

struct Case {
    const char* name;
    std::string header;
    std::vector<Coding> order;
    CodingSet allowed;
    Coding expected;
    bool present = true;
};

const std::vector<Case> kCases = {
    // No header at all: identity, even though "no header" would allow anything by the RFC.
    Case{"AbsentHeader", "", kDefaultOrder, kAll, kIdentity, false},
    Case{"EmptyHeader", "", kDefaultOrder, kAll, kIdentity},
    Case{"AllOfThem", "gzip, deflate, br, zstd", kDefaultOrder, kAll, kZstd},
    Case{"AllOfThemServerOrderGzipFirst", "zstd, br, gzip", {kGzip, kBr, kZstd}, kAll, kGzip},
    Case{"OnlyGzip", "gzip", kDefaultOrder, kAll, kGzip},
    Case{"OnlyBr", "br", kDefaultOrder, kAll, kBr},
    Case{"XGzip", "x-gzip", kDefaultOrder, kAll, kGzip},
    // The highest q wins over the server's order.
    Case{"HigherQWins", "zstd;q=0.1, br;q=0.2, gzip", kDefaultOrder, kAll, kGzip},
    Case{"HigherQWinsByOneThousandth", "zstd;q=0.5, br;q=0.501", kDefaultOrder, kAll, kBr},
    // Ties go to the order of MultiCompressEncodings.
    Case{"TieServerOrder", "gzip;q=0.5, br;q=0.5", kDefaultOrder, kAll, kBr},
    Case{"TieServerOrderReversed", "gzip;q=0.5, br;q=0.5", {kGzip, kBr}, kAll, kGzip},
    Case{"TieClientOrderIrrelevant", "br, gzip, zstd", {kGzip, kZstd, kBr}, kAll, kGzip},
    Case{"Star", "*", kDefaultOrder, kAll, kZstd}, Case{"StarOrder", "*", {kBr, kGzip}, kAll, kBr},
    Case{"StarZero", "*;q=0", kDefaultOrder, kAll, kIdentity},
    Case{"StarZeroButGzip", "*;q=0, gzip;q=0.1", kDefaultOrder, kAll, kGzip},
    Case{"StarExcludingFirst", "*, zstd;q=0", kDefaultOrder, kAll, kBr},
    Case{"StarLowerThanNamed", "*;q=0.5, gzip", kDefaultOrder, kAll, kGzip},
    // q=0 spellings are refusals.
    Case{"QZero", "zstd;q=0, br;q=0., gzip;q=0.000", kDefaultOrder, kAll, kIdentity},
    Case{"QZeroBrOnly", "br;q=0, gzip;q=0.001", kDefaultOrder, kAll, kGzip},
    // Invalid q drops the entry.
    Case{"QFourDecimals", "gzip;q=0.0000", kDefaultOrder, kAll, kIdentity},
    Case{"QExponent", "gzip;q=1e-1, br;q=0.1", kDefaultOrder, kAll, kBr},
    // Duplicates: the lowest weight counts.
    Case{"DuplicateRefusal", "zstd, zstd;q=0, br;q=0.1", kDefaultOrder, kAll, kBr},
    Case{"DuplicateLower", "zstd;q=0.9, zstd;q=0.2, br;q=0.5", kDefaultOrder, kAll, kBr},
    // Case-insensitive.
    Case{"Case", "ZSTD;Q=0.2, Br;q=0.3, GZIP;q=0.1", kDefaultOrder, kAll, kBr},
    // identity: explicitly weighted higher than every coding wins; equal does not.
    Case{"IdentityHigher", "identity;q=1, gzip;q=0.5, br;q=0.9", kDefaultOrder, kAll, kIdentity},
    Case{"IdentityEqual", "identity;q=0.5, gzip;q=0.5", kDefaultOrder, kAll, kGzip},
    Case{"IdentityLower", "identity;q=0.4, gzip;q=0.5", kDefaultOrder, kAll, kGzip},
    Case{"IdentityDefault", "identity, gzip", kDefaultOrder, kAll, kGzip},
    Case{"IdentityZero", "identity;q=0, gzip", kDefaultOrder, kAll, kGzip},
    // identity;q=0 and nothing acceptable: still identity (no 406 from a filter).
    Case{"IdentityZeroNothingElse", "identity;q=0", kDefaultOrder, kAll, kIdentity},
    Case{"IdentityHigherThanStar", "identity, *;q=0.5", kDefaultOrder, kAll, kIdentity},
    // Only allowed codings.
    Case{"AllowedRestricts", "zstd, br, gzip;q=0.1", kDefaultOrder, CodingSet{kGzip}, kGzip},
    Case{"AllowedNone", "zstd, br, gzip", kDefaultOrder, CodingSet{}, kIdentity},
    Case{"AllowedNotAccepted", "zstd, br", kDefaultOrder, CodingSet{kGzip, kDeflate}, kIdentity},
    Case{"AllowedStar", "*", kDefaultOrder, CodingSet{kBr}, kBr},
    // Only enabled codings (MultiCompressEncodings), even when allowed.
    Case{"NotEnabled", "br", {kGzip}, kAll, kIdentity},
    Case{"DeflateEnabled", "deflate", {kGzip, kDeflate}, kAll, kDeflate},
    Case{"DeflateNotEnabled", "deflate", kDefaultOrder, kAll, kIdentity},
    Case{"EmptyOrder", "*", {}, kAll, kIdentity},
    // identity in the server order is never "chosen" as a coding.
    Case{"IdentityInOrder", "gzip;q=0.5", {kIdentity, kGzip}, kAll, kGzip},
    Case{"Garbage", ";;;,,,gzip;q,\xff, br;q=0.5", kDefaultOrder, kAll, kBr}};

TEST(NegotiateTest, Table) {
    for (const Case& c : kCases) {
        const AcceptEncoding ae = AcceptEncoding::parse(c.header, c.present);
        const Coding got = mc::negotiate(ae, c.order, c.allowed);
        EXPECT_EQ(mc::coding_token(got), mc::coding_token(c.expected))
            << c.name << ": header \"" << c.header << '"';
    }
}

// ---- Property check against the contract's rules on random headers, orders and allowed sets.

TEST(NegotiateProperty, FollowsTheRulesOnRandomInput) {
    const std::uint32_t seed = 20240601;
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937 rng(seed);
    const std::vector<std::string> names = {"gzip",     "x-gzip", "br",       "zstd", "deflate",
                                            "identity", "*",      "compress", "GZIP", "Br"};
    const std::vector<std::string> qs = {"",         ";q=0",     ";q=1",      ";q=0.5",
                                         ";q=0.500", ";q=0.001", ";q=0.0000", ";q=0.9",
                                         ";q=1.0",   ";q=",      ";q=1e-1"};
    for (int iter = 0; iter < 20000; ++iter) {
        std::string header;
        const int n = static_cast<int>(rng() % 6);
        for (int i = 0; i < n; ++i) {
            if (i) header += ", ";
            header += names[rng() % names.size()];
            header += qs[rng() % qs.size()];
        }
        std::vector<Coding> order(mc::kAllCompressing.begin(), mc::kAllCompressing.end());
        std::shuffle(order.begin(), order.end(), rng);
        order.resize(rng() % (order.size() + 1));
        CodingSet allowed;
        for (const Coding c : mc::kAllCompressing) {
            if (rng() % 3 != 0) allowed.add(c);
        }
        SCOPED_TRACE("header=\"" + header + "\"");

        const AcceptEncoding ae = AcceptEncoding::parse(header);
        const Coding got = mc::negotiate(ae, order, allowed);

        int best_q = 0;
        for (const Coding c : order) {
            if (allowed.has(c)) best_q = std::max(best_q, ae.weight(c));
        }
        if (got == kIdentity) {
            // Identity only when nothing is acceptable or the client prefers identity outright.
            if (best_q > 0) {
                ASSERT_GT(ae.explicit_weight(kIdentity), best_q);
            }
            continue;
        }
        const auto pos = std::find(order.begin(), order.end(), got);
        ASSERT_NE(pos, order.end()) << "chose a coding that is not enabled";
        ASSERT_TRUE(allowed.has(got)) << "chose a coding that is not allowed";
        ASSERT_GT(ae.weight(got), 0) << "chose a refused coding";
        ASSERT_EQ(ae.weight(got), best_q) << "did not choose the highest q";
        for (auto it = order.begin(); it != pos; ++it) {
            if (allowed.has(*it)) {
                ASSERT_LT(ae.weight(*it), best_q) << "tie not broken by server order";
            }
        }
        ASSERT_LE(ae.explicit_weight(kIdentity), best_q);
    }
}

}  // namespace
