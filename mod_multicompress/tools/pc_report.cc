// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: the summary of a run.
#include "pc_report.h"

#include <cstdio>

namespace mc::precompress {

namespace {

unsigned flag_of(Outcome o) {
    switch (o) {
        case Outcome::kWritten: return kFlagWritten;
        case Outcome::kFresh: return kFlagFresh;
        case Outcome::kNotSmaller: return kFlagNotSmaller;
        case Outcome::kTooSmall: return kFlagTooSmall;
        case Outcome::kPlanned: return kFlagPlanned;
        case Outcome::kFailed: return kFlagFailed;
        case Outcome::kInterrupted: return kFlagInterrupted;
    }
    return 0;
}

using ull = unsigned long long;

}  // namespace

void Tally::record(std::size_t file, Coding c, Outcome outcome) {
    flags[file] |= flag_of(outcome);
    CodingTotals& t = totals[index(c)];
    switch (outcome) {
        case Outcome::kWritten: ++t.written; break;
        case Outcome::kFresh: ++t.fresh; break;
        case Outcome::kNotSmaller: ++t.not_smaller; break;
        case Outcome::kTooSmall: ++t.too_small; break;
        case Outcome::kPlanned: ++t.planned; break;
        case Outcome::kFailed: ++t.failed; break;
        case Outcome::kInterrupted: break;
    }
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
    if (whole == 0) return "-";
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%",
                  100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return buf;
}

int print_summary(const Tally& tally, const WalkStats& walk, std::size_t selected, const Options& o,
                  bool interrupted, Console& console) {
    std::uint64_t compressed = 0, fresh = 0, not_smaller = 0, too_small = 0, failed = 0;
    for (const unsigned f : tally.flags) {
        if ((f & kFlagInterrupted) != 0) interrupted = true;
        if ((f & kFlagFailed) != 0) {
            ++failed;
        } else if ((f & (kFlagWritten | kFlagPlanned)) != 0) {
            ++compressed;
        } else if ((f & kFlagTooSmall) != 0) {
            ++too_small;
        } else if ((f & kFlagNotSmaller) != 0) {
            ++not_smaller;
        } else if ((f & kFlagFresh) != 0) {
            ++fresh;
        }
    }
    failed += walk.errors;

    if (!o.quiet) {
        char line[320];
        std::snprintf(line, sizeof line,
                      "files: %llu scanned, %zu selected: %llu %s, %llu fresh, %llu not smaller, "
                      "%llu too small, %llu failed",
                      static_cast<ull>(walk.files), selected, static_cast<ull>(compressed),
                      o.dry_run ? "to compress" : "compressed", static_cast<ull>(fresh),
                      static_cast<ull>(not_smaller), static_cast<ull>(too_small),
                      static_cast<ull>(failed));
        std::string files_line = line;
        if (tally.ssi_skipped != 0) {
            files_line += "; " + std::to_string(tally.ssi_skipped) + " skipped as SSI";
        }
        console.out(files_line);
        std::snprintf(line, sizeof line, "%-8s %8s %6s %12s %7s %12s %12s %7s", "encoding",
                      o.dry_run ? "to write" : "written", "fresh", "not smaller", "failed",
                      "original", "sidecars", "ratio");
        console.out(line);
        std::vector<Coding> rows(o.codings.begin(), o.codings.end());
        const CodingTotals& dcz = tally.totals[index(Coding::kDcz)];
        if (o.deltas != 0 &&
            (dcz.written | dcz.fresh | dcz.not_smaller | dcz.failed | dcz.planned) != 0) {
            rows.push_back(Coding::kDcz);  // deltas, when the tree has any to make
        }
        for (const Coding c : rows) {
            const CodingTotals& t = tally.totals[index(c)];
            std::snprintf(line, sizeof line, "%-8s %8llu %6llu %12llu %7llu %12s %12s %7s",
                          std::string(coding_token(c)).c_str(),
                          static_cast<ull>(o.dry_run ? t.planned : t.written),
                          static_cast<ull>(t.fresh), static_cast<ull>(t.not_smaller),
                          static_cast<ull>(t.failed), format_bytes(t.original).c_str(),
                          format_bytes(t.compressed).c_str(),
                          percent(t.compressed, t.original).c_str());
            console.out(line);
        }
        if (tally.removed_stale != 0) {
            console.out(
                std::string(o.dry_run ? "stale sidecars to remove: " : "stale sidecars removed: ") +
                std::to_string(tally.removed_stale));
        }
        if (tally.removed_ssi != 0) {
            console.out(std::string(o.dry_run ? "sidecars of SSI files to remove: "
                                              : "sidecars of SSI files removed: ") +
                        std::to_string(tally.removed_ssi));
        }
        if (walk.skipped_links != 0 && o.verbose) {
            console.out("symlinked directories not followed: " +
                        std::to_string(walk.skipped_links));
        }
    }
    if (interrupted) {
        console.err(std::string(kProgramName) + ": interrupted; temporary files removed");
        return 130;
    }
    return failed != 0 ? 1 : 0;
}

}  // namespace mc::precompress
