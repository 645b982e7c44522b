// SPDX-License-Identifier: Apache-2.0
// Coding tokens and small HTTP string helpers.
#include "mc/coding.h"

namespace mc {

std::string_view coding_token(Coding c) {
    switch (c) {
        case Coding::kGzip: return "gzip";
        case Coding::kDeflate: return "deflate";
        case Coding::kBrotli: return "br";
        case Coding::kZstd: return "zstd";
        case Coding::kDcz: return "dcz";
        case Coding::kIdentity: break;
    }
    return "identity";
}

std::string_view sidecar_suffix(Coding c) {
    switch (c) {
        case Coding::kZstd: return ".zst";
        case Coding::kBrotli: return ".br";
        case Coding::kGzip: return ".gz";
        case Coding::kDeflate:
        case Coding::kDcz:
        case Coding::kIdentity: break;
    }
    return {};
}

namespace {
constexpr char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}
}  // namespace

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

std::string lowercase(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lower(c);
    return out;
}

std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::optional<Coding> parse_coding(std::string_view token) {
    // RFC 9110 §8.4.1.3: "x-gzip" is an alias of gzip.
    if (iequals(token, "gzip") || iequals(token, "x-gzip")) return Coding::kGzip;
    if (iequals(token, "br")) return Coding::kBrotli;
    if (iequals(token, "zstd")) return Coding::kZstd;
    if (iequals(token, "deflate")) return Coding::kDeflate;
    if (iequals(token, "dcz")) return Coding::kDcz;
    if (iequals(token, "identity")) return Coding::kIdentity;
    return std::nullopt;
}

}  // namespace mc
