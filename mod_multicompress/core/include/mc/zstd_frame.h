// SPDX-License-Identifier: Apache-2.0
// Reading a zstd frame header (RFC 8878 §3.1.1), to check a precompressed file's window.
#pragma once

#include <cstdint>
#include <span>

#include "mc/status.h"

namespace mc {

/// The most bytes of a file needed to read a zstd frame header.
inline constexpr std::size_t kZstdFrameHeaderMax = 18;

/// The window size a decoder needs for the zstd frame that starts `head` (the first bytes of a
/// file, up to kZstdFrameHeaderMax). Errors for anything but a zstd frame header.
Result<std::uint64_t> zstd_frame_window(std::span<const std::byte> head);

/// Checks a whole zstd body, frame by frame (RFC 8878 §3.1: frames follow one another, skippable
/// frames among them): every frame needs at most `max_window`, and the frames end exactly where
/// the body does. kWindowTooLarge names the first frame over the limit (`zstd --long` writes
/// 128 MiB); kCorrupt means `body` is not a sequence of whole frames.
Status check_zstd_frames(std::span<const std::byte> body, std::uint64_t max_window);

}  // namespace mc
