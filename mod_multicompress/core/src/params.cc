// SPDX-License-Identifier: Apache-2.0
// Parameter ranges and window sizing to the body length.
#include "mc/params.h"

#include <algorithm>

#include "mc/dictionary.h"

namespace mc {

Range level_range(Coding c) {
    switch (c) {
        case Coding::kBrotli: return {0, 11};
        case Coding::kZstd:
        case Coding::kDcz: return {1, 19};
        case Coding::kGzip:
        case Coding::kDeflate: return {1, 9};
        case Coding::kIdentity: break;
    }
    return {0, 0};
}

Range window_range(Coding c) {
    switch (c) {
        case Coding::kBrotli: return {10, 24};
        case Coding::kZstd: return {10, kZstdMaxWindowLog};
        case Coding::kDcz: return {10, 27};  // dcz_window_log keeps it within what the client takes
        case Coding::kGzip:
        case Coding::kDeflate: return {9, 15};
        case Coding::kIdentity: break;
    }
    return {0, 0};
}

int default_level(Coding c) {
    switch (c) {
        case Coding::kBrotli: return 4;
        case Coding::kZstd:
        case Coding::kDcz: return 3;
        case Coding::kGzip:
        case Coding::kDeflate: return 6;
        case Coding::kIdentity: break;
    }
    return 0;
}

namespace {

// Library defaults, used when the configuration leaves the window unset.
int default_window(Coding c) {
    switch (c) {
        case Coding::kBrotli: return 22;  // BROTLI_DEFAULT_WINDOW
        case Coding::kZstd:               // from the level; capped below
        case Coding::kDcz:                // from the dictionary (tune)
            return 0;
        case Coding::kGzip:
        case Coding::kDeflate: return 15;  // MAX_WBITS
        case Coding::kIdentity: break;
    }
    return 0;
}

// Smallest log2 window in [lo, hi] whose usable span (window minus `slack`) covers `n` bytes.
int window_for_length(std::int64_t n, int lo, int hi, std::int64_t slack) {
    int w = lo;
    while (w < hi && (std::int64_t{1} << w) - slack < n) ++w;
    return w;
}

}  // namespace

int zstd_level_window_log(int level) {
    // libzstd's parameter table for large inputs (lib/compress/clevels.h, stable since 1.4):
    // 19 at level 1, 20 at 2, 21 at 3–8, 22 at 9–16, 23 at 17–19.
    if (level <= 1) return 19;
    if (level == 2) return 20;
    if (level <= 8) return 21;
    if (level <= 16) return 22;
    return kZstdMaxWindowLog;
}

EncoderParams tune(EncoderParams p) {
    const Range levels = level_range(p.coding);
    p.level = std::clamp(p.level, levels.min, levels.max);
    const Range windows = window_range(p.coding);
    if (p.window_log == 0) p.window_log = default_window(p.coding);
    if (p.window_log != 0) p.window_log = std::clamp(p.window_log, windows.min, windows.max);
    if (p.mem_level == 0) p.mem_level = kDefaultMemLevel;
    p.mem_level = std::clamp(p.mem_level, kMemLevelRange.min, kMemLevelRange.max);
    if (p.brotli_lgblock != 0) {
        p.brotli_lgblock =
            std::clamp(p.brotli_lgblock, kBrotliBlockRange.min, kBrotliBlockRange.max);
    }
    if (p.coding == Coding::kDcz) {
        // RFC 9842 §4: reach back over the whole dictionary, within what a client accepts.
        p.window_log = dcz_window_log(p.dictionary != nullptr ? p.dictionary->size() : 0,
                                      p.size_hint, zstd_level_window_log(p.level));
        return p;
    }
    if (p.size_hint < 0) return p;

    switch (p.coding) {
        case Coding::kGzip:
        case Coding::kDeflate: {
            // nginx ngx_http_gzip_filter_memory: zlib needs 262 bytes of lookahead; each halving
            // of the window also halves the hash table (memLevel), min 1.
            const int w = window_for_length(p.size_hint, windows.min, p.window_log, 262);
            p.mem_level = std::max(1, p.mem_level - (p.window_log - w));
            p.window_log = w;
            break;
        }
        case Coding::kBrotli:
            // ngx_brotli: the window need not exceed the body (brotli reserves 16 bytes).
            p.window_log = window_for_length(p.size_hint, windows.min, p.window_log, 16);
            break;
        case Coding::kZstd: {
            // Never above what the level would use on its own: a known length only shrinks.
            const int cap = p.window_log == 0 ? zstd_level_window_log(p.level) : p.window_log;
            p.window_log = window_for_length(p.size_hint, windows.min, cap, 0);
            break;
        }
        case Coding::kDcz:  // handled above
        case Coding::kIdentity: break;
    }
    return p;
}

}  // namespace mc
