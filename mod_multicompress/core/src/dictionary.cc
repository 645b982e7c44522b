// SPDX-License-Identifier: Apache-2.0
// RFC 9842 header fields, dcz framing, patterns, the store's entry head, and prepared zstd
// dictionaries.
#include "mc/dictionary.h"

#include <openssl/evp.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_createCDict_advanced, ZSTD_dct_rawContent
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "encoders.h"
#include "mc/alloc.h"
#include "mc/coding.h"

namespace mc {

namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Each byte's value in kB64, -1 for the rest: one load per character of a header read on every
// request that names a dictionary.
constexpr std::array<std::int8_t, 256> kB64Values = [] {
    std::array<std::int8_t, 256> t{};
    t.fill(-1);
    for (std::size_t i = 0; i + 1 < sizeof kB64; ++i) {
        t[static_cast<unsigned char>(kB64[i])] = static_cast<std::int8_t>(i);
    }
    return t;
}();

int b64_value(char c) {
    return kB64Values[static_cast<unsigned char>(c)];
}

// Strict base64 of exactly 32 bytes: 43 characters and one '=' (RFC 8941 §4.2.7 lets the
// padding be absent). The unused low bits of the last character must be zero.
std::optional<DictionaryHash> decode_hash_b64(std::string_view s) {
    if (s.size() == 44 && s[43] == '=') s.remove_suffix(1);
    if (s.size() != 43) return std::nullopt;
    DictionaryHash out{};
    std::uint32_t acc = 0;
    int bits = 0;
    std::size_t n = 0;
    for (const char c : s) {
        const int v = b64_value(c);
        if (v < 0) return std::nullopt;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = static_cast<std::uint8_t>((acc >> bits) & 0xff);
        }
    }
    // 43 × 6 = 258 bits: 32 bytes and 2 bits left over, which must be zero.
    if (n != out.size() || (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
    return out;
}

bool is_printable_ascii(char c) {
    return c >= 0x20 && c <= 0x7e;
}

void append_sf_string(std::string& out, std::string_view s) {
    out += '"';
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    out += '"';
}

constexpr char kHeadMagic[4] = {'M', 'C', 'D', '1'};
constexpr std::size_t kMaxOrigin = 1024;

void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 7; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint64_t get_u64(const std::byte* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
    return v;
}

ZSTD_compressionParameters prepared_params(int level, std::size_t dictionary_size) {
    return ZSTD_getCParams(level, 0, dictionary_size);
}

// Measured on release pairs and on pages against a 64 KB site dictionary (bench/dictionary.py):
// with the dfast, greedy and lazy strategies, searching the prepared tables in place is 10-70 %
// cheaper per response than copying them (a copy is the size of the tables, 0.5-3 MB, whatever
// the body); ZSTD_fast gains nothing and the binary-tree strategies are up to 2x slower attached.
bool attach_prepared_tables(int level, std::size_t dictionary_size) {
    const ZSTD_strategy s = prepared_params(level, dictionary_size).strategy;
    return s >= ZSTD_dfast && s <= ZSTD_lazy2;
}

}  // namespace

DictionaryHash sha256(std::span<const std::byte> bytes) {
    DictionaryHash h{};
    unsigned int len = 0;
    EVP_Digest(bytes.data(), bytes.size(), h.data(), &len, EVP_sha256(), nullptr);
    return h;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (ctx_ != nullptr) EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}

Sha256::~Sha256() {
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
}

void Sha256::update(std::span<const std::byte> bytes) {
    if (ctx_ != nullptr)
        EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

DictionaryHash Sha256::finish() {
    DictionaryHash h{};
    unsigned int len = 0;
    if (ctx_ != nullptr) EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), h.data(), &len);
    return h;
}

char* hex_into(std::span<const std::uint8_t> bytes, char* out) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (const std::uint8_t b : bytes) {
        *out++ = kHex[b >> 4];
        *out++ = kHex[b & 15];
    }
    return out;
}

std::string hash_hex(const DictionaryHash& h, std::size_t digits) {
    std::string out(std::min(digits, h.size() * 2) & ~std::size_t{1}, '\0');
    hex_into(std::span(h).first(out.size() / 2), out.data());
    return out;
}

std::optional<DictionaryHash> parse_available_dictionary(std::string_view value) {
    // RFC 8941 §4.2: leading and trailing spaces are discarded (httpd already dropped OWS at the
    // ends of a field; several fields are joined with ", ", which leaves a second item: invalid).
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (value.size() < 2 || value.front() != ':') return std::nullopt;
    const std::size_t close = value.find(':', 1);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view rest = value.substr(close + 1);
    // Only parameters may follow the item: ";key" or ";key=value" (their values are not needed).
    if (!rest.empty() && rest.front() != ';') return std::nullopt;
    for (const char c : rest) {
        if (!is_printable_ascii(c) || c == ',') return std::nullopt;
    }
    return decode_hash_b64(value.substr(1, close - 1));
}

