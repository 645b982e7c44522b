// SPDX-License-Identifier: Apache-2.0
// Test helper for the decide() tests (policy_test.cc, policy_budget_test.cc): the filters'
// codings, a plain compressible response, and decide() with defaults. Header-only; unit tests only.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "mc/coding.h"
#include "mc/config.h"
#include "mc/policy.h"

namespace mc_test {

inline const mc::CodingSet kAllFilters{mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli,
                                       mc::Coding::kZstd};
inline const mc::CodingSet kDeflateFilter{mc::Coding::kGzip, mc::Coding::kDeflate};  // DEFLATE
inline const mc::CodingSet kBrotliFilter{mc::Coding::kBrotli};  // BROTLI_COMPRESS
inline const mc::CodingSet kZstdFilter{mc::Coding::kZstd};      // ZSTD

/// A plain compressible 200 from a client that accepts everything.
inline mc::ResponseView base_view() {
    mc::ResponseView v;
    v.status = 200;
    v.content_type = "text/html; charset=utf-8";
    v.body_length = 10000;
    v.accept_encoding = "gzip, deflate, br, zstd";
    v.accept_encoding_present = true;
    return v;
}

inline std::string token(mc::Coding c) {
    return std::string(mc::coding_token(c));
}

inline mc::Decision verdict(const mc::ResponseView& v, const mc::Config& cfg = mc::Config{},
                            mc::CodingSet filters = kAllFilters) {
    return mc::decide(v, cfg, filters);
}

inline void expect_identity(const mc::Decision& d, bool vary = true) {
    EXPECT_EQ(token(d.coding), "identity");
    ASSERT_NE(d.reason, nullptr);
    EXPECT_STRNE(d.reason, "") << "an identity decision must say why (TRACE1 log)";
    EXPECT_EQ(d.vary, vary);
}

}  // namespace mc_test
