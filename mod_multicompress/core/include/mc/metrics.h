// SPDX-License-Identifier: Apache-2.0
// The module's counters: their layout in one flat array of words, and how they read on the
// status page and in the Prometheus text format (docs/contract.md "Observing it").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mc/coding.h"

namespace mc::metrics {

/// Where a response the filters saw came from.
enum class Source : std::uint8_t { kLive, kSidecar, kCache, kIdentity };
inline constexpr std::size_t kSourceCount = 4;

/// Why a response went out unchanged.
enum class Why : std::uint8_t {
    kNotAcceptable,   ///< the client accepts none of the enabled codings
    kTooSmall,        ///< shorter than MultiCompressMinLength
    kNoTransform,     ///< Cache-Control: no-transform
    kAlreadyEncoded,  ///< a Content-Encoding was already there
    kRange,           ///< a Range request or a partial response
    kEnv,             ///< no-gzip, no-multicompress, gzip-only-text/html
    kCrossSite,       ///< MultiCompressCrossSite Identity
    kStatus,          ///< 1xx, 204, 304: no body to compress
    kBudget,          ///< MultiCompressCPUBudget: over the budget at its last step
    kIncompressible,  ///< MultiCompressMinSaving: the body would not shrink enough
    kOther,           ///< an encoder that could not start, ...
};
inline constexpr std::size_t kWhyCount = 11;

/// Events counted once each.
enum class Event : std::uint8_t {
    kCacheHit,
    kCacheMiss,
    kCacheStore,
    kCacheUpgrade,
    kCacheStoreError,
    kCacheRejected,  ///< an entry that failed the integrity check
    kDictionaryOffered,
    kDictionaryUsed,
    kDictionaryUnknown,
    kInflateBody,
    kInflateBytesIn,
    kInflateBytesOut,
    kInflateBadRequest,   ///< 400
    kInflateTooLarge,     ///< 413
    kInflateUnsupported,  ///< 415: a request body in a coding the DEFLATE input filter lacks
    kGateWait,            ///< a large whole body waited for a compression slot
    kSavingProbe,         ///< MultiCompressMinSaving ran its quick probe on a body
    kTranscodeDecoded,    ///< MultiCompressTranscode decoded a response
    kTranscodeCorrupt,    ///< ... and found it corrupt (the response was ended as broken)
    kCacheLocalHit,       ///< a cache hit served from the child's tier of verified entries
    kCacheLocalEvict,     ///< an entry the full tier let go to make room
};
inline constexpr std::size_t kEventCount = 21;

/// Word offsets in a counter array.
inline constexpr std::size_t kResponsesAt = 0;  // [coding][source]
inline constexpr std::size_t kWhyAt = kResponsesAt + kCodingCount * kSourceCount;
inline constexpr std::size_t kBytesInAt = kWhyAt + kWhyCount;                  // [coding]
inline constexpr std::size_t kBytesOutAt = kBytesInAt + kCodingCount;          // [coding]
inline constexpr std::size_t kCpuNsAt = kBytesOutAt + kCodingCount;            // [coding]
inline constexpr std::size_t kLiveBytesInAt = kCpuNsAt + kCodingCount;         // [coding]
inline constexpr std::size_t kLiveBytesOutAt = kLiveBytesInAt + kCodingCount;  // [coding]
inline constexpr std::size_t kEventsAt = kLiveBytesOutAt + kCodingCount;
inline constexpr std::size_t kWords = kEventsAt + kEventCount;

constexpr std::size_t response_word(Coding c, Source s) {
    return kResponsesAt + index(c) * kSourceCount + static_cast<std::size_t>(s);
}
constexpr std::size_t why_word(Why w) {
    return kWhyAt + static_cast<std::size_t>(w);
}
constexpr std::size_t bytes_in_word(Coding c) {
    return kBytesInAt + index(c);
}
constexpr std::size_t bytes_out_word(Coding c) {
    return kBytesOutAt + index(c);
}
constexpr std::size_t cpu_ns_word(Coding c) {
    return kCpuNsAt + index(c);
}
constexpr std::size_t live_bytes_in_word(Coding c) {
    return kLiveBytesInAt + index(c);
}
constexpr std::size_t live_bytes_out_word(Coding c) {
    return kLiveBytesOutAt + index(c);
}
constexpr std::size_t event_word(Event e) {
    return kEventsAt + static_cast<std::size_t>(e);
}

/// The counters of the whole server, summed over every child and thread.
using Totals = std::array<std::uint64_t, kWords>;

/// What one response adds. For a compressed response, bytes in are the body before compression
/// (a sidecar's or cache entry's original file), bytes out what was sent; CPU is live
/// compression's only.
struct ResponseFacts {
    Coding coding = Coding::kIdentity;
    Source source = Source::kIdentity;
    Why why = Why::kOther;  ///< for identity responses
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
    std::uint64_t cpu_ns = 0;
};

/// The Prometheus text exposition format (version 0.0.4): HELP and TYPE lines, `_total`
/// counters, every label combination present (zeros included) so a series never appears late.
std::string render_prometheus(const Totals& t);
/// The CPU budget's gauges in the same format: the share of the machine live compression used
/// when last measured (0..1) and the step new responses take (0 none .. 4 identity).
std::string render_budget_gauges(double share, int step);
/// The memory the server's children hold in compression dictionaries and their prepared tables,
/// as a Prometheus gauge, as a `?auto` line and as an HTML line of the status section.
std::string render_dictionary_gauge(std::uint64_t bytes);
std::string render_dictionary_memory_auto(std::uint64_t bytes);
std::string render_dictionary_memory_html(std::uint64_t bytes);
/// `/server-status?auto` lines, each starting with "MultiCompress".
std::string render_status_auto(const Totals& t);

/// What the status page's picture says about CPU, besides the counters (the adapter measures it).
struct CpuView {
    /// Live compression's share of the machine's CPUs when MultiCompressCPUBudget last sampled
    /// it (0..1; sampled with the budget Off too).
    double share_now = 0;
    /// MultiCompressCPUBudget as a share of the machine (0..1); 0 when Off.
    double budget = 0;
    /// CPU seconds the server's processes used, as mod_status adds them up for its "CPU Usage"
    /// line; 0 when unknown (the picture then leaves out the share of it spent compressing).
    double server_cpu_seconds = 0;
};

/// The HTML section of `/server-status`: the table, the picture beside it, the other counts.
std::string render_status_html(const Totals& t, const CpuView& cpu = {});
/// The picture: an inline SVG (no script, no external reference, ASCII only: mod_status's page
/// is ISO-8859-1) of bytes in against bytes out per coding, each split by source (compressed
/// live, or from a sidecar or the cache), responses per source, and the share of CPU spent
/// compressing.
std::string render_status_svg(const Totals& t, const CpuView& cpu = {});
/// `s` with &, <, >, " and ' as XML entities and every byte outside printable ASCII as a
/// numeric character reference of that byte (text and attribute values of the picture).
std::string xml_escape(std::string_view s);
/// A byte count for people: "812 B", "70.0 kB", "1.50 MB", "2.00 GB" (powers of 1000).
std::string human_bytes(std::uint64_t n);

/// The bytes the children's tiers of verified cache entries hold (MultiCompressCacheLocal), as a
/// Prometheus gauge, as a `?auto` line and as an HTML line of the status section.
std::string render_cache_local_gauge(std::uint64_t bytes);
std::string render_cache_local_auto(std::uint64_t bytes);
std::string render_cache_local_html(std::uint64_t bytes);

const char* source_name(Source s);
const char* why_name(Why w);
const char* event_name(Event e);

}  // namespace mc::metrics