std::string format_available_dictionary(const DictionaryHash& h) {
    std::string out = ":";
    for (std::size_t i = 0; i < h.size(); i += 3) {
        const std::size_t n = std::min<std::size_t>(3, h.size() - i);
        std::uint32_t v = static_cast<std::uint32_t>(h[i]) << 16;
        if (n > 1) v |= static_cast<std::uint32_t>(h[i + 1]) << 8;
        if (n > 2) v |= h[i + 2];
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += n > 1 ? kB64[(v >> 6) & 63] : '=';
        out += n > 2 ? kB64[v & 63] : '=';
    }
    out += ':';
    return out;
}

std::optional<std::string> parse_dictionary_id(std::string_view value) {
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (value.size() < 2 || value.front() != '"') return std::nullopt;
    std::string out;
    std::size_t i = 1;
    for (; i < value.size(); ++i) {
        const char c = value[i];
        if (c == '"') break;
        if (!is_printable_ascii(c)) return std::nullopt;
        if (c == '\\') {
            if (++i == value.size()) return std::nullopt;
            if (value[i] != '"' && value[i] != '\\') return std::nullopt;
        }
        out += value[i];
        if (out.size() > 1024) return std::nullopt;
    }
    if (i == value.size()) return std::nullopt;  // no closing quote
    const std::string_view rest = value.substr(i + 1);
    if (!rest.empty() && rest.front() != ';') return std::nullopt;
    return out;
}

std::array<std::byte, kDczHeaderSize> dcz_header(const DictionaryHash& h) {
    std::array<std::byte, kDczHeaderSize> out{};
    constexpr std::array<std::uint8_t, 8> kMagic = {0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00};
    for (std::size_t i = 0; i < kMagic.size(); ++i) out[i] = std::byte{kMagic[i]};
    for (std::size_t i = 0; i < h.size(); ++i) out[kMagic.size() + i] = std::byte{h[i]};
    return out;
}

int dcz_max_window_log(std::size_t dictionary_size) {
    const std::uint64_t limit = std::min<std::uint64_t>(
        std::uint64_t{128} << 20,
        std::max<std::uint64_t>(std::uint64_t{8} << 20, dictionary_size + dictionary_size / 4));
    int w = 10;
    while (w < 27 && (std::uint64_t{1} << (w + 1)) <= limit) ++w;
    return w;
}

int dcz_window_log(std::size_t dictionary_size, std::int64_t body_size, int level_window_log) {
    const std::uint64_t body = body_size >= 0 ? static_cast<std::uint64_t>(body_size)
                                              : (std::uint64_t{1} << level_window_log);
    const std::uint64_t need = dictionary_size + body;
    const int max = dcz_max_window_log(dictionary_size);
    int w = 10;
    while (w < max && (std::uint64_t{1} << w) < need) ++w;
    return w;
}

Status setup_dcz(ZSTD_CCtx_s* cctx, const EncoderParams& p) {
    if (p.dictionary == nullptr) return {Code::kInvalidArgument, "dcz: no dictionary"};
    const PreparedDictionary& d = *p.dictionary;
    // The prepared tables, always: loading the dictionary as a prefix (what `zstd --patch-from`
    // does, with long-distance matching for large files) costs every response a pass over the
    // whole dictionary and, at the fast levels, gives larger bodies for small changes (jquery
    // 3.7.0 -> 3.7.1 at level 3: 426 bytes against 332; bench/dictionary.py). Deltas made off
    // the request path try both (mc/dcz_delta.h).
    std::size_t rc = ZSTD_CCtx_refCDict(cctx, d.cdict());
    if (!ZSTD_isError(rc)) rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, p.window_log);
    if (!ZSTD_isError(rc) && attach_prepared_tables(d.level(), d.size())) {
        // An experimental parameter: should this libzstd refuse it, zstd's own choice stands.
        (void)ZSTD_CCtx_setParameter(cctx, ZSTD_c_forceAttachDict, ZSTD_dictForceAttach);
    }
    if (!ZSTD_isError(rc) && p.exact_size && p.size_hint >= 0) {
        rc = ZSTD_CCtx_setPledgedSrcSize(cctx, static_cast<unsigned long long>(p.size_hint));
    }
    if (ZSTD_isError(rc)) return {Code::kInvalidArgument, ZSTD_getErrorName(rc)};
    return Status::ok();
}

Status check_dictionary_pattern(std::string_view pattern) {
    if (pattern.empty() || pattern.front() != '/') {
        return {Code::kInvalidArgument, "the pattern must be a path that starts with '/'"};
    }
    for (const char c : pattern) {
        if (!is_printable_ascii(c) || c == ' ') {
            return {Code::kInvalidArgument, "the pattern must be printable ASCII without spaces"};
        }
        if (std::strchr(":(){}+?#\\\"", c) != nullptr) {
            return {Code::kInvalidArgument,
                    "the pattern may use only '*' as a wildcard (no URLPattern groups, "
                    "modifiers, queries or quotes)"};
        }
    }
    return Status::ok();
}

