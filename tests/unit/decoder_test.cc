// SPDX-License-Identifier: Apache-2.0
// mc::Decoder (DEFLATE input filter, INFLATE output filter): round trips with our encoders in
// random pieces, corrupt/truncated/trailing input, and mod_deflate's inflate limits. Bodies of
// several members or frames: decoder_members_test.cc.
#include "mc/decoder.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "decode.h"
#include "decoder_util.h"
#include "mc/encoder.h"
#include "mc/sink.h"

namespace {

using mc::Code;
using mc::Coding;
using mc::InflateLimits;
using mc::Status;
using mc_test::as_bytes;
using mc_test::compress;
using mc_test::decoder;
using mc_test::kNoLimits;
using mc_test::noise;
using mc_test::text;

TEST(DecoderTest, RoundTripInRandomPieces) {
    const std::uint32_t seed = 4242;
    SCOPED_TRACE(::testing::Message() << "seed=" << seed);
    std::mt19937 rng(seed);
    for (const Coding c : mc::kAllCompressing) {
        for (const std::string& body :
             {std::string(), std::string("x"), text(300000, 1), noise(70000, 2)}) {
            SCOPED_TRACE(::testing::Message() << mc::coding_token(c) << " " << body.size());
            const std::string enc = compress(c, body);
            auto d = decoder(c);
            ASSERT_NE(d, nullptr);
            mc::StringSink out(1 + rng() % 20000);
            std::size_t pos = 0;
            while (pos < enc.size()) {
                const std::size_t n = std::min<std::size_t>(enc.size() - pos, 1 + rng() % 3000);
                const Status st = d->write(as_bytes(std::string_view(enc).substr(pos, n)), out);
                ASSERT_TRUE(st.is_ok()) << st.reason();
                pos += n;
                ASSERT_TRUE(std::string_view(body).starts_with(out.data()));
            }
            EXPECT_TRUE(d->finished());
            EXPECT_TRUE(out.data() == body);
            EXPECT_EQ(d->total_in(), enc.size());
            EXPECT_EQ(d->total_out(), body.size());
            // Nothing more is expected; an empty write is fine.
            EXPECT_TRUE(d->write({}, out).is_ok());
        }
    }
}

TEST(DecoderTest, StreamedWithSyncFlushesAndOneBytePieces) {
    const std::string body = text(20000, 3);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        mc::EncoderParams p;
        p.coding = c;
        p.level = mc::default_level(c);
        auto e = mc::make_encoder(p);
        ASSERT_TRUE(e.is_ok());
        mc::StringSink enc;
        for (std::size_t i = 0; i < body.size(); i += 5000) {
            ASSERT_TRUE(
                e.value()
                    ->write(as_bytes(std::string_view(body).substr(i, 5000)), mc::Flush::kSync, enc)
                    .is_ok());
        }
        ASSERT_TRUE(e.value()->write({}, mc::Flush::kFinish, enc).is_ok());
        auto d = decoder(c);
        ASSERT_NE(d, nullptr);
        mc::StringSink out;
        for (const char ch : enc.data()) {
            ASSERT_TRUE(d->write(as_bytes(std::string_view(&ch, 1)), out).is_ok());
        }
        EXPECT_TRUE(d->finished());
        EXPECT_TRUE(out.data() == body);
    }
}

TEST(DecoderTest, TruncatedStreamIsNotFinished) {
    const std::string body = text(50000, 4);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        const std::string enc = compress(c, body);
        auto d = decoder(c);
        mc::StringSink out;
        ASSERT_TRUE(
            d->write(as_bytes(std::string_view(enc).substr(0, enc.size() - 1)), out).is_ok());
        EXPECT_FALSE(d->finished());
        EXPECT_TRUE(std::string_view(body).starts_with(out.data()));
    }
}

TEST(DecoderTest, DataAfterTheEndIsCorrupt) {
    const std::string body = text(1000, 5);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        const std::string enc = compress(c, body);
        {
            auto d = decoder(c);
            mc::StringSink out;
            const Status st = d->write(as_bytes(enc + "trailing"), out);
            EXPECT_EQ(st.code(), Code::kCorrupt) << st.reason();
        }
        {
            // The same, in a second write after the stream ended.
            auto d = decoder(c);
            mc::StringSink out;
            ASSERT_TRUE(d->write(as_bytes(enc), out).is_ok());
            ASSERT_TRUE(d->finished());
            EXPECT_EQ(d->write(as_bytes("trailing"), out).code(), Code::kCorrupt);
        }
        if (c == Coding::kDeflate || c == Coding::kBrotli) {
            // One stream per body: a second whole stream is data after the end too.
            auto d = decoder(c);
            mc::StringSink out;
            ASSERT_TRUE(d->write(as_bytes(enc), out).is_ok());
            ASSERT_TRUE(d->finished());
            EXPECT_EQ(d->write(as_bytes(enc), out).code(), Code::kCorrupt);
        }
    }
}

