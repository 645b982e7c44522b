// SPDX-License-Identifier: Apache-2.0
// MultiCompressCPUBudget's controller: steps down while over the budget, back up below it.
#include "mc/budget.h"

#include <gtest/gtest.h>

namespace {

using mc::BudgetController;
using mc::BudgetStep;
using mc::Coding;

constexpr std::uint64_t kSecond = 1000000000ULL;

TEST(BudgetControllerTest, StepsDownOneAtATimeWhileOver) {
    BudgetController c(0.5);  // half of the machine
    EXPECT_EQ(c.sample(kSecond / 8, kSecond / 4, 2), BudgetStep::kNone) << "25 % of 2 CPUs";
    // 180 % of one CPU = 90 % of two; smoothed with the 25 % before: 57.5 %, over the budget.
    EXPECT_EQ(c.sample(kSecond * 18 / 40, kSecond / 4, 2), BudgetStep::kLower);
    EXPECT_EQ(c.sample(kSecond * 18 / 40, kSecond / 4, 2), BudgetStep::kLowest);
    EXPECT_EQ(c.sample(kSecond * 18 / 40, kSecond / 4, 2), BudgetStep::kCheapest);
    EXPECT_EQ(c.sample(kSecond * 18 / 40, kSecond / 4, 2), BudgetStep::kIdentity);
    EXPECT_EQ(c.sample(kSecond * 18 / 40, kSecond / 4, 2), BudgetStep::kIdentity)
        << "the last step";
}

TEST(BudgetControllerTest, ReachesIdentityUnderSustainedOverloadAndComesBack) {
    BudgetController c(0.5);
    BudgetStep s = BudgetStep::kNone;
    for (int i = 0; i < 10; ++i) s = c.sample(kSecond / 2, kSecond / 4, 2);  // 100 %
    EXPECT_EQ(s, BudgetStep::kIdentity);
    EXPECT_NEAR(c.share(), 1.0, 1e-9);
    // Load falls: back to the configured level, one step per sample.
    int steps_up = 0;
    for (int i = 0; i < 20 && c.step() != BudgetStep::kNone; ++i) {
        c.sample(0, kSecond / 4, 2);
        ++steps_up;
    }
    EXPECT_EQ(c.step(), BudgetStep::kNone);
    EXPECT_GE(steps_up, 4) << "one step per sample, never a jump";
}

TEST(BudgetControllerTest, HoldsBetweenRecoverFractionAndBudget) {
    BudgetController c(0.5);
    for (int i = 0; i < 3; ++i) c.sample(kSecond / 2, kSecond / 4, 2);
    // 0.45 of the machine: under the budget but above 0.75 x 0.5: once the smoothed share has
    // settled there, the step holds (no swinging).
    for (int i = 0; i < 10; ++i) c.sample(kSecond * 9 / 40, kSecond / 4, 2);
    const BudgetStep held = c.step();
    ASSERT_NE(held, BudgetStep::kNone);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(c.sample(kSecond * 9 / 40, kSecond / 4, 2), held);
}

TEST(BudgetControllerTest, ALongQuietGapCountsAsManyIntervals) {
    BudgetController c(0.5);
    for (int i = 0; i < 6; ++i) c.sample(2 * kSecond, kSecond / 4, 2);
    ASSERT_EQ(c.step(), BudgetStep::kIdentity);
    // A child that served nothing for 10 s: its next sample brings it back all the way.
    EXPECT_EQ(c.sample(0, 10 * kSecond, 2), BudgetStep::kNone);
    EXPECT_LT(c.share(), 0.01);
}

TEST(BudgetControllerTest, IgnoresEmptyIntervals) {
    BudgetController c(0.5);
    EXPECT_EQ(c.sample(123, 0, 2), BudgetStep::kNone);
    EXPECT_EQ(c.sample(123, kSecond, 0), BudgetStep::kNone);
    EXPECT_EQ(c.share(), 0.0);
}

TEST(BudgetLevelTest, EachStepLowersTheLevel) {
    EXPECT_EQ(mc::budget_level(Coding::kBrotli, 5, BudgetStep::kNone), 5);
    EXPECT_EQ(mc::budget_level(Coding::kBrotli, 5, BudgetStep::kLower), 3);
    EXPECT_EQ(mc::budget_level(Coding::kBrotli, 5, BudgetStep::kLowest), 1);
    EXPECT_EQ(mc::budget_level(Coding::kGzip, 6, BudgetStep::kLower), 3);
    EXPECT_EQ(mc::budget_level(Coding::kGzip, 6, BudgetStep::kLowest), 1);
    EXPECT_EQ(mc::budget_level(Coding::kZstd, 19, BudgetStep::kLower), 10);
    EXPECT_EQ(mc::budget_level(Coding::kZstd, 1, BudgetStep::kLower), 1);
    // A level already below the step's is kept (br 0 stays 0).
    EXPECT_EQ(mc::budget_level(Coding::kBrotli, 0, BudgetStep::kLowest), 0);
    EXPECT_EQ(mc::budget_level(Coding::kIdentity, 0, BudgetStep::kIdentity), 0);
}

TEST(BudgetLevelTest, CheapestCodingTheClientAccepts) {
    EXPECT_EQ(mc::cheapest_coding({Coding::kBrotli, Coding::kGzip, Coding::kZstd}), Coding::kZstd);
    EXPECT_EQ(mc::cheapest_coding({Coding::kBrotli, Coding::kGzip}), Coding::kGzip);
    EXPECT_EQ(mc::cheapest_coding({Coding::kBrotli}), Coding::kBrotli);
    EXPECT_EQ(mc::cheapest_coding({}), Coding::kIdentity);
}

}  // namespace
