// SPDX-License-Identifier: Apache-2.0
// Ranges, defaults and mc::tune (window sizing), checked on paper and in the produced streams.
#include "mc/params.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "decode.h"
#include "mc/encoder.h"
#include "mc/sink.h"

namespace {

using mc::Coding;
using mc::EncoderParams;
using mc::tune;

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * 1024;

EncoderParams params(Coding c, int level, std::int64_t size_hint = -1, int window = 0,
                     int mem_level = 0) {
    EncoderParams p;
    p.coding = c;
    p.level = level;
    p.size_hint = size_hint;
    p.window_log = window;
    p.mem_level = mem_level;
    return p;
}

TEST(ParamsTest, RangesAndDefaultsMatchSpec) {
    EXPECT_EQ(mc::level_range(Coding::kGzip).min, 1);
    EXPECT_EQ(mc::level_range(Coding::kGzip).max, 9);
    EXPECT_EQ(mc::level_range(Coding::kDeflate).min, 1);
    EXPECT_EQ(mc::level_range(Coding::kDeflate).max, 9);
    EXPECT_EQ(mc::level_range(Coding::kBrotli).min, 0);
    EXPECT_EQ(mc::level_range(Coding::kBrotli).max, 11);
    EXPECT_EQ(mc::level_range(Coding::kZstd).min, 1);
    EXPECT_EQ(mc::level_range(Coding::kZstd).max, 19);

    EXPECT_EQ(mc::window_range(Coding::kGzip).min, 9);
    EXPECT_EQ(mc::window_range(Coding::kGzip).max, 15);
    EXPECT_EQ(mc::window_range(Coding::kDeflate).min, 9);
    EXPECT_EQ(mc::window_range(Coding::kDeflate).max, 15);
    EXPECT_EQ(mc::window_range(Coding::kBrotli).min, 10);
    EXPECT_EQ(mc::window_range(Coding::kBrotli).max, 24);
    EXPECT_EQ(mc::window_range(Coding::kZstd).min, 10);
    EXPECT_EQ(mc::window_range(Coding::kZstd).max, 23);
    EXPECT_EQ(mc::kZstdMaxWindowLog, 23);

    EXPECT_EQ(mc::default_level(Coding::kGzip), 6);
    EXPECT_EQ(mc::default_level(Coding::kDeflate), 6);
    EXPECT_EQ(mc::default_level(Coding::kBrotli), 4);
    EXPECT_EQ(mc::default_level(Coding::kZstd), 3);

    EXPECT_TRUE(mc::level_range(Coding::kZstd).contains(19));
    EXPECT_FALSE(mc::level_range(Coding::kZstd).contains(20));
    EXPECT_FALSE(mc::level_range(Coding::kZstd).contains(0));
}

// ---- Unknown body length: library defaults, values clamped into range.

TEST(TuneTest, UnknownSizeKeepsDefaults) {
    const EncoderParams g = tune(params(Coding::kGzip, 6));
    EXPECT_EQ(g.window_log, 15);
    EXPECT_EQ(g.mem_level, mc::kDefaultMemLevel);
    EXPECT_EQ(g.level, 6);
    const EncoderParams d = tune(params(Coding::kDeflate, 6));
    EXPECT_EQ(d.window_log, 15);
    EXPECT_EQ(d.mem_level, mc::kDefaultMemLevel);
    const EncoderParams b = tune(params(Coding::kBrotli, 4));
    EXPECT_EQ(b.window_log, 22);  // BROTLI_DEFAULT_WINDOW
    EXPECT_EQ(b.level, 4);
    const EncoderParams z = tune(params(Coding::kZstd, 3));
    EXPECT_EQ(z.window_log, 0);  // the level's own, capped by the encoder
    EXPECT_EQ(z.level, 3);
    EXPECT_EQ(z.size_hint, -1);
}

TEST(TuneTest, ConfiguredWindowKeptWhenSizeUnknown) {
    EXPECT_EQ(tune(params(Coding::kGzip, 6, -1, 12)).window_log, 12);
    EXPECT_EQ(tune(params(Coding::kGzip, 6, -1, 12)).mem_level, mc::kDefaultMemLevel);
    EXPECT_EQ(tune(params(Coding::kBrotli, 4, -1, 24)).window_log, 24);
    EXPECT_EQ(tune(params(Coding::kZstd, 3, -1, 20)).window_log, 20);
}

struct ClampCase {
    Coding coding;
    int level_in, level_out;
    int window_in, window_out;
};

TEST(TuneTest, ClampsLevelAndWindowIntoRange) {
    const std::vector<ClampCase> cases = {
        {Coding::kGzip, 0, 1, 8, 9},     {Coding::kGzip, 10, 9, 16, 15},
        {Coding::kGzip, -5, 1, -3, 9},   {Coding::kDeflate, 42, 9, 99, 15},
        {Coding::kBrotli, -1, 0, 9, 10}, {Coding::kBrotli, 12, 11, 25, 24},
        {Coding::kBrotli, 0, 0, 10, 10}, {Coding::kZstd, 0, 1, 9, 10},
        {Coding::kZstd, 20, 19, 24, 23}, {Coding::kZstd, 22, 19, 31, 23},
        {Coding::kZstd, -7, 1, 27, 23},
    };
    for (const ClampCase& c : cases) {
        SCOPED_TRACE(std::string(mc::coding_token(c.coding)) + " level " +
                     std::to_string(c.level_in) + " window " + std::to_string(c.window_in));
        const EncoderParams p = tune(params(c.coding, c.level_in, -1, c.window_in));
        EXPECT_EQ(p.level, c.level_out);
        EXPECT_EQ(p.window_log, c.window_out);
    }
}

TEST(TuneTest, ClampsMemLevelAndBrotliBlock) {
    EXPECT_EQ(tune(params(Coding::kGzip, 6, -1, 0, 0)).mem_level, 8);
    EXPECT_EQ(tune(params(Coding::kGzip, 6, -1, 0, 12)).mem_level, 9);
    EXPECT_EQ(tune(params(Coding::kGzip, 6, -1, 0, -4)).mem_level, 1);
    EXPECT_EQ(tune(params(Coding::kGzip, 6, -1, 0, 9)).mem_level, 9);
    EncoderParams b = params(Coding::kBrotli, 4);
    EXPECT_EQ(tune(b).brotli_lgblock, 0);  // library default stays
    b.brotli_lgblock = 8;
    EXPECT_EQ(tune(b).brotli_lgblock, 16);
    b.brotli_lgblock = 30;
    EXPECT_EQ(tune(b).brotli_lgblock, 24);
    b.brotli_lgblock = 18;
    EXPECT_EQ(tune(b).brotli_lgblock, 18);
}

// ---- Known body length: windows shrink to it.

struct SizeCase {
    Coding coding;
    std::int64_t size;
    int configured_window;  // 0: default
    int window;
    int mem_level;  // zlib only; 0: not checked
};

const std::vector<SizeCase> kSizeCases = {
    // gzip: usable window is 2^w - 262 (MIN_LOOKAHEAD); each halving also halves memLevel
    // (nginx ngx_http_gzip_filter_memory).
    SizeCase{Coding::kGzip, 0, 0, 9, 2}, SizeCase{Coding::kGzip, 1, 0, 9, 2},
    SizeCase{Coding::kGzip, 250, 0, 9, 2}, SizeCase{Coding::kGzip, 251, 0, 10, 3},
    SizeCase{Coding::kGzip, 1000, 0, 11, 4}, SizeCase{Coding::kGzip, 4 * kKiB, 0, 13, 6},
    SizeCase{Coding::kGzip, 16 * kKiB - 262, 0, 14, 7},
    SizeCase{Coding::kGzip, 16 * kKiB, 0, 15, 8},
    SizeCase{Coding::kGzip, 32 * kKiB - 262, 0, 15, 8},
    SizeCase{Coding::kGzip, 32 * kKiB, 0, 15, 8}, SizeCase{Coding::kGzip, kMiB, 0, 15, 8},
    SizeCase{Coding::kGzip, 100 * kMiB, 0, 15, 8},
    // A configured smaller window is the cap, and memLevel shrinks from there.
    SizeCase{Coding::kGzip, kMiB, 12, 12, 8}, SizeCase{Coding::kGzip, 100, 12, 9, 5},
    SizeCase{Coding::kDeflate, 100, 0, 9, 2}, SizeCase{Coding::kDeflate, 10 * kKiB, 0, 14, 7},
    SizeCase{Coding::kDeflate, kMiB, 0, 15, 8},
    // br: window 2^w - 16 bytes (ngx_brotli); default cap 22, configured up to 24.
    SizeCase{Coding::kBrotli, 0, 0, 10, 0}, SizeCase{Coding::kBrotli, 1008, 0, 10, 0},
    SizeCase{Coding::kBrotli, 1009, 0, 11, 0}, SizeCase{Coding::kBrotli, 64 * kKiB, 0, 17, 0},
    SizeCase{Coding::kBrotli, 4 * kMiB - 16, 0, 22, 0},
    SizeCase{Coding::kBrotli, 4 * kMiB, 0, 22, 0}, SizeCase{Coding::kBrotli, 100 * kMiB, 0, 22, 0},
    SizeCase{Coding::kBrotli, 100 * kMiB, 24, 24, 0},
    SizeCase{Coding::kBrotli, 8 * kMiB - 16, 24, 23, 0},
    SizeCase{Coding::kBrotli, 8 * kMiB, 24, 24, 0}, SizeCase{Coding::kBrotli, kMiB, 16, 16, 0},
    // zstd: the smallest window covering the body, never above what the level uses by itself
    // (2^21 at the default level 3) nor above 2^23 (RFC 9659).
    SizeCase{Coding::kZstd, 0, 0, 10, 0}, SizeCase{Coding::kZstd, 1024, 0, 10, 0},
    SizeCase{Coding::kZstd, 1025, 0, 11, 0}, SizeCase{Coding::kZstd, 100 * kKiB, 0, 17, 0},
    SizeCase{Coding::kZstd, 2 * kMiB, 0, 21, 0}, SizeCase{Coding::kZstd, 2 * kMiB + 1, 0, 21, 0},
    SizeCase{Coding::kZstd, 8 * kMiB, 0, 21, 0}, SizeCase{Coding::kZstd, 10 * kMiB, 0, 21, 0},
    SizeCase{Coding::kZstd, std::int64_t{1} << 40, 0, 21, 0},
    SizeCase{Coding::kZstd, 10 * kMiB, 20, 20, 0}, SizeCase{Coding::kZstd, 1000, 20, 10, 0},
    SizeCase{Coding::kZstd, 10 * kMiB, 24, 23, 0}};

TEST(TuneTest, SizeTable) {
    for (const SizeCase& c : kSizeCases) {
        SCOPED_TRACE(::testing::Message() << mc::coding_token(c.coding) << " size " << c.size
                                          << " configured window " << c.configured_window);
        const EncoderParams p =
            tune(params(c.coding, mc::default_level(c.coding), c.size, c.configured_window));
        EXPECT_EQ(p.window_log, c.window);
        if (c.mem_level != 0) {
            EXPECT_EQ(p.mem_level, c.mem_level);
        }
        EXPECT_EQ(p.size_hint, c.size);
    }
}

// Every length, not just the table: the window covers the body and is the smallest that does.
TEST(TuneTest, ZstdKnownLengthNeverGrowsTheLevelsWindow) {
    for (int level = 1; level <= 19; ++level) {
        for (const std::int64_t n : {std::int64_t{100}, 64 * kKiB, 4 * kMiB, 64 * kMiB}) {
            const EncoderParams z = tune(params(Coding::kZstd, level, n));
            EXPECT_LE(z.window_log, mc::zstd_level_window_log(level)) << level << " " << n;
            EXPECT_LE(z.window_log, mc::kZstdMaxWindowLog);
        }
    }
    EXPECT_EQ(mc::zstd_level_window_log(1), 19);
    EXPECT_EQ(mc::zstd_level_window_log(19), 23);
}

TEST(TuneTest, GzipWindowIsSmallestCoveringLikeNginx) {
    for (std::int64_t n = 0; n <= 70000; n += (n < 2048 ? 1 : 97)) {
        const EncoderParams p = tune(params(Coding::kGzip, 6, n));
        const int w = p.window_log;
        ASSERT_GE(w, 9) << n;
        ASSERT_LE(w, 15) << n;
        if (w < 15) {
            ASSERT_GE((std::int64_t{1} << w) - 262, n) << "window too small for " << n;
        }
        if (w > 9) {
            ASSERT_LT((std::int64_t{1} << (w - 1)) - 262, n) << "window too big for " << n;
        }
        ASSERT_EQ(p.mem_level, std::max(1, mc::kDefaultMemLevel - (15 - w))) << n;
    }
}

TEST(TuneTest, BrotliAndZstdWindowsAreSmallestCovering) {
    for (std::int64_t n = 0; n <= (std::int64_t{1} << 25); n = n < 4096 ? n + 1 : n * 5 / 4) {
        const EncoderParams b = tune(params(Coding::kBrotli, 4, n));
        if (b.window_log < 22) {
            ASSERT_GE((std::int64_t{1} << b.window_log) - 16, n) << n;
        }
        if (b.window_log > 10) {
            ASSERT_LT((std::int64_t{1} << (b.window_log - 1)) - 16, n) << n;
        }
        const EncoderParams z = tune(params(Coding::kZstd, 3, n));
        ASSERT_LE(z.window_log, mc::zstd_level_window_log(3)) << n;
        if (z.window_log < mc::zstd_level_window_log(3)) {
            ASSERT_GE(std::int64_t{1} << z.window_log, n) << n;
        }
        if (z.window_log > 10) {
            ASSERT_LT(std::int64_t{1} << (z.window_log - 1), n) << n;
        }
    }
}

TEST(TuneTest, ZstdNeverAbove23AtAnyLevel) {
    const std::vector<std::int64_t> sizes = {
        -1, 0, 1000, kMiB, 8 * kMiB, 8 * kMiB + 1, 10 * kMiB, std::int64_t{1} << 40};
    for (int level = -3; level <= 25; ++level) {
        for (const std::int64_t size : sizes) {
            for (const int window : {0, 10, 22, 23, 24, 27, 31}) {
                const EncoderParams p = tune(params(Coding::kZstd, level, size, window));
                ASSERT_LE(p.window_log, 23)
                    << "level " << level << " size " << size << " window " << window;
                ASSERT_GE(p.level, 1);
                ASSERT_LE(p.level, 19);
            }
        }
    }
}

TEST(TuneTest, IsIdempotent) {
    for (const Coding c : mc::kAllCompressing) {
        for (const std::int64_t n :
             {std::int64_t{-1}, std::int64_t{0}, std::int64_t{5000}, 10 * kMiB}) {
            const EncoderParams once = tune(params(c, mc::default_level(c), n));
            const EncoderParams twice = tune(once);
            EXPECT_EQ(once.window_log, twice.window_log) << mc::coding_token(c) << " " << n;
            EXPECT_EQ(once.mem_level, twice.mem_level) << mc::coding_token(c) << " " << n;
            EXPECT_EQ(once.level, twice.level) << mc::coding_token(c) << " " << n;
        }
    }
}

// ---- What the produced streams say about their windows.

/// Window size a zstd frame needs, from its header (RFC 8878 §3.1.1.1). nullopt if malformed.
struct ZstdFrameHeader {
    std::uint64_t window_size = 0;
    bool single_segment = false;
    std::optional<std::uint64_t> content_size;
};

std::optional<ZstdFrameHeader> parse_zstd_frame_header(std::string_view f) {
    if (f.size() < 6) return std::nullopt;
    const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(f[i]); };
    if (byte(0) != 0x28 || byte(1) != 0xB5 || byte(2) != 0x2F || byte(3) != 0xFD) {
        return std::nullopt;  // magic 0xFD2FB528, little-endian
    }
    const std::uint8_t fhd = byte(4);
    const unsigned fcs_flag = fhd >> 6;
    ZstdFrameHeader h;
    h.single_segment = (fhd & 0x20) != 0;
    const unsigned did_flag = fhd & 0x3;
    std::size_t pos = 5;
    if (!h.single_segment) {
        // Window_Descriptor: Exponent (5 bits), Mantissa (3 bits).
        const std::uint8_t wd = byte(pos++);
        const unsigned window_log = 10u + (wd >> 3);
        const std::uint64_t base = std::uint64_t{1} << window_log;
        h.window_size = base + (base / 8) * (wd & 7u);
    }
    static constexpr std::size_t kDidSize[4] = {0, 1, 2, 4};
    pos += kDidSize[did_flag];
    const std::size_t fcs_size =
        fcs_flag == 0 ? (h.single_segment ? 1 : 0) : (std::size_t{1} << fcs_flag);
    if (f.size() < pos + fcs_size) return std::nullopt;
    if (fcs_size > 0) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < fcs_size; ++i) v |= std::uint64_t{byte(pos + i)} << (8 * i);
        if (fcs_size == 2) v += 256;
        h.content_size = v;
    }
    if (h.single_segment) h.window_size = h.content_size.value_or(0);
    return h;
}

