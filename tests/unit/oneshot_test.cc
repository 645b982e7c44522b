// SPDX-License-Identifier: Apache-2.0
// OneShotCompressor: whole bodies through libdeflate (gzip, deflate) and a reused ZSTD_CCtx,
// checked with the real decoders, including reuse across bodies and the 8 MiB zstd window.
#include "mc/oneshot.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "decode.h"
#include "mc/params.h"
#include "mc/zstd_frame.h"

namespace {

using mc::Coding;
using mc::OneShotCompressor;
using mc_test::as_bytes;

mc::EncoderParams params(Coding c, int level) {
    mc::EncoderParams p;
    p.coding = c;
    p.level = level;
    return p;
}

std::string body_of(std::size_t n, std::uint32_t seed, bool random) {
    std::mt19937 rng(seed);
    std::string s;
    if (random) {
        s.resize(n);
        for (char& ch : s) ch = static_cast<char>(rng() >> 24);
        return s;
    }
    while (s.size() < n) s += "<li>item " + std::to_string(rng() % 5000) + "</li>\n";
    s.resize(n);
    return s;
}

/// Compresses into a buffer of exactly bound() bytes, so an undersized bound shows up.
mc::Result<std::string> oneshot(OneShotCompressor& z, const mc::EncoderParams& p,
                                std::string_view in) {
    std::string out(OneShotCompressor::bound(p.coding, in.size()), '\0');
    const auto n =
        z.compress(p, as_bytes(in), {reinterpret_cast<std::byte*>(out.data()), out.size()});
    if (!n.is_ok()) return n.status();
    out.resize(n.value());
    return out;
}

TEST(OneShotTest, Supports) {
    EXPECT_TRUE(OneShotCompressor::supports(Coding::kGzip));
    EXPECT_TRUE(OneShotCompressor::supports(Coding::kDeflate));
    EXPECT_TRUE(OneShotCompressor::supports(Coding::kZstd));
    EXPECT_FALSE(OneShotCompressor::supports(Coding::kBrotli));
    EXPECT_FALSE(OneShotCompressor::supports(Coding::kIdentity));
}

TEST(OneShotTest, RoundTripsEveryLevel) {
    OneShotCompressor z;  // one compressor for everything: state is reused between bodies
    const std::vector<std::string> bodies = {"", "x", body_of(100000, 1, false),
                                             body_of(70000, 2, true)};
    for (const Coding c : {Coding::kGzip, Coding::kDeflate, Coding::kZstd}) {
        const mc::Range levels = mc::level_range(c);
        for (int level = levels.min; level <= levels.max; ++level) {
            for (const std::string& body : bodies) {
                SCOPED_TRACE(::testing::Message() << mc::coding_token(c) << " level " << level
                                                  << " size " << body.size());
                const auto out = oneshot(z, params(c, level), body);
                ASSERT_TRUE(out.is_ok()) << out.status().reason();
                const auto d = mc_test::decode_all(c, out.value());
                ASSERT_TRUE(d.ok) << d.error;
                EXPECT_TRUE(d.data == body);
            }
        }
    }
}

TEST(OneShotTest, IncompressibleInputFitsTheBound) {
    OneShotCompressor z;
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000},
                                std::size_t{65536}, std::size_t{1} << 20}) {
        const std::string body = body_of(n, 3, true);
        for (const Coding c : {Coding::kGzip, Coding::kDeflate, Coding::kZstd}) {
            SCOPED_TRACE(::testing::Message() << mc::coding_token(c) << " size " << n);
            EXPECT_GE(OneShotCompressor::bound(c, n), n);
            const auto out = oneshot(z, params(c, 1), body);
            ASSERT_TRUE(out.is_ok()) << out.status().reason();
            EXPECT_TRUE(mc_test::decode_all(c, out.value()).data == body);
        }
    }
}

