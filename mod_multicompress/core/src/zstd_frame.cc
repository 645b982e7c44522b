// SPDX-License-Identifier: Apache-2.0
// zstd frame header parsing (RFC 8878 §3.1.1.1), without libzstd's static-only API.
#include "mc/zstd_frame.h"

#include <zstd.h>

#include <algorithm>

namespace mc {

namespace {
std::uint64_t read_le(std::span<const std::byte> b, std::size_t at, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(b[at + i])) << (8 * i);
    }
    return v;
}
}  // namespace

Result<std::uint64_t> zstd_frame_window(std::span<const std::byte> head) {
    constexpr std::uint64_t kMagic = 0xFD2FB528;
    if (head.size() < 5 || read_le(head, 0, 4) != kMagic) {
        return Status{Code::kCorrupt, "not a zstd frame"};
    }
    const auto fhd = std::to_integer<std::uint8_t>(head[4]);
    const unsigned fcs_flag = fhd >> 6;
    const bool single_segment = (fhd & 0x20) != 0;
    if ((fhd & 0x08) != 0) return Status{Code::kCorrupt, "reserved bit set in zstd frame header"};
    static constexpr std::size_t kDidSize[] = {0, 1, 2, 4};
    const std::size_t did_size = kDidSize[fhd & 3];
    std::size_t pos = 5;
    if (!single_segment) {
        if (head.size() < pos + 1) return Status{Code::kCorrupt, "truncated zstd frame header"};
        const auto wd = std::to_integer<std::uint8_t>(head[pos]);
        const unsigned exponent = wd >> 3;
        const unsigned mantissa = wd & 7u;
        const std::uint64_t base = std::uint64_t{1} << (10 + exponent);
        return base + (base / 8) * mantissa;
    }
    // Single segment: the window is the frame content size.
    pos += did_size;
    static constexpr std::size_t kFcsSize[] = {1, 2, 4, 8};
    const std::size_t fcs_size = kFcsSize[fcs_flag];
    if (head.size() < pos + fcs_size) return Status{Code::kCorrupt, "truncated zstd frame header"};
    std::uint64_t fcs = read_le(head, pos, fcs_size);
    if (fcs_size == 2) fcs += 256;
    return fcs;
}

Status check_zstd_frames(std::span<const std::byte> body, std::uint64_t max_window) {
    constexpr std::uint64_t kSkippableMask = 0xFFFFFFF0;
    constexpr std::uint64_t kSkippableMagic = 0x184D2A50;
    if (body.empty()) return {Code::kCorrupt, "no zstd frame"};
    while (!body.empty()) {
        const bool skippable =
            body.size() >= 4 && (read_le(body, 0, 4) & kSkippableMask) == kSkippableMagic;
        if (!skippable) {
            const auto window =
                zstd_frame_window(body.first(std::min(body.size(), kZstdFrameHeaderMax)));
            if (!window.is_ok()) return window.status();
            if (window.value() > max_window) {
                return {Code::kWindowTooLarge, "a zstd frame needs a larger window"};
            }
        }
        // Walks the frame's block headers (or a skippable frame's size): no decoding.
        const std::size_t n = ZSTD_findFrameCompressedSize(body.data(), body.size());
        if (ZSTD_isError(n) || n == 0 || n > body.size()) {
            return {Code::kCorrupt, "not a sequence of whole zstd frames"};
        }
        body = body.subspan(n);
    }
    return Status::ok();
}

}  // namespace mc
