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

}  // namespace mc
