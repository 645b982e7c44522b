// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: checking, writing and removing one sidecar file.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "mc/params.h"

namespace mc::precompress {

/// A source file as stat() saw it when the run was planned.
struct Source {
    std::filesystem::path path;
    std::uint64_t size = 0;
    timespec mtime{};
};

/// What became of one sidecar.
enum class Outcome : std::uint8_t {
    kWritten,      ///< compressed and renamed into place
    kFresh,        ///< already as new as its source; left alone
    kNotSmaller,   ///< compressing did not make it smaller; no sidecar (a stale one removed)
    kTooSmall,     ///< source below --min-size; not compressed
    kPlanned,      ///< --dry-run: would be written
    kFailed,       ///< an error, reported in SidecarResult::error
    kInterrupted,  ///< SIGINT/SIGTERM arrived; the temporary file was removed
};

struct SidecarResult {
    Outcome outcome = Outcome::kFailed;
    std::uint64_t in_bytes = 0;   ///< the source's size
    std::uint64_t out_bytes = 0;  ///< the sidecar's size, for kWritten
    bool removed_stale = false;   ///< an out-of-date sidecar was deleted
    std::string error;            ///< for kFailed: "PATH: what: reason"
};

enum class SidecarState : std::uint8_t { kMissing, kFresh, kStale, kNotAFile };

/// `a` is not older than `b`.
constexpr bool not_older(const timespec& a, const timespec& b) {
    return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec >= b.tv_nsec;
}

/// The sidecar at `path` against its source: fresh when its mtime >= the source's (the rule
/// MultiCompressStatic applies). `size` receives its size when it exists. Errors other than
/// ENOENT go to `error` (and the state is kMissing).
SidecarState stat_sidecar(const std::filesystem::path& path, const timespec& source_mtime,
                          std::uint64_t& size, std::string& error);

/// Deletes the sidecar at `path` if it is a regular file older than `source_mtime` (or any regular
/// file when `even_if_fresh`), so that it cannot be served out of date. Returns true if it removed
/// one; errors other than ENOENT go to `error`.
bool remove_stale(const std::filesystem::path& path, const timespec& source_mtime,
                  bool even_if_fresh, std::string& error);

struct WriteOptions {
    bool fsync = false;         ///< fsync the sidecar and its directory
    bool remove_fresh = false;  ///< --force: a fresh sidecar that is no longer smaller goes too
};

/// Compresses `src` with `params` into `sidecar`: streams it through mc::make_encoder into a
/// temporary file in the same directory, gives that file the source's permissions and mtime, and
/// renames it over `sidecar`, so a reader sees either the old sidecar or the whole new one. Output
/// that reaches the source's size is abandoned early (kNotSmaller) and a stale sidecar removed.
/// A source that changes while it is read is not written (kFailed: "changed while compressing").
/// Adds the bytes read to `progress`; checks `stop` between reads.
SidecarResult write_sidecar(const Source& src, const std::filesystem::path& sidecar,
                            const EncoderParams& params, const WriteOptions& options,
                            std::atomic<std::uint64_t>& progress, const std::atomic<bool>& stop);

/// Same size and mtime: a file that has not changed in between.
bool same_contents_stamp(const struct stat& a, const struct stat& b);

/// Reads the whole regular file at `path` into `out`, with its fstat in `st`; fails ("changed
/// while reading") if it changed meanwhile. Returns "" or an error message ("PATH: what: why").
std::string read_whole(const std::filesystem::path& path, std::string& out, struct stat& st);

/// Writes `bytes` as `sidecar` the way every sidecar is written: a temporary file in the same
/// directory, given the permission bits (never executable), owner (as root) and mtime of
/// `source`, synced with --fsync, then renamed into place. Returns "" or an error message.
std::string install_sidecar(std::string_view bytes, const std::filesystem::path& sidecar,
                            const struct stat& source, const WriteOptions& options);

}  // namespace mc::precompress
