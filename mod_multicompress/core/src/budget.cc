// SPDX-License-Identifier: Apache-2.0
// The CPU budget's controller and what each step means for a coding and level.
#include "mc/budget.h"

#include <algorithm>

#include "mc/params.h"

namespace mc {

BudgetStep BudgetController::sample(std::uint64_t cpu_ns, std::uint64_t wall_ns, unsigned cpus) {
    if (wall_ns == 0 || cpus == 0) return step_;
    const double now =
        static_cast<double>(cpu_ns) / (static_cast<double>(wall_ns) * static_cast<double>(cpus));
    // Smoothed over a few samples: one burst does not step the level down, a sustained share does.
    share_ = primed_ ? 0.5 * share_ + 0.5 * now : now;
    primed_ = true;
    auto s = static_cast<int>(step_);
    if (share_ > budget_ && s < kBudgetSteps - 1) {
        ++s;
    } else if (share_ < budget_ * kRecoverFraction && s > 0) {
        --s;
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
    for (const Coding c : {Coding::kZstd, Coding::kGzip, Coding::kDeflate, Coding::kBrotli}) {
        if (acceptable.has(c)) return c;
    }
    return Coding::kIdentity;
}

}  // namespace mc