TEST(DecoderTest, GarbageIsCorrupt) {
    const std::string garbage = "this is not compressed data, not at all";
    for (const Coding c : {Coding::kGzip, Coding::kDeflate, Coding::kZstd}) {
        SCOPED_TRACE(mc::coding_token(c));
        auto d = decoder(c);
        mc::StringSink out;
        EXPECT_EQ(d->write(as_bytes(garbage), out).code(), Code::kCorrupt);
    }
    // gzip vs the zlib format are not interchangeable.
    auto d = decoder(Coding::kDeflate);
    mc::StringSink out;
    EXPECT_EQ(d->write(as_bytes(compress(Coding::kGzip, "hello")), out).code(), Code::kCorrupt);
}

TEST(DecoderTest, BrotliGarbageNeverDecodesToSomethingFinished) {
    // Brotli has no magic number; garbage fails or stays unfinished, never "succeeds".
    auto d = decoder(Coding::kBrotli);
    mc::StringSink out;
    const Status st = d->write(as_bytes(std::string(64, '\xff')), out);
    EXPECT_TRUE(!st.is_ok() || !d->finished());
}

TEST(DecoderTest, ZstdWindowOver8MiBIsRefused) {
    // RFC 9659: the decoder does not allocate for a frame that needs more than 8 MiB.
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ASSERT_NE(cctx, nullptr);
    ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 24)));
    const std::string in(10000, 'w');
    std::string frame(ZSTD_compressBound(in.size()) + 64, '\0');
    ZSTD_outBuffer o{frame.data(), frame.size(), 0};
    ZSTD_inBuffer a{in.data(), 5000, 0};
    ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &o, &a, ZSTD_e_continue)));
    ZSTD_inBuffer b{in.data() + 5000, 5000, 0};
    std::size_t rc = 0;
    do {
        rc = ZSTD_compressStream2(cctx, &o, &b, ZSTD_e_end);
        ASSERT_FALSE(ZSTD_isError(rc));
    } while (rc != 0);
    ZSTD_freeCCtx(cctx);
    frame.resize(o.pos);
    ASSERT_TRUE(mc_test::decode_all(Coding::kZstd, frame, {.zstd_window_log_max = 0}).ok);

    auto d = decoder(Coding::kZstd);
    mc::StringSink out;
    EXPECT_EQ(d->write(as_bytes(frame), out).code(), Code::kWindowTooLarge);
    EXPECT_EQ(d->window(), std::uint64_t{1} << 24);
}

std::string compress_window(Coding c, std::string_view body, int window_log) {
    mc::EncoderParams p;
    p.coding = c;
    p.level = 5;
    p.window_log = window_log;
    mc::StringSink sink;
    EXPECT_TRUE(mc::compress_all(p, as_bytes(body), sink).is_ok());
    return sink.take();
}

TEST(DecoderWindowTest, OverTheCapIsRefusedBeforeDecoding) {
    // A 3 MiB body with a 4 MiB window (br: the stream's WBITS; zstd: the frame header) against
    // a 1 MiB cap: refused at the first bytes, nothing decoded; with the cap raised, decoded.
    const std::string body = text(3 << 20, 7);
    for (const Coding c : {Coding::kBrotli, Coding::kZstd}) {
        SCOPED_TRACE(std::string(mc::coding_token(c)));
        const std::string enc = compress_window(c, body, 22);
        InflateLimits capped = kNoLimits;
        capped.max_window = 1 << 20;
        auto d = decoder(c, capped);
        mc::StringSink out;
        EXPECT_EQ(d->write(as_bytes(enc), out).code(), Code::kWindowTooLarge);
        EXPECT_GT(d->window(), std::uint64_t{1} << 20);
        EXPECT_LE(d->window(), std::uint64_t{4} << 20);
        EXPECT_EQ(out.data().size(), 0U);

        InflateLimits raised = kNoLimits;
        raised.max_window = 4 << 20;
        auto ok = decoder(c, raised);
        mc::StringSink all;
        ASSERT_TRUE(ok->write(as_bytes(enc), all).is_ok());
        EXPECT_TRUE(ok->finished());
        EXPECT_EQ(all.data(), body);
    }
}

