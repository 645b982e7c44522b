// SPDX-License-Identifier: Apache-2.0
// MultiCompressCPUBudget: how much of the machine live compression uses, and how far new
// responses step down to stay within the budget (docs/contract.md "Under load").
#pragma once

#include <cstdint>

#include "mc/coding.h"

namespace mc {

/// Steps, from none to identity. Each applies to new live responses only; sidecars and cache
/// hits are never stepped down.
enum class BudgetStep : std::uint8_t {
    kNone = 0,  ///< the configured level
    kLower,     ///< halfway between the configured level and the coding's lowest
    kLowest,    ///< the coding's lowest level
    kCheapest,  ///< the cheapest coding the client accepts, at its lowest level
    kIdentity,  ///< no compression
};
inline constexpr int kBudgetSteps = 5;

/// Decides the step from the CPU share that live compression used (0..1 of all CPUs), once per
/// sampling interval: one step down while the share is above the budget, one step back up per
/// interval while it is below `kRecoverFraction` of it, so the level settles instead of
/// swinging. Pure: the adapter feeds it samples from the shared counters.
class BudgetController {
public:
    /// A share this far below the budget lets the level recover by one step.
    static constexpr double kRecoverFraction = 0.75;
    /// The sampling interval the smoothing is made for; a longer gap between two samples (a
    /// child that had no request for a while) counts as that many quiet intervals.
    static constexpr std::uint64_t kIntervalNs = 250'000'000;

    explicit BudgetController(double budget_share = 1.0) : budget_(budget_share) {}

    /// One sample: `cpu_ns` of live compression in the interval, `wall_ns` the interval,
    /// `cpus` the machine's CPUs. Returns the step for new responses.
    BudgetStep sample(std::uint64_t cpu_ns, std::uint64_t wall_ns, unsigned cpus);

    [[nodiscard]] BudgetStep step() const { return step_; }
    /// The smoothed share of the last samples (0..1, can exceed 1 briefly).
    [[nodiscard]] double share() const { return share_; }

private:
    double budget_;
    double share_ = 0;
    bool primed_ = false;
    BudgetStep step_ = BudgetStep::kNone;
};

/// The level a step gives for `coding` configured at `level`.
int budget_level(Coding coding, int level, BudgetStep step);

/// The cheapest coding (CPU per byte at its lowest level) in `acceptable`: zstd, then gzip,
/// deflate, br. kIdentity when none is.
Coding cheapest_coding(CodingSet acceptable);

}  // namespace mc
