// SPDX-License-Identifier: Apache-2.0
// Deltas made off the request path (multicompress-precompress): complete dcz response bodies
// against a dictionary, and the names of the files that hold them next to the file they encode.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "mc/dictionary.h"
#include "mc/status.h"

namespace mc {

/// A delta sidecar is named `FILE.dcz-<hex>`: FILE's name, ".dcz-", and the first 16 lowercase
/// hex digits of the dictionary's SHA-256. It holds a complete dcz body (kDczHeaderSize bytes of
/// header with the whole hash, then the zstd frame) and carries FILE's mtime, like every sidecar.
inline constexpr std::string_view kDeltaSidecarInfix = ".dcz-";
inline constexpr std::size_t kDeltaSidecarHexDigits = 16;

inline constexpr std::size_t kDeltaSidecarSuffixSize =
    kDeltaSidecarInfix.size() + kDeltaSidecarHexDigits;

/// ".dcz-" + the first 16 hex digits of `dictionary`: append it to FILE's name.
std::string delta_sidecar_suffix(const DictionaryHash& dictionary);
/// The same characters in place (no allocation: it is made on every request naming a dictionary).
std::array<char, kDeltaSidecarSuffixSize> delta_sidecar_suffix_chars(
    const DictionaryHash& dictionary);

/// A delta sidecar's name taken apart: `source` is FILE's name (or path), `hex` the 16 digits.
struct DeltaSidecarName {
    std::string_view source;
    std::string_view hex;
};
/// Whether `name` (a file name or a path) ends in ".dcz-" and 16 lowercase hex digits after a
/// non-empty FILE name; nullopt otherwise.
std::optional<DeltaSidecarName> parse_delta_sidecar_name(std::string_view name);

/// Whether `body` starts with the dcz header for `dictionary` (its whole SHA-256): what to check
/// before sending a delta sidecar to a request that names `dictionary`, since the file name holds
/// only 64 bits of the hash. False for a body shorter than the header.
bool dcz_body_names(std::span<const std::byte> body, const DictionaryHash& dictionary);

/// A dcz body made off the request path.
struct DczDelta {
    std::string body;         ///< the whole response body: the 40-byte header, then the frame
    bool patch_from = false;  ///< made as `zstd --patch-from` does (smaller than the live frame)
};

/// The dcz body of `body` against `dictionary` at the level it was prepared for (1-19), the
/// smaller of two frames:
///   - the module's own at that level (what mc::make_encoder / mc::OneShotCompressor send live:
///     the prepared tables, the dcz window), and
///   - `zstd --patch-from`'s (zstd 1.5 programs/fileio.c): the dictionary as a prefix, a window of
///     highbit(body) + 1 (within dcz_max_window_log), long-distance matching when that window is
///     above the level's cycle log;
/// so it is never larger than either (frames without checksum or dictionary id, with the content
/// size; `zstd --patch-from` adds a 4-byte checksum). Its window stays within
/// dcz_max_window_log(dictionary size): max(8 MiB, 1.25 × dictionary).
Result<DczDelta> make_dcz_delta(const PreparedDictionary& dictionary,
                                std::span<const std::byte> body);

}  // namespace mc
