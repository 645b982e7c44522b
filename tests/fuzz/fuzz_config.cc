// SPDX-License-Identifier: Apache-2.0
// Fuzz target: configuration values (directive arguments), merge, and encoder parameter tuning.
//
// Input: text, one directive per line as in httpd.conf ("MultiCompressLevel br 5"); a line
// "---" starts the next, nested section (server, then <VirtualHost>, then <Directory>...), and
// the sections are merged in order. Two raw lines test the parsers with any bounds:
//   int MIN MAX VALUE   size MIN MAX VALUE   tune CODING LEVEL WINDOW MEMLEVEL LGBLOCK HINT
//
// Invariants: no crash; each parser accepts exactly what a reference accepts and gives the same
// value; accepted values are within the docs/contract.md ranges; merge takes every field the inner
// section sets and inherits the rest; effective values and tune() results stay in range.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "mc/coding.h"
#include "mc/config.h"
#include "mc/params.h"
#include "mc/status.h"

namespace {

using i64 = std::int64_t;
constexpr i64 kI64Max = std::numeric_limits<i64>::max();
constexpr i64 kI64Min = std::numeric_limits<i64>::min();

constexpr std::array<mc::Coding, 4> kCompressing = {mc::Coding::kGzip, mc::Coding::kDeflate,
                                                    mc::Coding::kBrotli, mc::Coding::kZstd};

std::vector<std::string_view> split_ws(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
}

// A signed number for the raw test lines; anything else is 0.
i64 raw_number(std::string_view s) {
    i64 v = 0;
    (void)std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

// ---- References: what each parser must accept, written the slow obvious way.

// Digits only, fitting int64: the value; else nothing.
bool reference_digits(std::string_view s, __int128& v) {
    if (s.empty()) return false;
    v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
        if (v > kI64Max) return false;
    }
    return true;
}

void check_parse_int(std::string_view s, i64 min, i64 max) {
    i64 out = -12345;
    const mc::Status st = mc::parse_int(s, min, max, out);
    __int128 v = 0;
    const bool expect = reference_digits(s, v) && v >= min && v <= max;
    MC_FUZZ_CHECK(st.is_ok() == expect);
    MC_FUZZ_CHECK(st.reason() != nullptr);
    if (st.is_ok()) {
        MC_FUZZ_CHECK(out == v && out >= min && out <= max);
    } else {
        MC_FUZZ_CHECK(out == -12345);  // untouched on error
    }
}

void check_parse_size(std::string_view s, i64 min, i64 max) {
    i64 out = -12345;
    const mc::Status st = mc::parse_size(s, min, max, out);
    __int128 mult = 1;
    std::string_view digits = s;
    if (!digits.empty()) {
        switch (digits.back()) {
            case 'k':
            case 'K': mult = i64{1} << 10; break;
            case 'm':
            case 'M': mult = i64{1} << 20; break;
            case 'g':
            case 'G': mult = i64{1} << 30; break;
            default: break;
        }
        if (mult != 1) digits.remove_suffix(1);
    }
    __int128 v = 0;
    const bool expect = reference_digits(digits, v) && v * mult >= min && v * mult <= max;
    MC_FUZZ_CHECK(st.is_ok() == expect);
    if (st.is_ok()) {
        MC_FUZZ_CHECK(out == v * mult && out >= min && out <= max);
    } else {
        MC_FUZZ_CHECK(out == -12345);
    }
}

void check_parse_encoding(std::string_view s) {
    mc::Coding c = mc::Coding::kIdentity;
    const mc::Status st = mc::parse_encoding(s, c);
    const bool expect = mc::iequals(s, "zstd") || mc::iequals(s, "br") || mc::iequals(s, "gzip") ||
                        mc::iequals(s, "deflate");
    MC_FUZZ_CHECK(st.is_ok() == expect);
    if (st.is_ok()) MC_FUZZ_CHECK(mc::iequals(mc::coding_token(c), s));
}

void check_keywords(std::string_view s) {
    mc::ETagMode mode = mc::ETagMode::kUnset;
    const bool etag_ok = mc::parse_etag_mode(s, mode).is_ok();
    MC_FUZZ_CHECK(etag_ok == (mc::iequals(s, "AddSuffix") || mc::iequals(s, "NoChange") ||
                              mc::iequals(s, "Remove")));
    MC_FUZZ_CHECK(etag_ok == (mode != mc::ETagMode::kUnset));
    mc::NoteKind kind = mc::NoteKind::kRatio;
    const bool note_ok = mc::parse_note_kind(s, kind).is_ok();
    MC_FUZZ_CHECK(note_ok == (mc::iequals(s, "ratio") || mc::iequals(s, "input") ||
                              mc::iequals(s, "output") || mc::iequals(s, "encoding")));
    MC_FUZZ_CHECK(static_cast<std::size_t>(kind) < mc::kNoteKinds);
}

// Every word goes through every parser, with a few bounds the adapter uses and some odd ones.
void check_word(std::string_view w) {
    static constexpr std::array<std::array<i64, 2>, 7> kBounds = {{
        {0, kI64Max},
        {kI64Min, kI64Max},
        {1, 9},
        {1, 0},
        {mc::kMinBufferSize, mc::kMaxBufferSize},
        {-5, -1},
        {kI64Max, kI64Max},
    }};
    for (const auto& b : kBounds) {
        check_parse_int(w, b[0], b[1]);
        check_parse_size(w, b[0], b[1]);
    }
    check_parse_encoding(w);
    check_keywords(w);
}

void check_tuned(const mc::EncoderParams& in) {
    const mc::EncoderParams p = mc::tune(in);
    MC_FUZZ_CHECK(p.coding == in.coding);
    MC_FUZZ_CHECK(mc::level_range(p.coding).contains(p.level));
    MC_FUZZ_CHECK(mc::kMemLevelRange.contains(p.mem_level));
    MC_FUZZ_CHECK(p.brotli_lgblock == 0 || mc::kBrotliBlockRange.contains(p.brotli_lgblock));
    if (p.coding == mc::Coding::kZstd && p.window_log == 0) {
        MC_FUZZ_CHECK(in.size_hint < 0);  // library default from the level, capped by the encoder
    } else {
        MC_FUZZ_CHECK(mc::window_range(p.coding).contains(p.window_log));
    }
    MC_FUZZ_CHECK(p.window_log <= mc::kZstdMaxWindowLog || p.coding != mc::Coding::kZstd);
    // Idempotent: a tuned set is already as small as the body allows.
    const mc::EncoderParams again = mc::tune(p);
    MC_FUZZ_CHECK(again.level == p.level && again.window_log == p.window_log &&
                  again.mem_level == p.mem_level && again.brotli_lgblock == p.brotli_lgblock);
    // Knowing the size only ever shrinks the window.
    mc::EncoderParams unknown = in;
    unknown.size_hint = -1;
    const mc::EncoderParams big = mc::tune(unknown);
    if (big.window_log != 0) MC_FUZZ_CHECK(p.window_log <= big.window_log);
}

void check_effective(const mc::Config& cfg) {
    const auto enc = cfg.encodings();
    MC_FUZZ_CHECK(!enc.empty() && enc.size() <= 4);
    for (std::size_t i = 0; i < enc.size(); ++i) {
        MC_FUZZ_CHECK(enc[i] != mc::Coding::kIdentity);
        MC_FUZZ_CHECK(std::count(enc.begin(), enc.end(), enc[i]) == 1);
    }
    for (const mc::Coding c : kCompressing) {
        MC_FUZZ_CHECK(mc::level_range(c).contains(cfg.level_for(c)));
        const int w = cfg.window_for(c);
        MC_FUZZ_CHECK(w == 0 || mc::window_range(c).contains(w));
        for (const i64 hint : {i64{-1}, i64{0}, i64{300}, i64{1} << 20, kI64Max}) {
            const mc::EncoderParams p = cfg.params_for(c, hint);
            MC_FUZZ_CHECK(p.coding == c && p.size_hint == hint);
            check_tuned(p);
        }
    }
    MC_FUZZ_CHECK(mc::kMemLevelRange.contains(cfg.mem_level_value()));
    MC_FUZZ_CHECK(cfg.min_length_value() >= 0);
    MC_FUZZ_CHECK(cfg.buffer_size_value() >= mc::kMinBufferSize &&
                  cfg.buffer_size_value() <= mc::kMaxBufferSize);
    MC_FUZZ_CHECK(cfg.etag_value() != mc::ETagMode::kUnset);
}

void check_merge(const mc::Config& base, const mc::Config& add, const mc::Config& out) {
    if (add.order_count != 0) {
        MC_FUZZ_CHECK(out.order_count == add.order_count);
        MC_FUZZ_CHECK(
            std::equal(add.order.begin(), add.order.begin() + add.order_count, out.order.begin()));
    } else {
        MC_FUZZ_CHECK(out.order_count == base.order_count);
        MC_FUZZ_CHECK(std::equal(base.order.begin(), base.order.begin() + base.order_count,
                                 out.order.begin()));
    }
    for (std::size_t i = 0; i < mc::kCodingCount; ++i) {
        MC_FUZZ_CHECK(out.level[i] == (add.level[i] >= 0 ? add.level[i] : base.level[i]));
        MC_FUZZ_CHECK(out.window[i] == (add.window[i] >= 0 ? add.window[i] : base.window[i]));
    }
    MC_FUZZ_CHECK(out.mem_level == (add.mem_level >= 0 ? add.mem_level : base.mem_level));
    MC_FUZZ_CHECK(out.brotli_lgblock ==
                  (add.brotli_lgblock >= 0 ? add.brotli_lgblock : base.brotli_lgblock));
    MC_FUZZ_CHECK(out.min_length == (add.min_length >= 0 ? add.min_length : base.min_length));
    MC_FUZZ_CHECK(out.buffer_size == (add.buffer_size >= 0 ? add.buffer_size : base.buffer_size));
    MC_FUZZ_CHECK(out.etag == (add.etag != mc::ETagMode::kUnset ? add.etag : base.etag));
    MC_FUZZ_CHECK(
        out.no_transform ==
        (add.no_transform != mc::NoTransformMode::kUnset ? add.no_transform : base.no_transform));
    for (std::size_t i = 0; i < mc::kNoteKinds; ++i) {
        MC_FUZZ_CHECK(out.notes[i] == (add.notes[i] != nullptr ? add.notes[i] : base.notes[i]));
    }
    for (std::size_t i = 0; i < mc::kCompatNoteKinds; ++i) {
        MC_FUZZ_CHECK(
            out.deflate_notes[i] ==
            (add.deflate_notes[i] != nullptr ? add.deflate_notes[i] : base.deflate_notes[i]));
        MC_FUZZ_CHECK(
            out.brotli_notes[i] ==
            (add.brotli_notes[i] != nullptr ? add.brotli_notes[i] : base.brotli_notes[i]));
    }
    MC_FUZZ_CHECK(out.inflate_limit ==
                  (add.inflate_limit >= 0 ? add.inflate_limit : base.inflate_limit));
    MC_FUZZ_CHECK(out.inflate_ratio ==
                  (add.inflate_ratio >= 0 ? add.inflate_ratio : base.inflate_ratio));
    MC_FUZZ_CHECK(out.inflate_burst ==
                  (add.inflate_burst >= 0 ? add.inflate_burst : base.inflate_burst));
}

// One directive, as the adapter's cmds[] handlers apply it (docs/contract.md ranges).
void apply(mc::Config& cfg, const std::vector<std::string_view>& args,
           std::deque<std::string>& strings) {
    const std::string_view name = args[0];
    const std::size_t n = args.size() - 1;  // number of arguments
    auto arg = [&](std::size_t i) { return i <= n ? args[i] : std::string_view{}; };

    if (mc::iequals(name, "MultiCompressEncodings")) {
        mc::Config fresh = cfg;
        fresh.order_count = 0;
        bool ok = n > 0;
        for (std::size_t i = 1; ok && i <= n; ++i) {
            const std::uint8_t before = fresh.order_count;
            ok = mc::add_encoding(fresh, args[i]).is_ok();
            MC_FUZZ_CHECK(fresh.order_count == (ok ? before + 1 : before));
        }
        if (ok) cfg = fresh;  // httpd stops at the first bad argument: nothing half-applied
    } else if (mc::iequals(name, "MultiCompressLevel") ||
               mc::iequals(name, "MultiCompressWindow")) {
        const bool level = mc::iequals(name, "MultiCompressLevel");
        const mc::Config before = cfg;
        const mc::Status st =
            level ? mc::set_level(cfg, arg(1), arg(2)) : mc::set_window(cfg, arg(1), arg(2));
        mc::Coding c{};
        if (st.is_ok()) {
            MC_FUZZ_CHECK(mc::parse_encoding(arg(1), c).is_ok());
            const int v = level ? cfg.level[mc::index(c)] : cfg.window[mc::index(c)];
            MC_FUZZ_CHECK((level ? mc::level_range(c) : mc::window_range(c)).contains(v));
        } else {
            MC_FUZZ_CHECK(cfg.level == before.level && cfg.window == before.window);
        }
    } else if (mc::iequals(name, "MultiCompressMinLength")) {
        i64 v = 0;
        if (mc::parse_size(arg(1), 0, kI64Max, v).is_ok()) cfg.min_length = v;
    } else if (mc::iequals(name, "MultiCompressBufferSize")) {
        i64 v = 0;
        if (mc::parse_size(arg(1), mc::kMinBufferSize, mc::kMaxBufferSize, v).is_ok()) {
            cfg.buffer_size = v;
        }
    } else if (mc::iequals(name, "MultiCompressAlterETag")) {
        mc::ETagMode m{};
        if (mc::parse_etag_mode(arg(1), m).is_ok()) cfg.etag = m;
    } else if (mc::iequals(name, "MultiCompressNoTransform")) {
        if (mc::iequals(arg(1), "Honor")) cfg.no_transform = mc::NoTransformMode::kHonor;
        if (mc::iequals(arg(1), "Ignore")) cfg.no_transform = mc::NoTransformMode::kIgnore;
    } else if (mc::iequals(name, "MultiCompressNote")) {
        mc::NoteKind k{};
        if (n == 2 && mc::parse_note_kind(arg(1), k).is_ok()) {
            cfg.notes[static_cast<std::size_t>(k)] = strings.emplace_back(arg(2)).c_str();
        }
    } else if (mc::iequals(name, "MultiCompressInflateLimit")) {
        i64 v = 0;
        if (mc::parse_size(arg(1), 0, kI64Max, v).is_ok()) cfg.inflate_limit = v;
    } else if (mc::iequals(name, "MultiCompressInflateRatio")) {
        i64 ratio = 0;
        i64 burst = mc::kDefaultInflateBurst;
        constexpr i64 kI32Max = std::numeric_limits<std::int32_t>::max();
        if (mc::parse_int(arg(1), 1, kI32Max, ratio).is_ok() &&
            (n < 2 || mc::parse_int(arg(2), 0, kI32Max, burst).is_ok())) {
            cfg.inflate_ratio = static_cast<std::int32_t>(ratio);
            cfg.inflate_burst = static_cast<std::int32_t>(burst);
        }
    } else if (mc::iequals(name, "DeflateMemLevel")) {
        i64 v = 0;
        if (mc::parse_int(arg(1), mc::kMemLevelRange.min, mc::kMemLevelRange.max, v).is_ok()) {
            cfg.mem_level = static_cast<std::int16_t>(v);
        }
    } else if (mc::iequals(name, "BrotliCompressionMaxInputBlock")) {
        i64 v = 0;
        if (mc::parse_int(arg(1), mc::kBrotliBlockRange.min, mc::kBrotliBlockRange.max, v)
                .is_ok()) {
            cfg.brotli_lgblock = static_cast<std::int16_t>(v);
        }
    } else if (name == "int" && n == 3) {
        check_parse_int(arg(3), raw_number(arg(1)), raw_number(arg(2)));
    } else if (name == "size" && n == 3) {
        check_parse_size(arg(3), raw_number(arg(1)), raw_number(arg(2)));
    } else if (name == "tune" && n == 6) {
        mc::Coding c{};
        if (!mc::parse_encoding(arg(1), c).is_ok()) return;
        mc::EncoderParams p;
        p.coding = c;
        auto as_int = [](i64 v) {
            return static_cast<int>(std::clamp<i64>(v, std::numeric_limits<int>::min(),
                                                    std::numeric_limits<int>::max()));
        };
        p.level = as_int(raw_number(arg(2)));
        p.window_log = as_int(raw_number(arg(3)));
        p.mem_level = as_int(raw_number(arg(4)));
        p.brotli_lgblock = as_int(raw_number(arg(5)));
        p.size_hint = raw_number(arg(6));
        check_tuned(p);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;  // a config file, not a novel
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::deque<std::string> strings;  // the "config pool" for note names
    std::vector<mc::Config> sections(1);
    while (!text.empty()) {
        const std::size_t eol = text.find('\n');
        const std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
        const std::vector<std::string_view> args = split_ws(line);
        if (args.empty()) continue;
        for (const std::string_view w : args) check_word(w);
        if (args[0] == "---") {
            if (sections.size() < 8) sections.emplace_back();
            continue;
        }
        apply(sections.back(), args, strings);
    }
    // Outer to inner, as httpd merges server, virtual host and directory sections.
    mc::Config merged = sections.front();
    check_effective(merged);
    for (std::size_t i = 1; i < sections.size(); ++i) {
        check_effective(sections[i]);
        const mc::Config out = mc::merge(merged, sections[i]);
        check_merge(merged, sections[i], out);
        check_effective(out);
        merged = out;
    }
    // Merging with an empty section changes nothing, either way round.
    const mc::Config empty;
    check_merge(merged, empty, mc::merge(merged, empty));
    check_merge(empty, merged, mc::merge(empty, merged));
    return 0;
}
