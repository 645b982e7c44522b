// SPDX-License-Identifier: Apache-2.0
// Configuration values: effective defaults, merge, and directive argument parsing.
#include "mc/config.h"

#include <algorithm>
#include <brotli/encode.h>

#include <charconv>
#include <string>

namespace mc {

namespace {
constexpr std::array<Coding, 3> kDefaultOrder = {Coding::kZstd, Coding::kBrotli, Coding::kGzip};

template <class T>
T pick(T base, T add, T unset) {
    return add != unset ? add : base;
}
}  // namespace

std::span<const Coding> Config::encodings() const {
    if (order_count == 0) return kDefaultOrder;
    return {order.data(), order_count};
}

int Config::level_for(Coding c) const {
    const int set = level[index(c)];
    if (set >= 0) return set;
    // deflate follows gzip, dcz follows zstd, unless it has its own level.
    if (c == Coding::kDeflate && level[index(Coding::kGzip)] >= 0) {
        return level[index(Coding::kGzip)];
    }
    if (c == Coding::kDcz) return level_for(Coding::kZstd);
    return default_level(c);
}

int Config::window_for(Coding c) const {
    const int set = window[index(c)];
    if (set >= 0) return set;
    if (c == Coding::kDeflate && window[index(Coding::kGzip)] >= 0) {
        return window[index(Coding::kGzip)];
    }
    return 0;
}

int Config::cache_level_for(Coding c) const {
    if (cache_level[index(c)] >= 0) return cache_level[index(c)];
    if (c == Coding::kDeflate && cache_level[index(Coding::kGzip)] >= 0) {
        return cache_level[index(Coding::kGzip)];
    }
    if (c == Coding::kDcz) return cache_level_for(Coding::kZstd);
    return c == Coding::kIdentity ? 0 : strongest_level(c);
}

EncoderParams Config::params_for(Coding c, std::int64_t size_hint) const {
    EncoderParams p;
    p.coding = c;
    p.level = level_for(c);
    p.window_log = window_for(c);
    p.mem_level = mem_level_value();
    p.brotli_lgblock = brotli_lgblock < 0 ? 0 : brotli_lgblock;
    p.size_hint = size_hint;
    return p;
}

Config merge(const Config& base, const Config& add) {
    Config out = base;
    if (add.order_count != 0) {
        out.order = add.order;
        out.order_count = add.order_count;
    }
    for (std::size_t i = 0; i < kCodingCount; ++i) {
        out.level[i] = pick<std::int16_t>(base.level[i], add.level[i], -1);
        out.window[i] = pick<std::int16_t>(base.window[i], add.window[i], -1);
    }
    out.mem_level = pick<std::int16_t>(base.mem_level, add.mem_level, -1);
    out.brotli_lgblock = pick<std::int16_t>(base.brotli_lgblock, add.brotli_lgblock, -1);
    out.min_length = pick<std::int64_t>(base.min_length, add.min_length, -1);
    out.buffer_size = pick<std::int64_t>(base.buffer_size, add.buffer_size, -1);
    out.etag = pick(base.etag, add.etag, ETagMode::kUnset);
    out.no_transform = pick(base.no_transform, add.no_transform, NoTransformMode::kUnset);
    for (std::size_t i = 0; i < kNoteKinds; ++i) {
        out.notes[i] = pick<const char*>(base.notes[i], add.notes[i], nullptr);
    }
    for (std::size_t i = 0; i < kCompatNoteKinds; ++i) {
        out.deflate_notes[i] =
            pick<const char*>(base.deflate_notes[i], add.deflate_notes[i], nullptr);
        out.brotli_notes[i] = pick<const char*>(base.brotli_notes[i], add.brotli_notes[i], nullptr);
    }
    out.inflate_limit = pick<std::int64_t>(base.inflate_limit, add.inflate_limit, -1);
    out.inflate_ratio = pick<std::int32_t>(base.inflate_ratio, add.inflate_ratio, -1);
    out.inflate_burst = pick<std::int32_t>(base.inflate_burst, add.inflate_burst, -1);
    out.inflate_window = pick<std::int64_t>(base.inflate_window, add.inflate_window, -1);
    out.static_files = pick(base.static_files, add.static_files, Toggle::kUnset);
    out.cache = pick(base.cache, add.cache, Toggle::kUnset);
    out.cache_max_entry = pick<std::int64_t>(base.cache_max_entry, add.cache_max_entry, -1);
    for (std::size_t i = 0; i < kCodingCount; ++i) {
        out.cache_level[i] = pick<std::int16_t>(base.cache_level[i], add.cache_level[i], -1);
    }
    out.cross_site = pick(base.cross_site, add.cross_site, CrossSiteMode::kUnset);
    out.cpu_budget = pick<std::int16_t>(base.cpu_budget, add.cpu_budget, -1);
    if (add.use_as_dictionary != Toggle::kUnset) {
        out.use_as_dictionary = add.use_as_dictionary;
        out.dictionary_match = add.dictionary_match;
        out.dictionary_dests = add.dictionary_dests;
        out.dictionary_id = add.dictionary_id;
    }
    out.dictionary_max_size =
        pick<std::int64_t>(base.dictionary_max_size, add.dictionary_max_size, -1);
    out.min_saving = pick<std::int16_t>(base.min_saving, add.min_saving, -1);
    out.transcode = pick(base.transcode, add.transcode, Toggle::kUnset);
    return out;
}

Status parse_int(std::string_view s, std::int64_t min, std::int64_t max, std::int64_t& out) {
    if (s.empty()) return {Code::kInvalidArgument, "expects a number"};
    if (!std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return {Code::kInvalidArgument, "expects a whole number (digits only)"};
    }
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || ptr != s.data() + s.size() || v < min || v > max) {
        return {Code::kInvalidArgument, "value is out of range"};
    }
    out = v;
    return Status::ok();
}

