// SPDX-License-Identifier: Apache-2.0
// Fuzz target: header rules (ETag suffixes, If-None-Match stripping, list tokens).
//
// Input: a header value, optionally followed by a NUL byte and control bytes (coding, ETag mode,
// a token to look up). Without a NUL the whole input is the value, so plain-text seeds work.
//
// Invariants: no crash; alter_etag follows its mode; for every well-formed entity-tag x and
// every coding c (identity too), strip_etag_suffixes(alter_etag(x, c)) == x and
// etag_coding(alter_etag(x, c)) == c, alone or in a list, and the six representations of x
// get six different tags (dcz's names the dictionary); rewrite_if_none_match keeps exactly the tags
// of the codings asked for, stripped; etag_in_list finds a tag in a list it was put in;
// list_has_token finds what was appended.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "mc/coding.h"
#include "mc/config.h"
#include "mc/headers.h"

namespace {

constexpr std::array<mc::Coding, mc::kCodingCount> kEveryCoding = {
    mc::Coding::kIdentity, mc::Coding::kGzip, mc::Coding::kDeflate,
    mc::Coding::kBrotli,   mc::Coding::kZstd, mc::Coding::kDcz};
// dcz tags name the dictionary too (first hex digits of its hash).
constexpr std::string_view kDictTag = "0123abcd";
constexpr std::string_view kOtherDictTag = "ffff0000";

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE,
// etagc = %x21 / %x23-7E / obs-text.
bool is_entity_tag(std::string_view s) {
    if (s.starts_with("W/")) s.remove_prefix(2);
    if (s.size() < 2 || s.front() != '"' || s.back() != '"') return false;
    for (const char ch : s.substr(1, s.size() - 2)) {
        const auto c = static_cast<unsigned char>(ch);
        if (!(c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80)) return false;
    }
    return true;
}

bool is_tchar(char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Splits `s` into entity-tags the way a client writes an If-None-Match list: comma-separated.
std::vector<std::string_view> split_commas(std::string_view s) {
    std::vector<std::string_view> out;
    while (true) {
        const auto comma = s.find(',');
        out.push_back(mc::trim_ows(s.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 1);
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view value = input.substr(0, nul);
    const std::string_view control =
        nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1);
    FuzzedDataProvider fdp(reinterpret_cast<const std::uint8_t*>(control.data()), control.size());
    const mc::Coding coding =
        fdp.remaining_bytes() > 0 ? fdp.PickValueInArray(kEveryCoding) : mc::Coding::kGzip;
    const mc::ETagMode mode =
        fdp.remaining_bytes() > 0
            ? fdp.PickValueInArray({mc::ETagMode::kAddSuffix, mc::ETagMode::kNoChange,
                                    mc::ETagMode::kRemove, mc::ETagMode::kUnset})
            : mc::ETagMode::kAddSuffix;
    const std::string token = fdp.remaining_bytes() > 0 ? fdp.ConsumeRemainingBytesAsString()
                                                        : std::string("accept-encoding");

    // ---- alter_etag on the whole value.
    const std::string altered = mc::alter_etag(value, coding, mode, kDictTag);
    if (mode == mc::ETagMode::kRemove && coding != mc::Coding::kIdentity) {
        MC_FUZZ_CHECK(altered.empty());
    } else if (mode == mc::ETagMode::kNoChange || mode == mc::ETagMode::kRemove) {
        MC_FUZZ_CHECK(altered == value);
    } else if (value.find('"') == std::string_view::npos) {
        MC_FUZZ_CHECK(altered == value);  // not an entity-tag at all
    }
    if (is_entity_tag(value)) {
        // The round trip, for every coding: exact, and each representation its own tag.
        std::array<std::string, mc::kCodingCount> tags;
        for (std::size_t i = 0; i < kEveryCoding.size(); ++i) {
            tags[i] = mc::alter_etag(value, kEveryCoding[i], mc::ETagMode::kAddSuffix, kDictTag);
            MC_FUZZ_CHECK(is_entity_tag(tags[i]));
            MC_FUZZ_CHECK(tags[i].starts_with("W/") == value.starts_with("W/"));
            MC_FUZZ_CHECK(mc::strip_etag_suffixes(tags[i]) == value);
            MC_FUZZ_CHECK(mc::etag_coding(tags[i]) == kEveryCoding[i]);
            for (std::size_t j = 0; j < i; ++j) MC_FUZZ_CHECK(tags[i] != tags[j]);
            // The list functions split at commas: a tag with one inside is not checked there.
            if (value.find(',') != std::string_view::npos) continue;
            MC_FUZZ_CHECK(mc::etag_in_list("\"x\", " + tags[i], tags[i]));
            // If-None-Match as sent on: only the asked-for coding survives, stripped.
            const std::string kept =
                mc::rewrite_if_none_match(tags[i], mc::CodingSet{kEveryCoding[i]}, kDictTag);
            MC_FUZZ_CHECK(kept == value);
            if (kEveryCoding[i] == mc::Coding::kDcz) {  // another dictionary's: not this one
                MC_FUZZ_CHECK(mc::rewrite_if_none_match(tags[i], mc::CodingSet{mc::Coding::kDcz},
                                                        kOtherDictTag)
                                  .empty());
            }
            const mc::Coding other = kEveryCoding[(i + 1) % kEveryCoding.size()];
            MC_FUZZ_CHECK(mc::rewrite_if_none_match(tags[i], mc::CodingSet{other}).empty());
        }
    }

    // ---- strip_etag_suffixes on the whole value: never grows, keeps unquoted text alone.
    const std::string stripped = mc::strip_etag_suffixes(value);
    MC_FUZZ_CHECK(stripped.size() <= value.size());
    if (value.find('"') == std::string_view::npos) MC_FUZZ_CHECK(stripped == value);
    (void)mc::rewrite_if_none_match(value, mc::CodingSet{coding});
    (void)mc::etag_in_list(value, value);

    // ---- Round trip through a list of validators: each well-formed tag altered, joined, stripped.
    if (mode == mc::ETagMode::kAddSuffix) {
        const std::vector<std::string_view> items = split_commas(value);
        bool all_tags = true;
        std::string original;
        std::string sent;
        for (const std::string_view item : items) {
            all_tags = all_tags && (is_entity_tag(item) || item == "*");
            if (!original.empty()) {
                original += ", ";
                sent += ", ";
            }
            const bool tag = is_entity_tag(item);
            original.append(item);
            sent += tag ? mc::alter_etag(item, coding, mode, kDictTag) : std::string(item);
        }
        if (all_tags) MC_FUZZ_CHECK(mc::strip_etag_suffixes(sent) == original);
    }

    // ---- list_has_token and is_identity_encoding.
    (void)mc::is_identity_encoding(value);
    const bool had = mc::list_has_token(value, token);
    bool simple_token = !token.empty();
    for (const char c : token) simple_token = simple_token && is_tchar(c);
    if (simple_token) {
        // Appending the token (with OWS and parameters) makes it present, in any case.
        const std::string list = std::string(value) + " ,\t" + token + ";q=1";
        MC_FUZZ_CHECK(mc::list_has_token(list, token));
        std::string upper = token;
        for (char& c : upper) {
            if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
        MC_FUZZ_CHECK(mc::list_has_token(upper, token));
        // Appending other members never removes it.
        if (had) MC_FUZZ_CHECK(mc::list_has_token(std::string(value) + ", x", token));
    }
    if (value.empty()) MC_FUZZ_CHECK(!had);
    return 0;
}