/// A body with a 1 MiB random block repeated 9 MiB later: an encoder whose window reached back
/// more than 8 MiB could copy it; ours must not.
std::string far_repeat_body() {
    std::mt19937 rng(7);
    std::string block(1 << 20, '\0');
    for (char& ch : block) ch = static_cast<char>(rng() & 0xff);
    std::string body = block;
    body.append(8u << 20, 'x');
    body += block;
    return body;
}

std::string encode_streaming(const EncoderParams& p, std::string_view in, std::size_t chunk) {
    auto enc = mc::make_encoder(p);
    EXPECT_TRUE(enc.is_ok()) << enc.status().reason();
    if (!enc.is_ok()) return {};
    mc::StringSink sink;
    for (std::size_t i = 0; i < in.size(); i += chunk) {
        const mc::Status st =
            enc.value()->write(mc_test::as_bytes(in.substr(i, chunk)), mc::Flush::kNone, sink);
        EXPECT_TRUE(st.is_ok()) << st.reason();
    }
    const mc::Status st = enc.value()->write({}, mc::Flush::kFinish, sink);
    EXPECT_TRUE(st.is_ok()) << st.reason();
    return sink.take();
}

TEST(ZstdWindowTest, HeaderParserReadsKnownFrames) {
    // Frames made by libzstd directly, to check the parser before trusting it below.
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ASSERT_NE(cctx, nullptr);
    ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 21)));
    const std::string in(300000, 'a');
    std::string out(ZSTD_compressBound(in.size()), '\0');
    // Unknown size (streamed in two parts): a Window_Descriptor, no content size.
    ZSTD_inBuffer a{in.data(), 1000, 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &o, &a, ZSTD_e_continue)));
    ZSTD_inBuffer b{in.data() + 1000, in.size() - 1000, 0};
    std::size_t rc = 0;
    do {
        rc = ZSTD_compressStream2(cctx, &o, &b, ZSTD_e_end);
        ASSERT_FALSE(ZSTD_isError(rc));
    } while (rc != 0);
    auto h = parse_zstd_frame_header(std::string_view(out.data(), o.pos));
    ASSERT_TRUE(h.has_value());
    EXPECT_FALSE(h->single_segment);
    EXPECT_EQ(h->window_size, std::uint64_t{1} << 21);
    EXPECT_FALSE(h->content_size.has_value());
    // Known small size: single segment, the window is the content size.
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    const std::size_t n = ZSTD_compress2(cctx, out.data(), out.size(), in.data(), 5000);
    ASSERT_FALSE(ZSTD_isError(n));
    h = parse_zstd_frame_header(std::string_view(out.data(), n));
    ASSERT_TRUE(h.has_value());
    EXPECT_TRUE(h->single_segment);
    EXPECT_EQ(h->window_size, 5000u);
    ASSERT_TRUE(h->content_size.has_value());
    EXPECT_EQ(*h->content_size, 5000u);
    EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), n), 5000u);
    ZSTD_freeCCtx(cctx);
}