Status check_dictionary_dest(std::string_view dest) {
    if (dest.empty() || dest.size() > 32 ||
        !std::all_of(dest.begin(), dest.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
        return {Code::kInvalidArgument,
                "dest= must name a request destination (script, style, document, ...)"};
    }
    return Status::ok();
}

Status check_dictionary_id(std::string_view id) {
    if (id.size() > 1024 || !std::all_of(id.begin(), id.end(), is_printable_ascii)) {
        return {Code::kInvalidArgument, "id= must be at most 1024 printable ASCII characters"};
    }
    return Status::ok();
}

std::string format_use_as_dictionary(const DictionaryOffer& offer) {
    std::string out = "match=";
    append_sf_string(out, offer.match);
    if (!offer.dests.empty()) {
        out += ", match-dest=(";
        std::string_view rest = offer.dests;
        bool first = true;
        while (!rest.empty()) {
            const std::size_t sp = rest.find(' ');
            const std::string_view d = rest.substr(0, sp);
            rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
            if (d.empty()) continue;
            if (!first) out += ' ';
            first = false;
            append_sf_string(out, d);
        }
        out += ')';
    }
    if (!offer.id.empty()) {
        out += ", id=";
        append_sf_string(out, offer.id);
    }
    return out;
}

bool pattern_matches(std::string_view pattern, std::string_view path) {
    // Greedy glob with backtracking to the last '*': linear in practice, O(n·m) at worst.
    std::size_t p = 0;
    std::size_t s = 0;
    std::size_t star = std::string_view::npos;
    std::size_t mark = 0;
    while (s < path.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = s;
        } else if (p < pattern.size() && pattern[p] == path[s]) {
            ++p;
            ++s;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            s = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

std::string encode_dictionary_head(const DictionaryHead& head) {
    std::string out(kHeadMagic, sizeof kHeadMagic);
    out.append(reinterpret_cast<const char*>(head.hash.data()), head.hash.size());
    put_u64(out, head.size);
    const std::string_view origin = std::string_view(head.origin).substr(0, kMaxOrigin);
    put_u64(out, origin.size());
    out += origin;
    return out;
}

std::optional<DictionaryHead> decode_dictionary_head(std::span<const std::byte> entry,
                                                     const DictionaryHash& expected) {
    constexpr std::size_t kFixed = sizeof kHeadMagic + 32 + 8 + 8;
    if (entry.size() < kFixed || std::memcmp(entry.data(), kHeadMagic, sizeof kHeadMagic) != 0) {
        return std::nullopt;
    }
    DictionaryHead head;
    std::memcpy(head.hash.data(), entry.data() + sizeof kHeadMagic, head.hash.size());
    if (head.hash != expected) return std::nullopt;
    head.size = get_u64(entry.data() + sizeof kHeadMagic + 32);
    const std::uint64_t origin_len = get_u64(entry.data() + sizeof kHeadMagic + 40);
    if (head.size == 0 || head.size > kMaxDictionarySize || origin_len > kMaxOrigin ||
        entry.size() != kFixed + origin_len) {
        return std::nullopt;
    }
    head.origin.assign(reinterpret_cast<const char*>(entry.data() + kFixed), origin_len);
    return head;
}

namespace {
const ZSTD_customMem kZstdMem{mem_alloc_cb, mem_free_cb, nullptr};
}  // namespace

Result<std::shared_ptr<const PreparedDictionary>> PreparedDictionary::make(
    std::shared_ptr<const DictionaryBytes> bytes, int level) {
    if (!bytes || bytes->bytes.empty()) return Status{Code::kInvalidArgument, "empty dictionary"};
    std::shared_ptr<PreparedDictionary> d(new PreparedDictionary(std::move(bytes), level));
    const std::string& raw = d->bytes_->bytes;
    // The level's parameters for a body of unknown size against this dictionary (srcSize 0:
    // zstd's row for the dictionary's size, what ZSTD_CCtx_loadDictionary at this level picks);
    // each response sets its window. Passing the dictionary's size as the body's too selected
    // the row for twice the input (minMatch 4, searchLog 1 at level 3): jquery 3.7.0 -> 3.7.1
    // was 337 bytes instead of 332.
    const ZSTD_compressionParameters cp = prepared_params(level, raw.size());
    d->cdict_ = ZSTD_createCDict_advanced(raw.data(), raw.size(), ZSTD_dlm_byRef,
                                          ZSTD_dct_rawContent, cp, kZstdMem);
    if (d->cdict_ == nullptr) return Status{Code::kOutOfMemory, "zstd: cannot prepare dictionary"};
    return std::shared_ptr<const PreparedDictionary>(std::move(d));
}

PreparedDictionary::~PreparedDictionary() {
    ZSTD_freeCDict(cdict_);
}

std::size_t PreparedDictionary::footprint() const {
    return bytes_->bytes.size() + ZSTD_sizeof_CDict(cdict_);
}

}  // namespace mc
