// SPDX-License-Identifier: Apache-2.0
// Encoder parameters, their valid ranges, and sizing them to a known body length.
#pragma once

#include <cstdint>

#include "mc/coding.h"

namespace mc {

class PreparedDictionary;

/// Valid range of a per-coding setting.
struct Range {
    int min;
    int max;
    [[nodiscard]] constexpr bool contains(int v) const { return v >= min && v <= max; }
};

/// docs/contract.md: gzip 1–9, br 0–11, zstd and dcz 1–19 (deflate shares gzip's).
Range level_range(Coding c);
/// docs/contract.md: log2 window, gzip 9–15, br 10–24, zstd 10–23.
Range window_range(Coding c);
/// docs/contract.md defaults: gzip 6, br 4, zstd 3.
int default_level(Coding c);
/// The strongest level (gzip 9, br 11, zstd 19): what is made off the request path, by the cache
/// upgrade (MultiCompressCacheLevel's default) and by multicompress-precompress.
inline int strongest_level(Coding c) {
    return level_range(c).max;
}

/// RFC 9659: a zstd frame for HTTP must not need a window over 8 MiB.
inline constexpr int kZstdMaxWindowLog = 23;
/// zlib's memLevel range and the value we use by default (mod_deflate's 9 costs CPU for nothing).
inline constexpr Range kMemLevelRange{1, 9};
inline constexpr int kDefaultMemLevel = 8;
/// Brotli's lgblock range (0 = let the library choose).
inline constexpr Range kBrotliBlockRange{16, 24};

/// The log2 window libzstd picks for `level` on large inputs (at most 23 for levels 1–19).
int zstd_level_window_log(int level);

/// Everything an encoder needs to start.
struct EncoderParams {
    Coding coding = Coding::kGzip;
    int level = 6;
    int window_log = 0;           ///< 0: library default (zstd: from level, capped to 23)
    int mem_level = 0;            ///< zlib only; 0: kDefaultMemLevel
    int brotli_lgblock = 0;       ///< brotli only; 0: library default
    std::int64_t size_hint = -1;  ///< expected body length when known, else -1
    /// The body is exactly size_hint bytes (it is in hand): zstd may pledge it in the frame.
    /// Never set from a Content-Length alone, which a handler may get wrong.
    bool exact_size = false;
    /// dcz only: the dictionary the body is compressed against (kept alive by the caller).
    const PreparedDictionary* dictionary = nullptr;
};

/// Makes `p` valid and sized for the body: clamps level and window to their ranges, fills the
/// defaults, caps zstd at 2^23, and, when `p.size_hint` is known, shrinks the window (and zlib's
/// memLevel) to the smallest that still covers the whole body (as nginx's gzip filter does), so a
/// 2 KB page does not pay for a 32 KB / 4 MB / 8 MB window.
EncoderParams tune(EncoderParams p);

}  // namespace mc
