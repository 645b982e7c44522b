// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: dcz delta sidecars between versions of content-hashed files.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "mc/dictionary.h"
#include "pc_sidecar.h"

namespace mc::precompress {

/// One delta sidecar: `file` encoded against `dictionary` (indexes into the run's sources).
struct DeltaTask {
    std::size_t file = 0;
    std::size_t dictionary = 0;
    DictionaryHash hash{};  ///< of the dictionary's bytes when planned
    std::filesystem::path sidecar;
};

/// What plan_deltas() decided.
struct DeltaPlan {
    std::vector<DeltaTask> write;               ///< missing, stale, or fresh under --force
    std::vector<DeltaTask> fresh;               ///< present and fresh: kept
    std::vector<std::filesystem::path> remove;  ///< delta sidecars of no chosen dictionary
    std::vector<std::string> errors;            ///< "PATH: what: why", one per failed file
    std::vector<std::size_t> failed_files;      ///< sources whose deltas could not be planned
};

/// Groups `sources` into families (mc::parse_hashed_name on the file name: same directory, stem,
/// separator and extension, another hash) and chooses, for every member that `wanted` (stat'ed,
/// not too small), the `n` most recent other members (mtime, newest first; then by name) of
/// non-zero size as its dictionaries, each by its SHA-256 (read here). A chosen delta sidecar
/// (FILE + mc::delta_sidecar_suffix) goes to `write` unless it is present and at least as new as
/// FILE (`fresh`; `force` rewrites it). Every existing delta sidecar of a source in `sources`
/// (found by the walk: `existing`) that is not chosen (its dictionary gone or no longer among the
/// `n`, FILE no longer in a family or too small) goes to `remove`. Sources must have their size
/// and mtime filled in.
DeltaPlan plan_deltas(std::span<const Source> sources, const std::vector<bool>& wanted,
                      std::span<const std::filesystem::path> existing, unsigned n, bool force);

/// What became of one delta sidecar.
struct DeltaResult {
    Outcome outcome = Outcome::kFailed;
    std::uint64_t in_bytes = 0;   ///< FILE's size
    std::uint64_t out_bytes = 0;  ///< the delta's size (the whole dcz body), for kWritten
    bool patch_from = false;      ///< made as `zstd --patch-from` does (mc::make_dcz_delta)
    bool removed_stale = false;   ///< a stale delta sidecar was deleted (kNotSmaller)
    std::string error;            ///< for kFailed
};

/// Writes the delta sidecar of `task` at `level` (mc::make_dcz_delta): reads FILE and the
/// dictionary whole, checks that neither changed since the plan, and installs the body the way
/// every sidecar is installed, but only when it is smaller than FILE and than each fresh
/// FILE.zst / FILE.br / FILE.gz present (otherwise kNotSmaller, and a stale one is removed).
DeltaResult write_delta(const Source& file, const Source& dictionary, const DeltaTask& task,
                        int level, const WriteOptions& options, const std::atomic<bool>& stop);

}  // namespace mc::precompress