Status parse_size(std::string_view s, std::int64_t min, std::int64_t max, std::int64_t& out) {
    std::int64_t mult = 1;
    if (!s.empty()) {
        switch (s.back()) {
            case 'k':
            case 'K': mult = std::int64_t{1} << 10; break;
            case 'm':
            case 'M': mult = std::int64_t{1} << 20; break;
            case 'g':
            case 'G': mult = std::int64_t{1} << 30; break;
            default: break;
        }
        if (mult != 1) s.remove_suffix(1);
    }
    std::int64_t v = 0;
    if (Status st = parse_int(s, 0, max, v); !st.is_ok()) return st;
    if (v > max / mult || v * mult < min) return {Code::kInvalidArgument, "size is out of range"};
    out = v * mult;
    return Status::ok();
}

const char* dcb_unsupported_reason() {
    // RFC 9842's dcb needs brotli's shared-dictionary API (BrotliEncoderPrepareDictionary,
    // libbrotli 1.1.0); this module has no dcb encoder yet, with or without it.
    static const std::string reason = [] {
        const std::uint32_t v = BrotliEncoderVersion();
        const std::string version = std::to_string(v >> 24) + "." +
                                    std::to_string((v >> 12) & 0xfff) + "." +
                                    std::to_string(v & 0xfff);
#if MC_HAVE_BROTLI_SHARED_DICTIONARY
        return "dcb is not supported by this build of mod_multicompress (libbrotli " + version +
               "); use dcz";
#else
        return "dcb (brotli with a shared dictionary) needs libbrotli 1.1.0 or later "
               "(BrotliEncoderPrepareDictionary); this server's libbrotli is " +
               version + "; use dcz";
#endif
    }();
    return reason.c_str();
}

Status parse_encoding(std::string_view s, Coding& out) {
    if (iequals(s, "dcb")) return {Code::kInvalidArgument, dcb_unsupported_reason()};
    const auto c = parse_coding(s);
    // Configuration takes only the canonical tokens: no identity, no x-gzip alias.
    if (!c || *c == Coding::kIdentity || iequals(s, "x-gzip")) {
        return {Code::kInvalidArgument,
                "unknown encoding (expected zstd, br, gzip, deflate or dcz)"};
    }
    out = *c;
    return Status::ok();
}

Status add_encoding(Config& cfg, std::string_view token) {
    Coding c{};
    if (Status st = parse_encoding(token, c); !st.is_ok()) return st;
    const auto begin = cfg.order.begin();
    const auto end = begin + cfg.order_count;
    if (std::find(begin, end, c) != end) return {Code::kInvalidArgument, "encoding listed twice"};
    cfg.order[cfg.order_count++] = c;
    return Status::ok();
}

