// SPDX-License-Identifier: Apache-2.0
// Whole-body compression in one call, with state kept between bodies: gzip and deflate through
// libdeflate (faster than zlib at the same level, valid gzip/zlib for every decoder), zstd through
// a reused ZSTD_CCtx. Used when a response's whole body is in hand (EOS in the first brigade).
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "mc/coding.h"
#include "mc/config.h"
#include "mc/params.h"
#include "mc/status.h"

struct libdeflate_compressor;

namespace mc {

/// Not thread-safe: one user at a time. Holds one libdeflate compressor (for the last level used)
/// and one zstd context, allocated on first use and reused (the zstd context is reset between
/// bodies, and dropped when it grew past kOneShotKeepLimit).
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

    /// Bytes of library state held between bodies (for bounding what a pool keeps).
    [[nodiscard]] std::size_t retained_bytes() const;

private:
    struct ZstdHolder;
    libdeflate_compressor* deflate_ = nullptr;  ///< for deflate_level_
    int deflate_level_ = 0;
    std::unique_ptr<ZstdHolder> zstd_;
};

/// Most bytes of zstd state kept after a body: a context grown by a large body at a high level
/// (tens of MB) is freed rather than kept for the next, usually small, one.
inline constexpr std::size_t kOneShotKeepLimit = 4 * 1024 * 1024;

}  // namespace mc