TEST(DecoderWindowTest, AtTheCapDecodes) {
    const std::string body = text(3 << 20, 8);
    InflateLimits capped = kNoLimits;
    capped.max_window = 1 << 20;
    for (const Coding c : {Coding::kBrotli, Coding::kZstd, Coding::kGzip, Coding::kDeflate}) {
        SCOPED_TRACE(std::string(mc::coding_token(c)));
        const std::string enc = compress_window(c, body, c == Coding::kGzip ? 15 : 20);
        auto d = decoder(c, capped);
        mc::StringSink out;
        ASSERT_TRUE(d->write(as_bytes(enc), out).is_ok());
        EXPECT_TRUE(d->finished());
        EXPECT_EQ(out.data(), body);
    }
}

TEST(DecoderWindowTest, BrotliWindowBitsOfTheFirstByte) {
    // RFC 7932 section 9.1, bits from the least significant: 0 -> 16; 1 nnn (n != 0) -> 17 + n;
    // 1 000 mmm: m == 0 -> 17, m > 1 -> 8 + m (m == 1 is the large-window extension).
    const std::vector<std::pair<unsigned, int>> cases = {
        {0x00, 16}, {0x03, 18}, {0x05, 19}, {0x07, 20}, {0x09, 21}, {0x0b, 22},
        {0x0d, 23}, {0x0f, 24}, {0x01, 17}, {0x21, 10}, {0x31, 11}, {0x71, 15},
    };
    for (const auto& [byte, wbits] : cases) {
        SCOPED_TRACE(byte);
        InflateLimits tiny = kNoLimits;
        tiny.max_window = 1;  // anything is over it
        auto d = decoder(Coding::kBrotli, tiny);
        mc::StringSink out;
        const std::string first(1, static_cast<char>(byte));
        EXPECT_EQ(d->write(as_bytes(first), out).code(), Code::kWindowTooLarge);
        EXPECT_EQ(d->window(), std::uint64_t{1} << wbits);
    }
    InflateLimits tiny = kNoLimits;
    tiny.max_window = 1;
    auto large = decoder(Coding::kBrotli, tiny);
    mc::StringSink out;
    EXPECT_NE(large->write(as_bytes(std::string(1, '\x11')), out).code(), Code::kWindowTooLarge);
}

// A zstd frame by hand (RFC 8878 section 3.1.1): single segment, a 1-byte Frame_Content_Size,
// then raw blocks (3-byte headers: size << 3 | type << 1 | last).
std::string zstd_frame(unsigned char content_size, const std::vector<std::string>& raw_blocks) {
    std::string f("\x28\xb5\x2f\xfd\x20", 5);
    f += static_cast<char>(content_size);
    for (std::size_t i = 0; i < raw_blocks.size(); ++i) {
        const auto h = static_cast<std::uint32_t>(raw_blocks[i].size() << 3) |
                       (i + 1 == raw_blocks.size() ? 1U : 0U);
        for (int k = 0; k < 3; ++k) f += static_cast<char>((h >> (8 * k)) & 0xFFU);
        f += raw_blocks[i];
    }
    return f;
}

TEST(DecoderTest, ZstdContentSizeMustMatchInEveryCut) {
    // A frame that declares 33 bytes and holds 5, its last block empty: libzstd refuses it when
    // it gets the whole frame at once but streamed it through; found by fuzz_decoder
    // (corpus/fuzz_decoder/regression-zstd-content-size).
    const std::string good = zstd_frame(5, {"hello", ""});
    const std::string bad_frames[] = {zstd_frame(33, {"hello", ""}), zstd_frame(4, {"hello", ""}),
                                      zstd_frame(6, {"hel", "lo"})};
    for (const std::string& bad : bad_frames) {
        for (const std::string& enc : {bad, good + bad, bad + good}) {
            for (std::size_t cut = 0; cut <= enc.size(); ++cut) {
                SCOPED_TRACE(cut);
                for (const std::size_t sink_chunk : {1UL, 4096UL}) {
                    auto d = decoder(Coding::kZstd);
                    mc::StringSink out(sink_chunk);
                    Status st = d->write(as_bytes(std::string_view(enc).substr(0, cut)), out);
                    if (st.is_ok()) st = d->write(as_bytes(std::string_view(enc).substr(cut)), out);
                    EXPECT_EQ(st.code(), Code::kCorrupt);
                }
            }
        }
    }
    // The declared size that matches decodes in every cut, frame after frame.
    const std::string two = good + zstd_frame(3, {"a", "bc"});
    for (std::size_t cut = 0; cut <= two.size(); ++cut) {
        SCOPED_TRACE(cut);
        auto d = decoder(Coding::kZstd);
        mc::StringSink out(1);
        ASSERT_TRUE(d->write(as_bytes(std::string_view(two).substr(0, cut)), out).is_ok());
        ASSERT_TRUE(d->write(as_bytes(std::string_view(two).substr(cut)), out).is_ok());
        EXPECT_TRUE(d->finished());
        EXPECT_EQ(out.data(), "helloabc");
    }
}