namespace {
Status set_ranged(std::array<std::int16_t, kCodingCount>& slots, Range (*range_of)(Coding),
                  std::string_view enc, std::string_view value) {
    Coding c{};
    if (Status st = parse_encoding(enc, c); !st.is_ok()) return st;
    const Range r = range_of(c);
    std::int64_t v = 0;
    if (Status st = parse_int(value, r.min, r.max, v); !st.is_ok()) return st;
    slots[index(c)] = static_cast<std::int16_t>(v);
    return Status::ok();
}
}  // namespace

Status set_level(Config& cfg, std::string_view enc, std::string_view value) {
    return set_ranged(cfg.level, &level_range, enc, value);
}

Status set_window(Config& cfg, std::string_view enc, std::string_view value) {
    if (iequals(enc, "dcz")) {
        return {Code::kInvalidArgument,
                "dcz has no window setting: it follows the dictionary (RFC 9842)"};
    }
    return set_ranged(cfg.window, &window_range, enc, value);
}

Status set_cache_level(Config& cfg, std::string_view enc, std::string_view value) {
    return set_ranged(cfg.cache_level, &level_range, enc, value);
}

Status parse_toggle(std::string_view s, Toggle& out) {
    if (iequals(s, "On")) {
        out = Toggle::kOn;
    } else if (iequals(s, "Off")) {
        out = Toggle::kOff;
    } else {
        return {Code::kInvalidArgument, "expects On or Off"};
    }
    return Status::ok();
}

Status parse_etag_mode(std::string_view s, ETagMode& out) {
    if (iequals(s, "AddSuffix")) {
        out = ETagMode::kAddSuffix;
    } else if (iequals(s, "NoChange")) {
        out = ETagMode::kNoChange;
    } else if (iequals(s, "Remove")) {
        out = ETagMode::kRemove;
    } else {
        return {Code::kInvalidArgument, "expects AddSuffix, NoChange or Remove"};
    }
    return Status::ok();
}

Status parse_note_kind(std::string_view s, NoteKind& out) {
    if (iequals(s, "ratio")) {
        out = NoteKind::kRatio;
    } else if (iequals(s, "input")) {
        out = NoteKind::kInput;
    } else if (iequals(s, "output")) {
        out = NoteKind::kOutput;
    } else if (iequals(s, "encoding")) {
        out = NoteKind::kEncoding;
    } else if (iequals(s, "source")) {
        out = NoteKind::kSource;
    } else {
        return {Code::kInvalidArgument, "expects ratio, input, output, encoding or source"};
    }
    return Status::ok();
}

Status parse_cpu_budget(std::string_view s, std::int16_t& out) {
    if (iequals(s, "Off")) {
        out = 0;
        return Status::ok();
    }
    if (!s.empty() && s.back() == '%') s.remove_suffix(1);
    std::int64_t v = 0;
    if (!parse_int(s, 1, 100, v).is_ok()) {
        return {Code::kInvalidArgument, "expects Off or a percentage 1-100 (e.g. 50 or 50%)"};
    }
    out = static_cast<std::int16_t>(v);
    return Status::ok();
}

Status parse_min_saving(std::string_view s, std::int16_t& out) {
    if (iequals(s, "Off")) {
        out = 0;
        return Status::ok();
    }
    if (!s.empty() && s.back() == '%') s.remove_suffix(1);
    std::int64_t v = 0;
    if (!parse_int(s, 1, 99, v).is_ok()) {
        return {Code::kInvalidArgument, "expects Off or a percentage 1-99 (e.g. 5 or 5%)"};
    }
    out = static_cast<std::int16_t>(v);
    return Status::ok();
}

Status parse_cross_site_mode(std::string_view s, CrossSiteMode& out) {
    if (iequals(s, "Compress")) {
        out = CrossSiteMode::kCompress;
    } else if (iequals(s, "Identity")) {
        out = CrossSiteMode::kIdentity;
    } else {
        return {Code::kInvalidArgument, "expects Compress or Identity"};
    }
    return Status::ok();
}

}  // namespace mc
