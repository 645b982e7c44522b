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
constexpr std::array<std::string_view, 4> kSuffixes = {"-gzip", "-deflate", "-br", "-zstd"};
}  // namespace

std::string alter_etag(std::string_view etag, Coding c, ETagMode mode) {
    if (mode == ETagMode::kRemove) return {};
    if (mode == ETagMode::kNoChange || c == Coding::kIdentity) return std::string(etag);
    // entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE (RFC 9110 §8.8.3)
    const std::size_t open = etag.starts_with("W/") ? 2 : 0;
    if (etag.size() < open + 2 || etag[open] != '"' || etag.back() != '"') {
        return std::string(etag);
    }
    // Already carries one of our suffixes (a proxied backend that compressed, or its 304):
    // adding another would make a tag that no 200 ever carried.
    const std::string_view opaque = etag.substr(open + 1, etag.size() - open - 2);
    for (const std::string_view suffix : kSuffixes) {
        if (opaque.ends_with(suffix)) return std::string(etag);
    }
    std::string out(etag.substr(0, etag.size() - 1));
    out += '-';
    out += coding_token(c);
    out += '"';
    return out;
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
        for (const std::string_view suffix : kSuffixes) {
            // ends_with, not "longer than the suffix": alter_etag turns the empty tag `""` into
            // `"-gzip"`, which must come back as `""` for its 304 (found by fuzz_headers).
            if (opaque.ends_with(suffix)) {
                opaque.remove_suffix(suffix.size());
                changed = true;
                break;
            }
        }
        out += '"';
        out.append(opaque);
        out += '"';
        i = close + 1;
    }
    return changed ? out : std::string(validators);
}

}  // namespace mc
