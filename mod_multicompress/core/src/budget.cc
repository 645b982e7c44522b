// SPDX-License-Identifier: Apache-2.0
// The CPU budget's controller and what each step means for a coding and level.
#include "mc/budget.h"

#include <algorithm>
#include <cmath>

#include "mc/params.h"

namespace mc {

BudgetStep BudgetController::sample(std::uint64_t cpu_ns, std::uint64_t wall_ns, unsigned cpus) {
    if (wall_ns == 0 || cpus == 0) return step_;
    const double now =
        static_cast<double>(cpu_ns) / (static_cast<double>(wall_ns) * static_cast<double>(cpus));
    // Smoothed over a few intervals: one burst does not step the level down, a sustained share
    // does. A sample that spans n intervals weighs as n of them.
    const std::uint64_t n = std::max<std::uint64_t>(1, wall_ns / kIntervalNs);
    const double keep = std::pow(0.5, static_cast<double>(std::min<std::uint64_t>(n, 64)));
    share_ = primed_ ? keep * share_ + (1 - keep) * now : now;
    primed_ = true;
    auto s = static_cast<int>(step_);
    if (share_ > budget_ && s < kBudgetSteps - 1) {
        ++s;
    } else if (share_ < budget_ * kRecoverFraction && s > 0) {
        s -= static_cast<int>(std::min<std::uint64_t>(n, static_cast<std::uint64_t>(s)));
    }
    step_ = static_cast<BudgetStep>(s);
    return step_;
}

int budget_level(Coding coding, int level, BudgetStep step) {
    if (coding == Coding::kIdentity) return level;
    const int lowest = std::max(level_range(coding).min, 1);  // br 0 is far worse than br 1
    switch (step) {
        case BudgetStep::kNone: return level;
        case BudgetStep::kLower: return std::max(lowest, lowest + (level - lowest) / 2);
        case BudgetStep::kLowest:
        case BudgetStep::kCheapest:
        case BudgetStep::kIdentity: return std::min(level, lowest);
    }
    return level;
}

Coding cheapest_coding(CodingSet acceptable) {
    // dcz is zstd that also skips what the client already has: cheapest where it is possible.
    for (const Coding c :
         {Coding::kDcz, Coding::kZstd, Coding::kGzip, Coding::kDeflate, Coding::kBrotli}) {
        if (acceptable.has(c)) return c;
    }
    return Coding::kIdentity;
}

}  // namespace mc
