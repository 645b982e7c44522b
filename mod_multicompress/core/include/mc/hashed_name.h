// SPDX-License-Identifier: Apache-2.0
// Content-hashed file names as bundlers write them (`app.3f9a1c2b.js`, `index-B_1x-9Zq.js`), and
// the RFC 9842 match pattern that covers every version of such a file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mc {

/// A path whose last segment is `STEM SEP HASH . EXT`. The views point into the parsed string.
///
/// Recognised: `name.HASH.ext` (webpack `[name].[contenthash].js`, Parcel, Create React App's
/// `main.HASH.chunk.js`, source maps `main.HASH.js.map`) and `name-HASH.ext` (Vite/Rollup
/// `[name]-[hash].js`, esbuild `chunk-HASH.js`). EXT is one or more dot-separated parts of
/// letters and digits ("js", "min.js", "chunk.css", "js.map", "d.ts"; the last has a letter).
struct HashedName {
    std::string_view dir;   ///< up to and including the last '/' ("/assets/"; "" for a bare name)
    std::string_view stem;  ///< "index", "main", "react-dom", "app.min"
    char separator = '.';   ///< '.' or '-'
    std::string_view hash;  ///< "3f9a1c2b", "B_1x-9Zq", "ABCD2345"
    std::string_view ext;   ///< "js", "min.js": no leading dot

    /// The RFC 9842 match pattern of the family: `<dir><stem><sep>*.<ext>`, e.g.
    /// "/assets/index-*.js". For a path that starts with '/' it passes
    /// check_dictionary_pattern() and matches the path itself.
    [[nodiscard]] std::string match_pattern() const;
    /// The `id` to offer with it (RFC 9842 §2.1.4): the hash.
    [[nodiscard]] std::string_view id() const { return hash; }
    /// Same directory, stem, separator and extension: another version of the same file.
    [[nodiscard]] bool same_family(const HashedName& other) const {
        return dir == other.dir && stem == other.stem && separator == other.separator &&
               ext == other.ext;
    }
};

/// Longest last path segment looked at (NAME_MAX); longer names are not parsed.
inline constexpr std::size_t kMaxHashedNameLength = 255;

/// Parses a URL path as sent (no query) or a file name. nullopt when its last segment carries no
/// content hash, or when the path holds a character a match pattern cannot carry (outside
/// printable ASCII, a space, or one of `*:(){}+?#\"`), or the name is longer than
/// kMaxHashedNameLength. When several parts could be the hash, the one nearest the extension
/// wins; in the `-` form, where a Rollup hash may itself hold a '-', the shortest.
std::optional<HashedName> parse_hashed_name(std::string_view path);

/// Whether `s` (one name part, no separator around it) looks like a bundler's content hash:
/// 8 to 64 characters of the base64url alphabet (A-Z a-z 0-9 _ -; a '-' only in a hash of
/// exactly 8, Rollup's default length) and one of
///   - hex (webpack, Parcel): all [0-9a-f] or all [0-9A-F], with a digit and a letter;
///   - base32 (esbuild): all [A-Z2-7], with a digit and a letter;
///   - base64url (Rollup, Vite): random-looking, i.e. the class of character (digit, lower,
///     upper, '_' or '-') changes between at least 40 % of neighbours, and, with letters alone,
///     both cases and changes between at least half of them.
/// Words, camelCase names and numbered words fail ("development", "markdown", "dataTables",
/// "DatePicker", "700italic"); so do numbers alone ("20240101": dates and ids are common in
/// names, all-digit hashes are rare). Some true hashes fail too: an 8-character hex hash with no
/// digit or no letter (about 2.4 %), an esbuild hash with no digit (about 19 %), a Rollup hash
/// whose characters happen to run in classes (about 12 %). Those files are not taken for
/// versioned ones; nothing else changes for them.
bool looks_like_content_hash(std::string_view s);

}  // namespace mc
