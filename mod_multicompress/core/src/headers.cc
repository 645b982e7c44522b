// SPDX-License-Identifier: Apache-2.0
// Header rules: Vary, Cache-Control tokens, ETag suffixes.
#include "mc/headers.h"

#include <array>

namespace mc {

bool list_has_token(std::string_view list, std::string_view token) {
    while (!list.empty()) {
        const auto comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        const auto param = item.find_first_of(";=");
        if (param != std::string_view::npos) item = item.substr(0, param);
        if (iequals(trim_ows(item), token)) return true;
    }
    return false;
}

bool is_identity_encoding(std::string_view content_encoding) {
    while (!content_encoding.empty()) {
        const auto comma = content_encoding.find(',');
        const std::string_view item = trim_ows(content_encoding.substr(0, comma));
        content_encoding = comma == std::string_view::npos ? std::string_view{}
                                                           : content_encoding.substr(comma + 1);
        if (!item.empty() && !iequals(item, "identity")) return false;
    }
    return true;
}

namespace {

// Our suffixes; the last one only escapes an identity tag (see alter_etag). None is a suffix of
// another, so a tag ends in at most one of them.
constexpr std::array<std::string_view, 5> kSuffixes = {"-gzip", "-deflate", "-br", "-zstd",
                                                       "-identity"};
constexpr std::array<Coding, 5> kSuffixCodings = {Coding::kGzip, Coding::kDeflate, Coding::kBrotli,
                                                  Coding::kZstd, Coding::kIdentity};

// The opaque part of an entity-tag (RFC 9110 §8.8.3: [ "W/" ] DQUOTE *etagc DQUOTE), or
// nullopt-like false when `etag` is not one.
bool opaque_of(std::string_view etag, std::string_view& opaque, bool& weak) {
    weak = etag.starts_with("W/");
    const std::size_t open = weak ? 2 : 0;
    if (etag.size() < open + 2 || etag[open] != '"' || etag.back() != '"') return false;
    opaque = etag.substr(open + 1, etag.size() - open - 2);
    return opaque.find('"') == std::string_view::npos;
}

// Index into kSuffixes of the suffix `opaque` ends in, or -1.
int suffix_index(std::string_view opaque) {
    for (std::size_t i = 0; i < kSuffixes.size(); ++i) {
        // ends_with, not "longer than the suffix": alter_etag turns the empty tag `""` into
        // `"-gzip"`, which must come back as `""` (found by fuzz_headers).
        if (opaque.ends_with(kSuffixes[i])) return static_cast<int>(i);
    }
    return -1;
}

}  // namespace

std::string alter_etag(std::string_view etag, Coding c, ETagMode mode) {
    if (mode == ETagMode::kNoChange) return std::string(etag);
    if (mode == ETagMode::kRemove) return c == Coding::kIdentity ? std::string(etag) : "";
    std::string_view opaque;
    bool weak = false;
    if (!opaque_of(etag, opaque, weak)) return std::string(etag);
    std::string_view suffix;
    if (c != Coding::kIdentity) {
        suffix = kSuffixes[static_cast<std::size_t>(index(c) - 1)];
    } else if (suffix_index(opaque) >= 0) {
        suffix = kSuffixes.back();  // "-identity": an identity tag never ends in a coding suffix
    } else {
        return std::string(etag);
    }
    std::string out(etag.substr(0, etag.size() - 1));
    out += suffix;
    out += '"';
    return out;
}

Coding etag_coding(std::string_view etag) {
    std::string_view opaque;
    bool weak = false;
    if (!opaque_of(etag, opaque, weak)) return Coding::kIdentity;
    const int i = suffix_index(opaque);
    return i < 0 ? Coding::kIdentity : kSuffixCodings[static_cast<std::size_t>(i)];
}

std::string strip_etag_suffixes(std::string_view validators) {
    std::string out;
    out.reserve(validators.size());
    bool changed = false;
    std::size_t i = 0;
    while (i < validators.size()) {
        const char ch = validators[i];
        if (ch != '"') {
            out += ch;
            ++i;
            continue;
        }
        const auto close = validators.find('"', i + 1);
        if (close == std::string_view::npos) {  // unterminated: leave the rest alone
            out.append(validators.substr(i));
            break;
        }
        std::string_view opaque = validators.substr(i + 1, close - i - 1);
        if (const int s = suffix_index(opaque); s >= 0) {
            opaque.remove_suffix(kSuffixes[static_cast<std::size_t>(s)].size());
            changed = true;
        }
        out += '"';
        out.append(opaque);
        out += '"';
        i = close + 1;
    }
    return changed ? out : std::string(validators);
}

std::string rewrite_if_none_match(std::string_view validators, CodingSet keep) {
    std::string out;
    while (!validators.empty()) {
        const auto comma = validators.find(',');
        const std::string_view item = trim_ows(validators.substr(0, comma));
        validators =
            comma == std::string_view::npos ? std::string_view{} : validators.substr(comma + 1);
        if (item.empty()) continue;
        std::string_view opaque;
        bool weak = false;
        std::string kept(item);
        if (opaque_of(item, opaque, weak)) {
            if (!keep.has(etag_coding(item))) continue;
            kept = strip_etag_suffixes(item);
        }
        if (!out.empty()) out += ", ";
        out += kept;
    }
    return out;
}

bool etag_in_list(std::string_view validators, std::string_view etag) {
    std::string_view want;
    bool weak = false;
    if (!opaque_of(etag, want, weak)) return false;
    if (trim_ows(validators) == "*") return true;
    while (!validators.empty()) {
        const auto comma = validators.find(',');
        const std::string_view item = trim_ows(validators.substr(0, comma));
        validators =
            comma == std::string_view::npos ? std::string_view{} : validators.substr(comma + 1);
        std::string_view have;
        if (opaque_of(item, have, weak) && have == want) return true;
    }
    return false;
}

}  // namespace mc