TEST(ZstdWindowTest, LimitedDecoderRejectsLargerWindow) {
    // The 8 MiB decoder used below is a real limit: a 16 MiB-window frame fails in it.
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ASSERT_NE(cctx, nullptr);
    ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 24)));
    const std::string in(20000, 'z');
    std::string out(ZSTD_compressBound(in.size()) + 64, '\0');
    ZSTD_inBuffer ib{in.data(), in.size() / 2, 0};
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_continue)));
    ZSTD_inBuffer ib2{in.data() + in.size() / 2, in.size() - in.size() / 2, 0};
    std::size_t rc = 0;
    do {
        rc = ZSTD_compressStream2(cctx, &ob, &ib2, ZSTD_e_end);
        ASSERT_FALSE(ZSTD_isError(rc));
    } while (rc != 0);
    ZSTD_freeCCtx(cctx);
    const std::string frame(out.data(), ob.pos);
    const auto h = parse_zstd_frame_header(frame);
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->window_size, std::uint64_t{1} << 24);
    EXPECT_FALSE(mc_test::decode_all(Coding::kZstd, frame, {.zstd_window_log_max = 23}).ok);
    EXPECT_TRUE(mc_test::decode_all(Coding::kZstd, frame, {.zstd_window_log_max = 24}).ok);
}

