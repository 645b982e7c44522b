// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: finding the files to compress under each root.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace mc::precompress {

/// What a walk saw, for the summary.
struct WalkStats {
    std::uint64_t files = 0;          ///< regular files (and symlinks to them) seen, not sidecars
    std::uint64_t sidecars = 0;       ///< FILE.zst, FILE.br, FILE.gz, FILE.dcz-HEX16 next to a FILE
    std::uint64_t dirs = 0;           ///< directories read
    std::uint64_t skipped_links = 0;  ///< symlinks to directories, not followed
    std::uint64_t errors = 0;         ///< directories or entries that could not be read
};

/// Checks a root given on the command line: it must exist and be a readable directory (a symlink
/// to one is fine: the user named it) or a regular file. Returns an error message, or "" if usable.
std::string check_root(const std::filesystem::path& root);

/// What a walk found.
struct WalkFound {
    std::vector<std::filesystem::path> files;  ///< to compress
    std::vector<std::filesystem::path> ssi;    ///< of a selected type, but SSI (is_ssi): skipped
    std::vector<std::filesystem::path> delta_sidecars;  ///< FILE.dcz-HEX16 next to a FILE
};

/// Walks `root` depth first in name order, without following symlinks to directories, and
/// appends each regular file (or symlink to one) whose name has_selected_type() to `found.files`,
/// or to `found.ssi` when it is_ssi() (by the target's mode) and `include_ssi` is false. A root
/// that is a file is taken as it is, whatever its type (unless SSI). Unreadable directories are
/// reported through `on_error(message)` and counted; the walk goes on.
void walk_tree(const std::filesystem::path& root, std::span<const std::string> types,
               bool include_ssi, WalkFound& found, WalkStats& stats,
               const std::function<void(const std::string&)>& on_error);

/// Keeps one of each file reached twice (overlapping roots, "DIR DIR/sub"), compared by their
/// absolute, normalized paths; the result is sorted by those.
void drop_duplicates(std::vector<std::filesystem::path>& files);

}  // namespace mc::precompress
