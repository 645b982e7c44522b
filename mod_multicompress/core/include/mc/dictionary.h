// SPDX-License-Identifier: Apache-2.0
// Compression Dictionary Transport (RFC 9842): the request and response header fields, the dcz
// framing and window, patterns, the dictionary store's entry head, and a dictionary prepared for
// zstd (docs/contract.md "Dictionaries").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "mc/status.h"

struct ZSTD_CDict_s;

namespace mc {

/// A dictionary's name on the wire: the SHA-256 of its bytes.
using DictionaryHash = std::array<std::uint8_t, 32>;

/// SHA-256 of `bytes` (libcrypto).
DictionaryHash sha256(std::span<const std::byte> bytes);

/// SHA-256 over bytes given in pieces (a response body as it streams through).
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(std::span<const std::byte> bytes);
    /// The hash of everything given; the object is then spent.
    DictionaryHash finish();

private:
    void* ctx_;  ///< EVP_MD_CTX
};

/// Writes `bytes` as lowercase hex (two characters each) at `out`; returns the end.
char* hex_into(std::span<const std::uint8_t> bytes, char* out);

/// Lowercase hex of the hash (64 characters), for store keys and logs; or of its first
/// `digits` / 2 bytes (`digits` at most 64, even), for names and tags that hold a prefix.
std::string hash_hex(const DictionaryHash& h, std::size_t digits = 64);

/// `Available-Dictionary` (RFC 9842 §2.2): an RFC 8941 byte sequence, `:base64:`, that decodes to
/// exactly 32 bytes. Surrounding spaces and parameters are allowed; anything else (two values, a
/// wrong length, a character outside base64, a bad padding) gives nullopt: the request is then
/// negotiated as if the header were absent.
std::optional<DictionaryHash> parse_available_dictionary(std::string_view value);
/// The header value for `h` (tests, the bench).
std::string format_available_dictionary(const DictionaryHash& h);

/// `Dictionary-ID` (RFC 9842 §2.3): an RFC 8941 string of at most 1024 characters, unescaped.
/// Only a hint for the server; malformed gives nullopt.
std::optional<std::string> parse_dictionary_id(std::string_view value);

/// RFC 9842 §4: the coding dcz starts with a zstd skippable frame that holds the hash: the 8
/// bytes 5e 2a 4d 18 20 00 00 00, then the 32 bytes of the hash, then the zstd frame.
inline constexpr std::size_t kDczHeaderSize = 40;
std::array<std::byte, kDczHeaderSize> dcz_header(const DictionaryHash& h);

/// The largest log2 window a client must accept for a dcz body against a dictionary of
/// `dictionary_size` bytes (RFC 9842 §4: max(8 MiB, 1.25 × dictionary), at most 128 MiB).
int dcz_max_window_log(std::size_t dictionary_size);
/// The window for a dcz body: large enough to reach back over the whole dictionary from the end
/// of the body (as `zstd --patch-from` does), within dcz_max_window_log. `body_size` < 0: unknown
/// (the level's own window then stands for the body).
int dcz_window_log(std::size_t dictionary_size, std::int64_t body_size, int level_window_log);

/// What MultiCompressUseAsDictionary offers. Strings are not owned.
struct DictionaryOffer {
    std::string_view match;  ///< a path pattern: starts with '/', `*` is the only wildcard
    std::string_view dests;  ///< space-separated request destinations (Fetch), may be empty
    std::string_view id;     ///< may be empty
};
/// Checks a pattern: starts with '/', printable ASCII, none of the URLPattern syntax this server
/// cannot evaluate (`:` `(` `)` `{` `}` `+` `?` `#` `\` `"`). The reason says what is wrong.
Status check_dictionary_pattern(std::string_view pattern);
/// Checks a destination token ("script", "style", "document", ...: lowercase letters) .
Status check_dictionary_dest(std::string_view dest);
/// Checks an id: at most 1024 printable ASCII characters.
Status check_dictionary_id(std::string_view id);
/// The `Use-As-Dictionary` value (an RFC 8941 dictionary):
/// `match="/a/*.js", match-dest=("script"), id="v1"`.
std::string format_use_as_dictionary(const DictionaryOffer& offer);
/// Whether `path` (a URL's path, as sent) matches a checked pattern: `*` matches any run of
/// characters, '/' included; everything else matches itself.
bool pattern_matches(std::string_view pattern, std::string_view path);

/// The head of a dictionary in the store, one per origin it was offered on: what it is and where
/// it may be used. The bytes follow
/// in `chunks` entries of at most kDictionaryChunk bytes each (memcached keeps items under 1 MB,
/// the default shmcb store about 230 KB per subcache).
inline constexpr std::size_t kDictionaryChunk = 128 * 1024;
inline constexpr std::size_t kMaxDictionarySize = 128 * 1024 * 1024;
struct DictionaryHead {
    DictionaryHash hash{};
    std::uint64_t size = 0;
    std::string origin;  ///< scheme://host the dictionary was offered on
    [[nodiscard]] std::uint32_t chunks() const {
        return static_cast<std::uint32_t>((size + kDictionaryChunk - 1) / kDictionaryChunk);
    }
};
std::string encode_dictionary_head(const DictionaryHead& head);
/// Parses and checks a head read from the store: magic, version, sizes within bounds, the hash
/// it must be for. nullopt for anything else.
std::optional<DictionaryHead> decode_dictionary_head(std::span<const std::byte> entry,
                                                     const DictionaryHash& expected);

/// A dictionary's bytes, with their hash (checked when made).
struct DictionaryBytes {
    DictionaryHash hash{};
    std::string bytes;
};

/// A dictionary prepared for zstd at one level (ZSTD_createCDict_advanced with
/// ZSTD_dct_rawContent and the level's parameters for a body of unknown size against a dictionary
/// of this size), shared by every response that uses it; immutable, so threads may use it at
/// once. Keeps the bytes alive (the CDict references them).
///
/// Every dcz body, streamed or one-shot, references these prepared tables (ZSTD_CCtx_refCDict):
/// the dictionary costs a response nothing beyond its own bytes. For the fast levels (zstd's
/// dfast to lazy2 strategies, levels 2-12) a response searches the prepared tables in place
/// (attached) instead of copying them into its context, so its cost does not grow with the
/// dictionary; the binary-tree levels copy them (faster there, measured).
class PreparedDictionary {
public:
    static Result<std::shared_ptr<const PreparedDictionary>> make(
        std::shared_ptr<const DictionaryBytes> bytes, int level);
    ~PreparedDictionary();
    PreparedDictionary(const PreparedDictionary&) = delete;
    PreparedDictionary& operator=(const PreparedDictionary&) = delete;

    [[nodiscard]] const DictionaryHash& hash() const { return bytes_->hash; }
    [[nodiscard]] std::size_t size() const { return bytes_->bytes.size(); }
    [[nodiscard]] int level() const { return level_; }
    [[nodiscard]] const ZSTD_CDict_s* cdict() const { return cdict_; }
    [[nodiscard]] std::string_view bytes() const { return bytes_->bytes; }
    /// Memory held: the bytes and the CDict.
    [[nodiscard]] std::size_t footprint() const;

private:
    PreparedDictionary(std::shared_ptr<const DictionaryBytes> bytes, int level)
        : bytes_(std::move(bytes)), level_(level) {}
    std::shared_ptr<const DictionaryBytes> bytes_;
    int level_;
    ZSTD_CDict_s* cdict_ = nullptr;
};

}  // namespace mc
