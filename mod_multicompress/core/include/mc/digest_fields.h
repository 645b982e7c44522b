// SPDX-License-Identifier: Apache-2.0
// Integrity fields (RFC 9530): Content-Digest and Repr-Digest, Dictionaries of algorithm -> byte
// sequence. Parsed, checked against the bytes they describe, and made again with the same
// algorithms for other bytes (a compressed body).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mc/status.h"

namespace mc {

/// The algorithms of RFC 9530's registry whose status is "Active" (§7.2): the others
/// (md5, sha, unixsum, unixcksum, adler, crc32c) are "Deprecated" and are not made again.
enum class DigestAlgorithm : std::uint8_t { kSha256, kSha512 };
inline constexpr std::size_t kDigestAlgorithmCount = 2;

/// A set of DigestAlgorithm as a bit mask.
using DigestAlgorithms = std::uint8_t;
constexpr DigestAlgorithms digest_bit(DigestAlgorithm a) {
    return static_cast<DigestAlgorithms>(1u << static_cast<unsigned>(a));
}

/// "sha-256" / "sha-512" and nullopt for any other key.
std::optional<DigestAlgorithm> parse_digest_algorithm(std::string_view key);
std::string_view digest_algorithm_key(DigestAlgorithm a);
/// 32 / 64 bytes.
std::size_t digest_size(DigestAlgorithm a);

/// One Content-Digest or Repr-Digest field as the handler sent it.
struct DigestField {
    struct Member {
        DigestAlgorithm algorithm;
        std::string value;  ///< the digest's bytes
    };
    std::vector<Member> members;  ///< sha-256 / sha-512, in the field's order
    std::size_t unknown = 0;      ///< members naming other algorithms: left out

    [[nodiscard]] DigestAlgorithms algorithms() const;
};

/// Parses a field value (several field lines joined with ", "). Not a Dictionary (RFC 9651
/// §4.2.2), or a member for sha-256 / sha-512 whose value is not a byte sequence of that digest's
/// size: kInvalidArgument with the reason. Members for other algorithms are counted in `unknown`
/// whatever their value.
Result<DigestField> parse_digest_field(std::string_view value);

/// The digests of one byte stream given in pieces, for the algorithms asked for.
using DigestValues = std::array<std::string, kDigestAlgorithmCount>;
class Digester {
public:
    explicit Digester(DigestAlgorithms algorithms);
    ~Digester();
    Digester(const Digester&) = delete;
    Digester& operator=(const Digester&) = delete;

    void update(std::span<const std::byte> bytes);
    void update(std::string_view bytes) {
        update({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
    }
    /// The digest of each algorithm asked for (empty for the others); the object is then spent.
    DigestValues finish();

private:
    std::array<void*, kDigestAlgorithmCount> ctx_{};  ///< EVP_MD_CTX, null when not asked for
};

/// Whether every member of `field` holds the digest of the bytes `values` were made from.
bool digest_field_matches(const DigestField& field, const DigestValues& values);

/// `field`'s algorithms in its order with the digests in `values`, serialized as a Dictionary:
/// `sha-256=:<base64>:, sha-512=:<base64>:`. "" when a digest is missing from `values`.
std::string format_digest_field(const DigestField& field, const DigestValues& values);

}  // namespace mc
