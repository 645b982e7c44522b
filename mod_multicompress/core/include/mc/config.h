// SPDX-License-Identifier: Apache-2.0
// Per-directory configuration values, their parsing, and their merge.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "mc/coding.h"
#include "mc/params.h"
#include "mc/status.h"

namespace mc {

enum class ETagMode : std::uint8_t { kUnset, kAddSuffix, kNoChange, kRemove };
enum class NoTransformMode : std::uint8_t { kUnset, kHonor, kIgnore };
enum class Toggle : std::uint8_t { kUnset, kOff, kOn };
/// MultiCompressCrossSite: what a credentialed cross-site request gets (BREACH, docs/contract.md).
enum class CrossSiteMode : std::uint8_t { kUnset, kCompress, kIdentity };

/// What a request note records (MultiCompressNote, DeflateFilterNote, BrotliFilterNote).
enum class NoteKind : std::uint8_t { kRatio, kInput, kOutput, kEncoding, kSource };
inline constexpr std::size_t kNoteKinds = 5;
/// Whose note directive set a note: each old module's notes behave as that module's did.
/// DeflateFilterNote and BrotliFilterNote know only Ratio, Input and Output (the first three
/// NoteKinds).
enum class NoteOwner : std::uint8_t {
    kMultiCompress,  ///< MultiCompressNote: every coding
    kDeflate,        ///< DeflateFilterNote: gzip and deflate responses, as mod_deflate
    kBrotli,         ///< BrotliFilterNote: br responses, as mod_brotli
};
inline constexpr std::size_t kCompatNoteKinds = 3;

inline constexpr std::int64_t kDefaultMinLength = 256;
inline constexpr std::int64_t kDefaultBufferSize = 8192;
inline constexpr std::int64_t kMinBufferSize = 1024;
inline constexpr std::int64_t kMaxBufferSize = 16 * 1024 * 1024;
inline constexpr int kDefaultInflateRatio = 200;  // as mod_deflate
inline constexpr int kDefaultInflateBurst = 3;
inline constexpr std::int64_t kInflateLimitAsRequestBody = -2;
/// MultiCompressInflateWindow: the largest br or zstd window a request body may need. A stalled
/// upload then pins about this plus the decoded body read before the handler (1 MiB).
inline constexpr std::int64_t kDefaultInflateWindow = 1024 * 1024;
inline constexpr std::int64_t kMinInflateWindow = 32 * 1024;
inline constexpr std::int64_t kMaxInflateWindow = 16 * 1024 * 1024;
inline constexpr std::int64_t kDefaultCacheMaxEntry = 1024 * 1024;
inline constexpr std::int64_t kDefaultDictionaryMaxSize = 4 * 1024 * 1024;
/// MultiCompressUseAsDictionary auto: the match pattern and id come from each response's
/// content-hashed file name (mc/hashed_name.h). Never a pattern: those start with '/'.
inline constexpr std::string_view kAutoDictionaryMatch = "auto";
inline constexpr int kDefaultMinSaving = 5;  ///< MultiCompressMinSaving, percent

/// One section's settings. Every field has an explicit "unset" value so that merge() can tell
/// "not said here" from "said here": a section inherits what it does not set (docs/contract.md).
/// dcz follows zstd for what it does not set itself (level, cache level).
/// Trivially destructible: it lives in an APR pool, strings point into that pool.
struct Config {
    std::array<Coding, kCodingCount - 1> order{};
    std::uint8_t order_count = 0;  ///< 0: unset (default zstd br gzip)
    std::array<std::int16_t, kCodingCount> level{-1, -1, -1, -1, -1, -1};
    std::array<std::int16_t, kCodingCount> window{-1, -1, -1, -1, -1, -1};
    std::int16_t mem_level = -1;
    std::int16_t brotli_lgblock = -1;  ///< 0 = library default
    std::int64_t min_length = -1;
    std::int64_t buffer_size = -1;
    ETagMode etag = ETagMode::kUnset;
    NoTransformMode no_transform = NoTransformMode::kUnset;
    std::array<const char*, kNoteKinds> notes{};  ///< MultiCompressNote; nullptr: unset
    std::array<const char*, kCompatNoteKinds> deflate_notes{};  ///< DeflateFilterNote
    std::array<const char*, kCompatNoteKinds> brotli_notes{};   ///< BrotliFilterNote
    /// -1: unset; 0: unlimited; kInflateLimitAsRequestBody: LimitRequestBody (set explicitly).
    std::int64_t inflate_limit = -1;
    std::int32_t inflate_ratio = -1;
    std::int32_t inflate_burst = -1;
    std::int64_t inflate_window = -1;      ///< MultiCompressInflateWindow
    Toggle static_files = Toggle::kUnset;  ///< MultiCompressStatic
    Toggle cache = Toggle::kUnset;         ///< MultiCompressCache
    std::int64_t cache_max_entry = -1;
    std::array<std::int16_t, kCodingCount> cache_level{-1, -1, -1, -1, -1, -1};
    CrossSiteMode cross_site = CrossSiteMode::kUnset;
    std::int16_t cpu_budget = -1;  ///< MultiCompressCPUBudget: -1 unset, 0 Off, else percent
    /// MultiCompressUseAsDictionary: kOn with its match pattern, destinations and id (checked
    /// with check_dictionary_*), kOff for "Off", kUnset to inherit.
    Toggle use_as_dictionary = Toggle::kUnset;
    const char* dictionary_match = nullptr;
    const char* dictionary_dests = nullptr;  ///< space-separated; nullptr or "": none
    const char* dictionary_id = nullptr;
    std::int64_t dictionary_max_size = -1;  ///< MultiCompressDictionaryMaxSize
    /// MultiCompressMinSaving: -1 unset (kDefaultMinSaving), 0 Off, else percent (1-99).
    std::int16_t min_saving = -1;
    Toggle transcode = Toggle::kUnset;  ///< MultiCompressTranscode