TEST(ZstdWindowTest, EveryLevelStaysWithin8MiBWhenSizeUnknown) {
    // Streamed without a size hint: the frame header carries the window the level wants.
    std::string body;
    std::mt19937 rng(11);
    while (body.size() < 64000) body += "chunk-" + std::to_string(rng() % 5000) + " ";
    for (int level = 1; level <= 19; ++level) {
        SCOPED_TRACE("level " + std::to_string(level));
        const std::string frame = encode_streaming(params(Coding::kZstd, level), body, 7000);
        const auto h = parse_zstd_frame_header(frame);
        ASSERT_TRUE(h.has_value());
        EXPECT_FALSE(h->content_size.has_value());
        EXPECT_LE(h->window_size, std::uint64_t{8} << 20);
        const auto d = mc_test::decode_all(Coding::kZstd, frame, {.zstd_window_log_max = 23});
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == body);
    }
}

TEST(ZstdWindowTest, WindowFollowsKnownSize) {
    std::string body(3000, '\0');
    std::mt19937 rng(3);
    for (char& ch : body) ch = static_cast<char>('a' + rng() % 26);
    // Content-Length known (a hint, not pledged): the window is sized to it.
    const std::string frame = encode_streaming(params(Coding::kZstd, 19, 3000), body, 1000);
    const auto h = parse_zstd_frame_header(frame);
    ASSERT_TRUE(h.has_value());
    EXPECT_LE(h->window_size, std::uint64_t{1} << tune(params(Coding::kZstd, 19, 3000)).window_log);
    EXPECT_LE(h->window_size, 4096u);
    const auto d = mc_test::decode_all(Coding::kZstd, frame, {.zstd_window_log_max = 12});
    ASSERT_TRUE(d.ok) << d.error;
    EXPECT_TRUE(d.data == body);
}

