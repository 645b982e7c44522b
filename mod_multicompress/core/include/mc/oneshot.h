// SPDX-License-Identifier: Apache-2.0
// Whole-body compression in one call: gzip and deflate through libdeflate (faster than zlib at the
// same level, valid gzip/zlib for every decoder; its compressor kept between bodies), zstd and dcz
// through a ZSTD_CCtx of their own. Used when a response's whole body is in hand (EOS in the first
// brigade).
#pragma once

#include <cstddef>
#include <span>

#include "mc/coding.h"
#include "mc/config.h"
#include "mc/params.h"
#include "mc/status.h"

struct libdeflate_compressor;

namespace mc {

/// Not thread-safe: one user at a time. Holds one libdeflate compressor (for the last level used),
/// allocated on first use and reused.
///
/// zstd gets a new context for every body. A reused one keeps its match tables from the body
/// before, which zstd does not clear (it moves its indices on instead): in a server, where other
/// work and the other CPU touched memory since, every table lookup of the next body was a cache
/// miss. A new context's tables come from mem_alloc's block cache (a block this CPU freed last)
/// and are cleared in one sequential pass. Measured in Apache (font-awesome.min.css, 31 KB, at
/// zstd-3, 16 connections): 174 against 143 us of CPU per response; the 88 KB manual page 268
/// against 219; a 2.5 KB page 111 against 97.
class OneShotCompressor {
public:
    OneShotCompressor();
    ~OneShotCompressor();
    OneShotCompressor(const OneShotCompressor&) = delete;
    OneShotCompressor& operator=(const OneShotCompressor&) = delete;

    /// Whether `c` has a one-shot path (gzip, deflate, zstd; brotli streams).
    static bool supports(Coding c);
    /// Whether the one-shot path gives what the streaming encoder would for `params` under
    /// `cfg` (libdeflate has no smaller window, no memLevel, and searches harder at 8 and 9).
    static bool suits(const Config& cfg, const EncoderParams& params);
    /// Most output bytes compress() may write for `n` input bytes of coding `c`.
    static std::size_t bound(Coding c, std::size_t n);

    /// Compresses `in` with `params` (after mc::tune, window sized to the body) into `out`, which
    /// must hold bound(params.coding, in.size()) bytes. Returns the compressed size.
    Result<std::size_t> compress(const EncoderParams& params, std::span<const std::byte> in,
                                 std::span<std::byte> out);

private:
    libdeflate_compressor* deflate_ = nullptr;  ///< for deflate_level_
    int deflate_level_ = 0;
};

}  // namespace mc