    // Effective values (defaults filled in).
    [[nodiscard]] std::span<const Coding> encodings() const;
    [[nodiscard]] int level_for(Coding c) const;
    [[nodiscard]] int window_for(Coding c) const;  ///< 0: library default
    [[nodiscard]] int mem_level_value() const {
        return mem_level < 0 ? kDefaultMemLevel : mem_level;
    }
    [[nodiscard]] std::int64_t min_length_value() const {
        return min_length < 0 ? kDefaultMinLength : min_length;
    }
    [[nodiscard]] std::int64_t buffer_size_value() const {
        return buffer_size < 0 ? kDefaultBufferSize : buffer_size;
    }
    [[nodiscard]] ETagMode etag_value() const {
        return etag == ETagMode::kUnset ? ETagMode::kAddSuffix : etag;
    }
    [[nodiscard]] bool honor_no_transform() const {
        return no_transform != NoTransformMode::kIgnore;
    }
    /// The CPU budget as a share of the machine (0..1], or 0 when Off (the default).
    [[nodiscard]] double cpu_budget_share() const {
        return cpu_budget <= 0 ? 0.0 : cpu_budget / 100.0;
    }
    [[nodiscard]] bool cross_site_identity() const {
        return cross_site == CrossSiteMode::kIdentity;
    }
    [[nodiscard]] const char* note(NoteKind k) const { return notes[static_cast<std::size_t>(k)]; }
    /// The note name `owner`'s directive set for `k`, or nullptr.
    [[nodiscard]] const char* note(NoteOwner owner, NoteKind k) const {
        const auto i = static_cast<std::size_t>(k);
        switch (owner) {
            case NoteOwner::kDeflate: return i < kCompatNoteKinds ? deflate_notes[i] : nullptr;
            case NoteOwner::kBrotli: return i < kCompatNoteKinds ? brotli_notes[i] : nullptr;
            case NoteOwner::kMultiCompress: break;
        }
        return notes[i];
    }
    [[nodiscard]] std::int64_t inflate_window_value() const {
        return inflate_window < 0 ? kDefaultInflateWindow : inflate_window;
    }
    [[nodiscard]] bool static_on() const { return static_files == Toggle::kOn; }
    [[nodiscard]] bool cache_on() const { return cache == Toggle::kOn; }
    [[nodiscard]] std::int64_t cache_max_entry_value() const {
        return cache_max_entry < 0 ? kDefaultCacheMaxEntry : cache_max_entry;
    }
    /// Whether responses here are offered as dictionaries (MultiCompressUseAsDictionary).
    [[nodiscard]] bool offers_dictionary() const {
        return use_as_dictionary == Toggle::kOn && dictionary_match != nullptr;
    }
    /// MultiCompressUseAsDictionary auto: hashed bundles offer their own family.
    [[nodiscard]] bool dictionary_auto() const {
        return offers_dictionary() && dictionary_match == kAutoDictionaryMatch;
    }
    [[nodiscard]] std::int64_t dictionary_max_size_value() const {
        return dictionary_max_size < 0 ? kDefaultDictionaryMaxSize : dictionary_max_size;
    }
    /// The least saving, in percent, that makes compressing a body worth it (0: Off).
    [[nodiscard]] int min_saving_value() const {
        return min_saving < 0 ? kDefaultMinSaving : min_saving;
    }
    [[nodiscard]] bool transcode_on() const { return transcode == Toggle::kOn; }
    /// MultiCompressCacheLevel; defaults br 11, zstd 19 (dcz as zstd), gzip (and deflate) 9.
    [[nodiscard]] int cache_level_for(Coding c) const;