TEST(ZstdWindowTest, Level19On10MiBDecodesWithin8MiB) {
    const std::string body = far_repeat_body();
    ASSERT_GE(body.size(), std::size_t{10} << 20);
    // Streamed, size unknown.
    {
        const std::string frame = encode_streaming(params(Coding::kZstd, 19), body, 1 << 20);
        const auto h = parse_zstd_frame_header(frame);
        ASSERT_TRUE(h.has_value());
        EXPECT_FALSE(h->single_segment);
        EXPECT_LE(h->window_size, std::uint64_t{8} << 20);
        const auto d = mc_test::decode_all(Coding::kZstd, frame, {.zstd_window_log_max = 23});
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == body);
        // The repeated block 9 MiB back was out of reach, so both copies are in the frame.
        EXPECT_GT(frame.size(), std::size_t{2} << 20);
    }
    // Whole body at once (compress_all): the size is pledged, the window still <= 8 MiB.
    {
        mc::StringSink sink;
        const auto n = mc::compress_all(params(Coding::kZstd, 19), mc_test::as_bytes(body), sink);
        ASSERT_TRUE(n.is_ok()) << n.status().reason();
        EXPECT_EQ(n.value(), sink.data().size());
        const auto h = parse_zstd_frame_header(sink.data());
        ASSERT_TRUE(h.has_value());
        EXPECT_FALSE(h->single_segment);  // a single segment would need a window = 10 MiB
        EXPECT_LE(h->window_size, std::uint64_t{8} << 20);
        ASSERT_TRUE(h->content_size.has_value());
        EXPECT_EQ(*h->content_size, body.size());
        EXPECT_EQ(ZSTD_getFrameContentSize(sink.data().data(), sink.data().size()), body.size());
        const auto d = mc_test::decode_all(Coding::kZstd, sink.data(), {.zstd_window_log_max = 23});
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == body);
    }
}

