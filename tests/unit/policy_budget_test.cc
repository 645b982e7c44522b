// SPDX-License-Identifier: Apache-2.0
// decide() under MultiCompressCrossSite (credentialed cross-site requests, BREACH) and
// MultiCompressCPUBudget (its steps), and the reason every identity decision gives the counters.
// The rest of decide(): policy_test.cc.
#include "mc/policy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "mc/coding.h"
#include "mc/config.h"
#include "policy_util.h"

namespace {

using mc::Coding;
using mc::CodingSet;
using mc::Config;
using mc::Decision;
using mc::ResponseView;
using mc_test::base_view;
using mc_test::expect_identity;
using mc_test::kAllFilters;
using mc_test::kBrotliFilter;
using mc_test::token;
using mc_test::verdict;

// ---- MultiCompressCrossSite (BREACH): credentialed cross-site requests get identity.

TEST(DecideTest, CrossSiteIdentityLeavesCredentialedCrossSiteRequestsAlone) {
    Config cfg;
    cfg.cross_site = mc::CrossSiteMode::kIdentity;
    ResponseView v = base_view();
    v.cross_site_with_credentials = true;
    expect_identity(verdict(v, cfg));
    // Without the policy, or for any other request, nothing changes.
    EXPECT_EQ(token(verdict(v).coding), "zstd");
    v.cross_site_with_credentials = false;
    EXPECT_EQ(token(verdict(v, cfg).coding), "zstd");
    cfg.cross_site = mc::CrossSiteMode::kCompress;
    v.cross_site_with_credentials = true;
    EXPECT_EQ(token(verdict(v, cfg).coding), "zstd");
}

TEST(DecideTest, CrossSiteIdentityOverridesForceGzip) {
    Config cfg;
    cfg.cross_site = mc::CrossSiteMode::kIdentity;
    ResponseView v = base_view();
    v.cross_site_with_credentials = true;
    v.env_force_gzip = true;
    v.accept_encoding = "";
    expect_identity(verdict(v, cfg));
}

TEST(DecideTest, IdentityDecisionsSayWhyForTheCounters) {
    using mc::metrics::Why;
    ResponseView v = base_view();
    v.body_length = 10;
    EXPECT_EQ(verdict(v).why, Why::kTooSmall);
    v = base_view();
    v.accept_encoding = "identity";
    EXPECT_EQ(verdict(v).why, Why::kNotAcceptable);
    v = base_view();
    v.response_cache_control = "no-transform";
    EXPECT_EQ(verdict(v).why, Why::kNoTransform);
    v = base_view();
    v.content_encoding = "gzip";
    EXPECT_EQ(verdict(v).why, Why::kAlreadyEncoded);
    v = base_view();
    v.request_has_range = true;
    EXPECT_EQ(verdict(v).why, Why::kRange);
    v = base_view();
    v.env_no_gzip = true;
    EXPECT_EQ(verdict(v).why, Why::kEnv);
    v = base_view();
    v.status = 204;
    EXPECT_EQ(verdict(v).why, Why::kStatus);
    Config cfg;
    cfg.cross_site = mc::CrossSiteMode::kIdentity;
    v = base_view();
    v.cross_site_with_credentials = true;
    EXPECT_EQ(verdict(v, cfg).why, Why::kCrossSite);
}

// ---- MultiCompressCPUBudget: the step changes the decision, never a decision to leave alone.

TEST(DecideTest, BudgetStepsLowerTheLevelThenTheCodingThenCompressNothing) {
    using mc::BudgetStep;
    ResponseView v = base_view();
    v.accept_encoding = "br, gzip";
    Config cfg;
    ASSERT_TRUE(mc::add_encoding(cfg, "br").is_ok());
    ASSERT_TRUE(mc::add_encoding(cfg, "gzip").is_ok());
    ASSERT_TRUE(mc::add_encoding(cfg, "zstd").is_ok());
    Decision d = mc::decide(v, cfg, kAllFilters, BudgetStep::kNone);
    EXPECT_EQ(token(d.coding), "br");
    EXPECT_EQ(d.budget, BudgetStep::kNone);
    d = mc::decide(v, cfg, kAllFilters, BudgetStep::kLower);
    EXPECT_EQ(token(d.coding), "br");
    EXPECT_EQ(d.budget, BudgetStep::kLower);
    d = mc::decide(v, cfg, kAllFilters, BudgetStep::kLowest);
    EXPECT_EQ(token(d.coding), "br");
    // The cheapest the client accepts: gzip (it does not accept zstd).
    d = mc::decide(v, cfg, kAllFilters, BudgetStep::kCheapest);
    EXPECT_EQ(token(d.coding), "gzip");
    v.accept_encoding = "br, gzip, zstd";
    EXPECT_EQ(token(mc::decide(v, cfg, kAllFilters, BudgetStep::kCheapest).coding), "zstd");
    // ... among the codings our filters on the response offer.
    EXPECT_EQ(token(mc::decide(v, cfg, kBrotliFilter, BudgetStep::kCheapest).coding), "br");
    d = mc::decide(v, cfg, kAllFilters, BudgetStep::kIdentity);
    expect_identity(d);
    EXPECT_EQ(d.why, mc::metrics::Why::kBudget);
}

TEST(DecideTest, BudgetNeverCompressesWhatIsLeftAlone) {
    ResponseView v = base_view();
    v.request_has_range = true;
    const Decision d = mc::decide(v, Config{}, kAllFilters, mc::BudgetStep::kCheapest);
    expect_identity(d);
    EXPECT_EQ(d.why, mc::metrics::Why::kRange);
    v = base_view();
    v.accept_encoding = "identity";
    EXPECT_EQ(mc::decide(v, Config{}, kAllFilters, mc::BudgetStep::kCheapest).why,
              mc::metrics::Why::kNotAcceptable);
}

}  // namespace
