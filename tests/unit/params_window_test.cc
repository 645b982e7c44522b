// SPDX-License-Identifier: Apache-2.0
// mc::tune's windows as the produced streams carry them: zstd frame headers (and a decoder limited
// to 8 MiB), the zlib header's CINFO, brotli's WBITS. On paper: params_test.cc.
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