TEST(ZstdWindowTest, ExactSmallBodyPledgesItsSize) {
    const std::string body(777, 'q');
    mc::StringSink sink;
    ASSERT_TRUE(mc::compress_all(params(Coding::kZstd, 3), mc_test::as_bytes(body), sink).is_ok());
    const auto h = parse_zstd_frame_header(sink.data());
    ASSERT_TRUE(h.has_value());
    ASSERT_TRUE(h->content_size.has_value());
    EXPECT_EQ(*h->content_size, 777u);
    EXPECT_LE(h->window_size, 1024u);
}

// zlib format (deflate coding): CMF's CINFO is log2(window) - 8 (RFC 1950 §2.2).
TEST(ZlibWindowTest, DeflateHeaderCarriesTunedWindow) {
    for (const std::int64_t n : {std::int64_t{10}, std::int64_t{700}, std::int64_t{5000},
                                 std::int64_t{20000}, std::int64_t{-1}}) {
        const std::string body(static_cast<std::size_t>(n < 0 ? 50000 : n), 'k');
        const EncoderParams p = params(Coding::kDeflate, 6, n);
        const std::string out = encode_streaming(p, body, 4096);
        ASSERT_GE(out.size(), 2u);
        const auto cmf = static_cast<std::uint8_t>(out[0]);
        EXPECT_EQ(cmf & 0x0f, 8) << "CM must be deflate";
        EXPECT_EQ((cmf >> 4) + 8, tune(p).window_log) << "size " << n;
        const auto d = mc_test::decode_all(Coding::kDeflate, out);
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == body);
    }
}

