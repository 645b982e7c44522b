// SPDX-License-Identifier: Apache-2.0
// Content codings the module knows, and their HTTP tokens.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mc {

/// Content codings. The numeric values index per-coding arrays in Config.
/// kDcz is zstd against a dictionary the client holds (RFC 9842): never negotiated without one.
enum class Coding : std::uint8_t { kIdentity = 0, kGzip, kDeflate, kBrotli, kZstd, kDcz };

inline constexpr std::size_t kCodingCount = 6;

/// The compressing codings that need nothing but the body, in the default server preference
/// order (docs/contract.md: zstd br gzip); dcz also needs a dictionary.
inline constexpr std::array<Coding, 4> kAllCompressing = {Coding::kZstd, Coding::kBrotli,
                                                          Coding::kGzip, Coding::kDeflate};

constexpr std::size_t index(Coding c) {
    return static_cast<std::size_t>(c);
}

/// A set of codings, as a bit mask.
class CodingSet {
public:
    constexpr CodingSet() = default;
    constexpr CodingSet(std::initializer_list<Coding> codings) {
        for (Coding c : codings) add(c);
    }
    constexpr void add(Coding c) { bits_ = static_cast<std::uint8_t>(bits_ | bit(c)); }
    constexpr void remove(Coding c) { bits_ = static_cast<std::uint8_t>(bits_ & ~bit(c)); }
    [[nodiscard]] constexpr bool has(Coding c) const { return (bits_ & bit(c)) != 0; }
    [[nodiscard]] constexpr bool empty() const { return bits_ == 0; }
    [[nodiscard]] constexpr CodingSet operator|(CodingSet o) const {
        return from_bits(bits_ | o.bits_);
    }
    [[nodiscard]] constexpr CodingSet operator&(CodingSet o) const {
        return from_bits(bits_ & o.bits_);
    }
    [[nodiscard]] constexpr bool operator==(const CodingSet&) const = default;
    [[nodiscard]] constexpr std::uint8_t bits() const { return bits_; }

private:
    static constexpr std::uint8_t bit(Coding c) {
        return static_cast<std::uint8_t>(1u << index(c));
    }
    static constexpr CodingSet from_bits(unsigned b) {
        CodingSet s;
        s.bits_ = static_cast<std::uint8_t>(b);
        return s;
    }
    std::uint8_t bits_ = 0;
};

/// The token sent in Content-Encoding: "identity", "gzip", "deflate", "br", "zstd", "dcz".
std::string_view coding_token(Coding c);

/// The file suffix of a precompressed sidecar: ".zst", ".br", ".gz"; empty for deflate, dcz and
/// identity, which have none (MultiCompressStatic and multicompress-precompress agree on these).
std::string_view sidecar_suffix(Coding c);

/// Parses a content-coding token as it appears in Accept-Encoding or configuration,
/// case-insensitively. "x-gzip" is gzip (RFC 9110 §8.4.1.3). Unknown tokens give nullopt.
std::optional<Coding> parse_coding(std::string_view token);

/// ASCII case-insensitive comparison, as HTTP tokens need.
bool iequals(std::string_view a, std::string_view b);
/// ASCII lower case (HTTP tokens, file extensions); other bytes unchanged.
std::string lowercase(std::string_view s);

/// Trims HTTP optional whitespace (SP, HTAB) from both ends.
std::string_view trim_ows(std::string_view s);

}  // namespace mc