TEST(OneShotTest, TooSmallOutputIsAnErrorNotAnOverflow) {
    OneShotCompressor z;
    const std::string body = body_of(50000, 4, true);
    for (const Coding c : {Coding::kGzip, Coding::kDeflate, Coding::kZstd}) {
        SCOPED_TRACE(mc::coding_token(c));
        std::string out(100 + 16, '\x5a');
        const auto n = z.compress(params(c, 6), as_bytes(body),
                                  {reinterpret_cast<std::byte*>(out.data()), 100});
        EXPECT_FALSE(n.is_ok());
        EXPECT_EQ(out.substr(100), std::string(16, '\x5a')) << "wrote past the output span";
    }
}

TEST(OneShotTest, BrotliAndIdentityAreRefused) {
    OneShotCompressor z;
    std::string out(1024, '\0');
    for (const Coding c : {Coding::kBrotli, Coding::kIdentity}) {
        const auto n = z.compress(params(c, 4), as_bytes("hello"),
                                  {reinterpret_cast<std::byte*>(out.data()), out.size()});
        EXPECT_FALSE(n.is_ok()) << mc::coding_token(c);
    }
}

TEST(OneShotTest, ZstdContextIsResetBetweenBodies) {
    // A level-19 body with a big window, then small bodies at other settings: each frame carries
    // its own size and a window sized to it, whatever came before.
    OneShotCompressor z;
    std::string big;  // a repeated noise block: level 19 is quick on it
    const std::string block = body_of(64 * 1024, 5, true);
    while (big.size() < (3u << 20)) big += block;
    const auto first = oneshot(z, params(Coding::kZstd, 19), big);
    ASSERT_TRUE(first.is_ok());
    EXPECT_TRUE(mc_test::decode_all(Coding::kZstd, first.value()).data == big);
    for (const int level : {1, 3, 19}) {
        const std::string small = body_of(2000, static_cast<std::uint32_t>(level), false);
        const auto out = oneshot(z, params(Coding::kZstd, level), small);
        ASSERT_TRUE(out.is_ok());
        const auto w = mc::zstd_frame_window(as_bytes(std::string_view(out.value())));
        ASSERT_TRUE(w.is_ok());
        EXPECT_LE(w.value(), 2048u) << "level " << level;
        EXPECT_EQ(ZSTD_getFrameContentSize(out.value().data(), out.value().size()), 2000u);
        const auto d = mc_test::decode_all(Coding::kZstd, out.value(), {.zstd_window_log_max = 11});
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == small);
    }
}

TEST(OneShotTest, ZstdLevel19On10MiBStaysWithin8MiB) {
    // 1 MiB of noise repeated 9 MiB later: out of reach of an 8 MiB window.
    std::string body = body_of(1u << 20, 6, true);
    const std::string block = body;
    body.append(8u << 20, 'y');
    body += block;
    OneShotCompressor z;
    const auto out = oneshot(z, params(Coding::kZstd, 19), body);
    ASSERT_TRUE(out.is_ok()) << out.status().reason();
    const auto w = mc::zstd_frame_window(as_bytes(std::string_view(out.value())));
    ASSERT_TRUE(w.is_ok());
    EXPECT_LE(w.value(), std::uint64_t{8} << 20);
    const auto d = mc_test::decode_all(Coding::kZstd, out.value(), {.zstd_window_log_max = 23});
    ASSERT_TRUE(d.ok) << d.error;
    EXPECT_TRUE(d.data == body);
}

TEST(OneShotTest, GzipAndDeflateFraming) {
    OneShotCompressor z;
    const std::string body = body_of(10000, 7, false);
    const auto gz = oneshot(z, params(Coding::kGzip, 6), body);
    const auto zl = oneshot(z, params(Coding::kDeflate, 6), body);
    ASSERT_TRUE(gz.is_ok());
    ASSERT_TRUE(zl.is_ok());
    EXPECT_EQ(static_cast<std::uint8_t>(gz.value()[0]), 0x1f);
    EXPECT_EQ(static_cast<std::uint8_t>(gz.value()[1]), 0x8b);
    EXPECT_EQ(static_cast<std::uint8_t>(zl.value()[0]) & 0x0f, 8);
    EXPECT_FALSE(mc_test::decode_all(Coding::kDeflate, gz.value()).ok);
    EXPECT_FALSE(mc_test::decode_all(Coding::kGzip, zl.value()).ok);
    EXPECT_LT(gz.value().size(), body.size() / 2);
}

}  // namespace