/// WBITS from a brotli stream header (RFC 7932 §9.1), or 0 when malformed.
int brotli_wbits(std::string_view s) {
    if (s.empty()) return 0;
    unsigned bits = static_cast<std::uint8_t>(s[0]);
    if (s.size() > 1) bits |= static_cast<unsigned>(static_cast<std::uint8_t>(s[1])) << 8;
    if ((bits & 1u) == 0) return 16;
    const unsigned n = (bits >> 1) & 7u;
    if (n != 0) return static_cast<int>(17 + n);
    const unsigned m = (bits >> 4) & 7u;
    if (m == 0) return 17;
    if (m == 1) return 0;  // large-window extension, not for HTTP
    return static_cast<int>(8 + m);
}

TEST(BrotliWindowTest, StreamHeaderCarriesTunedWindow) {
    // Quality 0 and 1 are excluded: libbrotli raises their window to at least 18 by design.
    for (const int quality : {2, 5, 9}) {
        for (const std::int64_t n : {std::int64_t{0}, std::int64_t{100}, std::int64_t{5000},
                                     std::int64_t{300000}, std::int64_t{-1}}) {
            SCOPED_TRACE("quality " + std::to_string(quality) + " size " + std::to_string(n));
            std::string body(static_cast<std::size_t>(n < 0 ? 10000 : n), '\0');
            for (std::size_t i = 0; i < body.size(); ++i) {
                body[i] = static_cast<char>('a' + (i * 7 + i / 13) % 26);
            }
            const EncoderParams p = params(Coding::kBrotli, quality, n);
            const std::string out = encode_streaming(p, body, 3000);
            EXPECT_EQ(brotli_wbits(out), tune(p).window_log);
            const auto d = mc_test::decode_all(Coding::kBrotli, out);
            ASSERT_TRUE(d.ok) << d.error;
            EXPECT_TRUE(d.data == body);
        }
    }
}

}  // namespace
