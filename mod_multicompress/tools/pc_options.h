// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: command-line options, their defaults and their parsing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mc/coding.h"

namespace mc::precompress {

inline constexpr std::string_view kProgramName = "multicompress-precompress";

/// The codings that have a sidecar file, in the default order (the contract's preference order
/// (docs/contract.md)). deflate has none: MultiCompressStatic serves FILE.zst, FILE.br and FILE.gz
/// only.
inline constexpr std::array<Coding, 3> kSidecarCodings = {Coding::kZstd, Coding::kBrotli,
                                                          Coding::kGzip};

/// The strongest levels every browser can decode: zstd 19 (window capped at 2^23 by mc::tune,
/// RFC 9659), br 11, gzip 9.
int default_static_level(Coding c);

/// File name extensions compressed by default: text formats and uncompressed binary formats
/// served on the web. Already-compressed formats (png, jpg, webp, woff2, zip, ...) are left out.
std::span<const std::string_view> default_types();

inline constexpr unsigned kDefaultDeltas = 3;
inline constexpr unsigned kMaxDeltas = 64;
inline constexpr std::size_t kDefaultDictionarySize = 64 * 1024;
inline constexpr unsigned kDefaultHoldoutPercent = 20;
inline constexpr unsigned kMaxHoldoutPercent = 90;

/// Everything the command line decides.
struct Options {
    std::vector<Coding> codings;             ///< sidecars to write, no duplicates
    std::array<int, kCodingCount> levels{};  ///< level per coding (index(Coding))
    std::vector<std::string> types;          ///< lowercase extensions without the dot, sorted
    unsigned jobs = 0;                       ///< worker threads; 0 = hardware_concurrency
    std::uint64_t min_size = 256;            ///< smaller sources get no sidecar
    bool quiet = false;                      ///< only errors
    bool verbose = false;                    ///< one line per sidecar written or removed
    bool dry_run = false;                    ///< plan and report, write nothing
    bool force = false;                      ///< rewrite fresh sidecars too
    bool fsync = false;                      ///< fsync sidecars and their directories
    bool no_progress = false;                ///< never show the progress bar
    /// dcz delta sidecars per file of a family of content-hashed names (mc/hashed_name.h),
    /// against the N most recent other members (by mtime); 0: none made, none removed.
    unsigned deltas = kDefaultDeltas;
    bool include_ssi = false;  ///< also compress files httpd would run through SSI (is_ssi)
    std::vector<std::filesystem::path> roots;

    /// --train-dictionary OUT: train a site dictionary from the roots into OUT instead.
    std::filesystem::path train_output;
    std::size_t dictionary_size = kDefaultDictionarySize;  ///< --dictionary-size
    unsigned holdout_percent = kDefaultHoldoutPercent;     ///< --holdout: measured, not trained on
};

enum class ParseOutcome { kRun, kHelp, kVersion, kError };

struct ParseResult {
    ParseOutcome outcome = ParseOutcome::kError;
    Options options;
    std::string error;  ///< for kError: what was wrong, one line
};

/// Parses argv[1..argc). Accepts "--opt value" and "--opt=value"; "--" ends the options.
ParseResult parse_options(std::span<const char* const> args);

/// The --help text.
std::string usage();

/// True when `name` (a file name, no directory) has one of `types` (sorted, lowercase) as its
/// extension, compared case-insensitively, and is not itself a sidecar.
bool has_selected_type(std::string_view name, std::span<const std::string> types);

/// Whether httpd would run the file through mod_include by its look: `.shtml`, `.stm` and
/// `.shtm` (Debian's and httpd's example `AddOutputFilter INCLUDES` lines), and `.html`/`.htm`
/// whose owner-execute bit is set (`XBitHack`). Its sidecars would hold the unprocessed template.
bool is_ssi(std::string_view name, unsigned mode);

}  // namespace mc::precompress
