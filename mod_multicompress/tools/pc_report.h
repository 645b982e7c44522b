// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: what a run did, counted, and its summary.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mc/coding.h"
#include "pc_console.h"
#include "pc_options.h"
#include "pc_sidecar.h"
#include "pc_walk.h"

namespace mc::precompress {

/// Per-encoding counts and sizes (dcz: the delta sidecars, each counted with its file's size as
/// `original`). `original`/`compressed` cover the sidecars present after the run (written now or
/// already fresh), so a second run reports the same sizes as the first.
struct CodingTotals {
    std::uint64_t written = 0, fresh = 0, not_smaller = 0, too_small = 0, failed = 0, planned = 0;
    std::uint64_t original = 0, compressed = 0;
};

/// Per-file verdict bits, from the outcomes of its sidecars.
enum FileFlag : unsigned {
    kFlagWritten = 1u << 0,
    kFlagFresh = 1u << 1,
    kFlagNotSmaller = 1u << 2,
    kFlagTooSmall = 1u << 3,
    kFlagFailed = 1u << 4,
    kFlagPlanned = 1u << 5,
    kFlagInterrupted = 1u << 6,
};

/// Everything the summary reports.
struct Tally {
    std::array<CodingTotals, kCodingCount> totals{};
    std::vector<unsigned> flags;  ///< per source file
    std::uint64_t removed_stale = 0;
    std::uint64_t removed_ssi = 0;  ///< sidecars of SSI files removed
    std::uint64_t ssi_skipped = 0;
    std::uint64_t patch_from = 0;  ///< deltas made as `zstd --patch-from` does (smaller)

    /// Counts `outcome` for `file`'s sidecar of coding `c`.
    void record(std::size_t file, Coding c, Outcome outcome);
};

/// "12.5%", or "-" when `whole` is 0.
std::string percent(std::uint64_t part, std::uint64_t whole);

/// Prints the summary (files line, table, removals) unless quiet; returns the exit status
/// (0 ok, 1 some failed, 130 interrupted).
int print_summary(const Tally& tally, const WalkStats& walk, std::size_t selected, const Options& o,
                  bool interrupted, Console& console);

}  // namespace mc::precompress
