// SPDX-License-Identifier: Apache-2.0
// Header rules: Vary, Cache-Control tokens, ETag suffixes.
#include "mc/headers.h"

#include <algorithm>
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
// another, so a tag ends in at most one of them. dcz's is "-dcz-" and the first 8 hex digits of
// the dictionary's hash (a representation per dictionary).
constexpr std::array<std::string_view, 5> kSuffixes = {"-gzip", "-deflate", "-br", "-zstd",
                                                       "-identity"};
constexpr std::array<Coding, 5> kSuffixCodings = {Coding::kGzip, Coding::kDeflate, Coding::kBrotli,
                                                  Coding::kZstd, Coding::kIdentity};
constexpr std::string_view kDczSuffix = "-dcz-";

bool is_dcz_tag(std::string_view t) {
    return t.size() == kDczEtagTagSize && std::all_of(t.begin(), t.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// The opaque part of an entity-tag (RFC 9110 §8.8.3: [ "W/" ] DQUOTE *etagc DQUOTE), or
// nullopt-like false when `etag` is not one.
bool opaque_of(std::string_view etag, std::string_view& opaque, bool& weak) {
    weak = etag.starts_with("W/");
    const std::size_t open = weak ? 2 : 0;
    if (etag.size() < open + 2 || etag[open] != '"' || etag.back() != '"') return false;
    opaque = etag.substr(open + 1, etag.size() - open - 2);
    return opaque.find('"') == std::string_view::npos;
}

// The suffix of ours `opaque` ends in: its length (0: none), its coding, and for dcz the
// dictionary tag.
struct Suffix {
    std::size_t size = 0;
    Coding coding = Coding::kIdentity;
    std::string_view dcz_tag;
};

Suffix suffix_of(std::string_view opaque) {
    constexpr std::size_t kDczSize = kDczSuffix.size() + kDczEtagTagSize;
    if (opaque.size() >= kDczSize &&
        opaque.substr(opaque.size() - kDczSize).starts_with(kDczSuffix) &&
        is_dcz_tag(opaque.substr(opaque.size() - kDczEtagTagSize))) {
        return {kDczSize, Coding::kDcz, opaque.substr(opaque.size() - kDczEtagTagSize)};
    }
    for (std::size_t i = 0; i < kSuffixes.size(); ++i) {
        // ends_with, not "longer than the suffix": alter_etag turns the empty tag `""` into
        // `"-gzip"`, which must come back as `""` (found by fuzz_headers).
        if (opaque.ends_with(kSuffixes[i])) return {kSuffixes[i].size(), kSuffixCodings[i], {}};
    }
    return {};
}

}  // namespace

std::string alter_etag(std::string_view etag, Coding c, ETagMode mode, std::string_view dcz_tag) {
    if (mode == ETagMode::kNoChange) return std::string(etag);
    if (mode == ETagMode::kRemove) return c == Coding::kIdentity ? std::string(etag) : "";
    std::string_view opaque;
    bool weak = false;
    if (!opaque_of(etag, opaque, weak)) return std::string(etag);
    std::string_view suffix;
    std::string_view tag;  // dcz: the dictionary's
    if (c == Coding::kDcz) {
        // Without a well-formed dictionary tag there is no tag for this representation.
        if (!is_dcz_tag(dcz_tag)) return "";
        suffix = kDczSuffix;
        tag = dcz_tag;
    } else if (c != Coding::kIdentity) {
        suffix = kSuffixes[static_cast<std::size_t>(index(c) - 1)];
    } else if (suffix_of(opaque).size != 0) {
        suffix = kSuffixes.back();  // "-identity": an identity tag never ends in a coding suffix
    } else {
        return std::string(etag);
    }
    std::string out;
    out.reserve(etag.size() + suffix.size() + tag.size());
    out.append(etag.substr(0, etag.size() - 1)).append(suffix).append(tag) += '"';
    return out;
}

Coding etag_coding(std::string_view etag) {
    std::string_view opaque;
    bool weak = false;
    if (!opaque_of(etag, opaque, weak)) return Coding::kIdentity;
    return suffix_of(opaque).coding;
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
        if (const Suffix s = suffix_of(opaque); s.size != 0) {
            opaque.remove_suffix(s.size);
            changed = true;
        }
        out += '"';
        out.append(opaque);
        out += '"';
        i = close + 1;
    }
    return changed ? out : std::string(validators);
}

std::string rewrite_if_none_match(std::string_view validators, CodingSet keep,
                                  std::string_view dcz_tag) {
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
            const Suffix suffix = suffix_of(opaque);
            if (!keep.has(suffix.coding)) continue;
            // A dcz tag names the dictionary too: only this request's stands for its 200.
            if (suffix.coding == Coding::kDcz && suffix.dcz_tag != dcz_tag) continue;
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