TEST(DecoderTest, IdentityHasNoDecoder) {
    EXPECT_FALSE(mc::make_decoder(Coding::kIdentity, kNoLimits).is_ok());
}

// ---- Limits (DeflateInflateLimitRequestBody, DeflateInflateRatioLimit/Burst)

TEST(DecoderLimitsTest, MaxOutput) {
    const std::string body = noise(200000, 6);  // ratio ~1: only the size limit matters
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        const std::string enc = compress(c, body);
        {
            auto d = decoder(c, {static_cast<std::int64_t>(body.size()), 0, 0});
            mc::StringSink out;
            EXPECT_TRUE(d->write(as_bytes(enc), out).is_ok()) << "exactly the limit is allowed";
            EXPECT_TRUE(out.data() == body);
        }
        {
            const std::int64_t limit = 100000;
            auto d = decoder(c, {limit, 0, 0});
            mc::StringSink out;
            const Status st = d->write(as_bytes(enc), out);
            EXPECT_EQ(st.code(), Code::kLimitExceeded) << st.reason();
            // Stopped within one step of the limit.
            EXPECT_LE(out.data().size(),
                      static_cast<std::size_t>(limit) + mc::Decoder::kDecodeStep);
        }
    }
}

TEST(DecoderLimitsTest, RatioStopsABomb) {
    const std::string zeros(16u << 20, '\0');
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        const std::string bomb = compress(c, zeros, 1);
        ASSERT_LT(bomb.size() * 200, zeros.size()) << "not a bomb";
        {
            auto d = decoder(c, {0, 200, 3});
            mc::StringSink out;
            const Status st = d->write(as_bytes(bomb), out);
            EXPECT_EQ(st.code(), Code::kLimitExceeded) << st.reason();
            EXPECT_LT(out.data().size(), std::size_t{4} << 20) << "memory was not bounded";
        }
        {
            // Ratio 0: no ratio limit (the size limit alone applies).
            auto d = decoder(c, {0, 0, 0});
            mc::StringSink out;
            ASSERT_TRUE(d->write(as_bytes(bomb), out).is_ok());
            EXPECT_TRUE(d->finished());
            EXPECT_EQ(out.data().size(), zeros.size());
        }
    }
}

TEST(DecoderLimitsTest, OrdinaryBodiesPassTheDefaultRatio) {
    const std::string body = text(1 << 20, 7);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        const std::string enc = compress(c, body, 1);
        auto d = decoder(c, InflateLimits{});  // defaults: ratio 200, burst 3, no size limit
        mc::StringSink out;
        ASSERT_TRUE(d->write(as_bytes(enc), out).is_ok());
        EXPECT_TRUE(d->finished());
        EXPECT_TRUE(out.data() == body);
    }
}

TEST(DecoderTest, TinySinkSpans) {
    // The decoder must cope with sinks that lend a few bytes at a time.
    class SmallSink final : public mc::Sink {
    public:
        std::span<std::byte> reserve() override {
            n_ = n_ % 5 + 1;
            return {buf_, n_};
        }
        Status commit(std::size_t used) override {
            EXPECT_LE(used, n_);
            data.append(reinterpret_cast<const char*>(buf_), used);
            return Status::ok();
        }
        std::string data;

    private:
        std::byte buf_[8]{};
        std::size_t n_ = 0;
    };
    const std::string body = text(30000, 8);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        auto d = decoder(c);
        SmallSink out;
        ASSERT_TRUE(d->write(as_bytes(compress(c, body)), out).is_ok());
        EXPECT_TRUE(d->finished());
        EXPECT_TRUE(out.data == body);
    }
}

}  // namespace
