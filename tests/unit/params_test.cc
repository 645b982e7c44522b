// SPDX-License-Identifier: Apache-2.0
// Ranges, defaults and mc::tune (window sizing), checked on paper. In the produced streams:
// params_window_test.cc.
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
#include "params_util.h"

namespace {

using mc::Coding;
using mc::EncoderParams;
using mc::tune;
using mc_test::params;

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * 1024;

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

}  // namespace