    /// Encoder parameters for `c` from this configuration (before mc::tune).
    [[nodiscard]] EncoderParams params_for(Coding c, std::int64_t size_hint) const;
};
static_assert(std::is_trivially_destructible_v<Config>);

/// `add` over `base`: every field `add` sets wins, the rest comes from `base`.
Config merge(const Config& base, const Config& add);

// ---- Parsing directive arguments. Each returns a Status whose reason explains the problem;
// ---- the adapter prefixes the directive name (httpd adds file and line).

/// Integer in [min, max], decimal digits only.
Status parse_int(std::string_view s, std::int64_t min, std::int64_t max, std::int64_t& out);
/// A size: digits with an optional K/M/G suffix (binary units), in [min, max].
Status parse_size(std::string_view s, std::int64_t min, std::int64_t max, std::int64_t& out);
/// A configuration encoding token: zstd, br, gzip, deflate, dcz (case-insensitive); dcb is
/// refused with dcb_unsupported_reason().
Status parse_encoding(std::string_view s, Coding& out);
/// Appends `token` to cfg.order; a duplicate is an error.
Status add_encoding(Config& cfg, std::string_view token);
/// MultiCompressLevel ENC N.
Status set_level(Config& cfg, std::string_view enc, std::string_view value);
/// MultiCompressWindow ENC N.
Status set_window(Config& cfg, std::string_view enc, std::string_view value);
/// AddSuffix | NoChange | Remove (case-insensitive).
Status parse_etag_mode(std::string_view s, ETagMode& out);
/// MultiCompressCacheLevel ENC N.
Status set_cache_level(Config& cfg, std::string_view enc, std::string_view value);
/// On | Off (case-insensitive).
Status parse_toggle(std::string_view s, Toggle& out);
/// MultiCompressCPUBudget: Off, or a percentage 1-100 with an optional trailing '%'.
Status parse_cpu_budget(std::string_view s, std::int16_t& out);
/// MultiCompressMinSaving: Off, or a percentage 1-99 with an optional trailing '%'.
Status parse_min_saving(std::string_view s, std::int16_t& out);
/// Compress | Identity (case-insensitive).
Status parse_cross_site_mode(std::string_view s, CrossSiteMode& out);
/// ratio | input | output | encoding | source.
Status parse_note_kind(std::string_view s, NoteKind& out);

}  // namespace mc
