// SPDX-License-Identifier: Apache-2.0
// The encoder's calls: compress_all (pieces, cancel flag), the factory and its parameters, gzip and
// deflate framing, writes after kFinish, flush corner cases, sink errors, and the test decoders'
// own failures. The streaming round trips: encoder_test.cc.
#include "mc/encoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "decode.h"
#include "encoder_util.h"
#include "mc/coding.h"
#include "mc/params.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace {

using mc::Coding;
using mc::EncoderParams;
using mc::Flush;
using mc::Status;
using mc_test::as_bytes;
using mc_test::Input;
using mc_test::make_input;
using mc_test::params_for;

// ---- Sinks

/// Accepts `budget` bytes, then fails every commit() that carries data.
class FailingSink final : public mc::Sink {
public:
    explicit FailingSink(std::size_t budget) : budget_(budget) {}
    std::span<std::byte> reserve() override { return {buf_.data(), buf_.size()}; }
    Status commit(std::size_t used) override {
        if (used > budget_) return {mc::Code::kLimitExceeded, "test sink is full"};
        budget_ -= used;
        return Status::ok();
    }

private:
    std::array<std::byte, 512> buf_{};
    std::size_t budget_;
};

// ---- compress_all

TEST(CompressAllTest, RoundTripsEveryCoding) {
    for (const Coding c : mc::kAllCompressing) {
        for (const Input in : {Input::kEmpty, Input::kOneByte, Input::kRandom, Input::kText}) {
            SCOPED_TRACE(std::string(mc::coding_token(c)) + " " + input_name(in));
            const std::string input = make_input(in, 99);
            mc::StringSink sink;
            const auto n =
                mc::compress_all(params_for(c, mc::default_level(c)), as_bytes(input), sink);
            ASSERT_TRUE(n.is_ok()) << n.status().reason();
            EXPECT_EQ(n.value(), sink.data().size());
            const auto d = mc_test::decode_all(c, sink.data());
            ASSERT_TRUE(d.ok) << d.error;
            EXPECT_TRUE(d.data == input);
        }
    }
}

TEST(CompressAllTest, TextShrinksAndRandomDoesNotBlowUp) {
    const std::string text = make_input(Input::kText, 5);
    const std::string noise = make_input(Input::kRandom, 5);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        mc::StringSink t;
        ASSERT_TRUE(mc::compress_all(params_for(c, 1), as_bytes(text), t).is_ok());
        EXPECT_LT(t.data().size(), text.size() / 2);
        mc::StringSink r;
        ASSERT_TRUE(mc::compress_all(params_for(c, 1), as_bytes(noise), r).is_ok());
        EXPECT_LE(r.data().size(), noise.size() + noise.size() / 100 + 64);
    }
}

TEST(CompressAllTest, InPiecesWithACancelFlagItRoundTrips) {
    std::string input;
    for (int i = 0; input.size() < 3 * mc::kCancelStep + 123; ++i) {
        input += make_input(Input::kText, static_cast<unsigned>(i));
    }
    const std::atomic<bool> go{false};
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        mc::StringSink sink;
        const auto n = mc::compress_all(params_for(c, 5), as_bytes(input), sink, &go);
        ASSERT_TRUE(n.is_ok()) << n.status().reason();
        EXPECT_EQ(n.value(), sink.data().size());
        const auto d = mc_test::decode_all(c, sink.data());
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == input);
    }
}

TEST(CompressAllTest, ACancelledJobStopsWithCancelled) {
    const std::string input(5 * mc::kCancelStep, 'a');
    const std::atomic<bool> stop{true};
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        mc::StringSink sink;
        const auto n = mc::compress_all(params_for(c, 9), as_bytes(input), sink, &stop);
        ASSERT_FALSE(n.is_ok());
        EXPECT_EQ(n.status().code(), mc::Code::kCancelled);
    }
}

TEST(CompressAllTest, IdentityIsRefused) {
    mc::StringSink sink;
    const auto n = mc::compress_all(params_for(Coding::kIdentity, 0), as_bytes("abc"), sink);
    EXPECT_FALSE(n.is_ok());
    EXPECT_TRUE(sink.data().empty());
}

// ---- Factory and parameters

TEST(MakeEncoderTest, IdentityHasNoEncoder) {
    const auto e = mc::make_encoder(params_for(Coding::kIdentity, 1));
    ASSERT_FALSE(e.is_ok());
    EXPECT_EQ(e.status().code(), mc::Code::kInvalidArgument);
}

TEST(MakeEncoderTest, ReportsCodingAndClampsWildParams) {
    const std::string input = make_input(Input::kText, 8).substr(0, 40000);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        EncoderParams p = params_for(c, 99);
        p.window_log = 99;
        p.mem_level = 99;
        p.brotli_lgblock = 99;
        p.size_hint = 5;  // wrong hint (smaller than the body): still correct output
        auto e = mc::make_encoder(p);
        ASSERT_TRUE(e.is_ok()) << e.status().reason();
        EXPECT_EQ(e.value()->coding(), c);
        mc::StringSink sink;
        ASSERT_TRUE(e.value()->write(as_bytes(input), Flush::kFinish, sink).is_ok());
        const auto d = mc_test::decode_all(c, sink.data());
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == input);
    }
}

TEST(MakeEncoderTest, SizeHintLargerThanBodyIsHarmless) {
    const std::string input = make_input(Input::kMixed, 4);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        EncoderParams p = params_for(c, mc::default_level(c));
        p.size_hint = 50 * 1024 * 1024;
        auto e = mc::make_encoder(p);
        ASSERT_TRUE(e.is_ok());
        mc::StringSink sink;
        ASSERT_TRUE(e.value()->write(as_bytes(input), Flush::kNone, sink).is_ok());
        ASSERT_TRUE(e.value()->write({}, Flush::kFinish, sink).is_ok());
        const auto d = mc_test::decode_all(c, sink.data());
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == input);
    }
}

TEST(MakeEncoderTest, BrotliBlockSizeParameter) {
    const std::string input = make_input(Input::kMixed, 6);
    for (const int lgblock : {16, 20, 24}) {
        EncoderParams p = params_for(Coding::kBrotli, 5);
        p.brotli_lgblock = lgblock;
        mc::StringSink sink;
        ASSERT_TRUE(mc::compress_all(p, as_bytes(input), sink).is_ok()) << lgblock;
        const auto d = mc_test::decode_all(Coding::kBrotli, sink.data());
        ASSERT_TRUE(d.ok) << d.error;
        EXPECT_TRUE(d.data == input);
    }
}

// ---- Framing: gzip is RFC 1952, deflate is the zlib format (RFC 1950), not raw and not gzip.

TEST(FramingTest, GzipAndDeflateAreTheRightFormats) {
    const std::string input = make_input(Input::kText, 12);
    mc::StringSink gz;
    ASSERT_TRUE(mc::compress_all(params_for(Coding::kGzip, 6), as_bytes(input), gz).is_ok());
    ASSERT_GE(gz.data().size(), 18u);
    EXPECT_EQ(static_cast<std::uint8_t>(gz.data()[0]), 0x1f);
    EXPECT_EQ(static_cast<std::uint8_t>(gz.data()[1]), 0x8b);
    EXPECT_FALSE(mc_test::decode_all(Coding::kDeflate, gz.data()).ok);

    mc::StringSink zl;
    ASSERT_TRUE(mc::compress_all(params_for(Coding::kDeflate, 6), as_bytes(input), zl).is_ok());
    ASSERT_GE(zl.data().size(), 6u);
    const unsigned cmf = static_cast<std::uint8_t>(zl.data()[0]);
    const unsigned flg = static_cast<std::uint8_t>(zl.data()[1]);
    EXPECT_EQ(cmf & 0x0fu, 8u);
    EXPECT_EQ((cmf * 256 + flg) % 31, 0u);
    EXPECT_FALSE(mc_test::decode_all(Coding::kGzip, zl.data()).ok);
}

// ---- After kFinish

TEST(FinishTest, WriteAfterFinishIsAnError) {
    for (const Coding c : mc::kAllCompressing) {
        for (const bool with_data : {false, true}) {
            SCOPED_TRACE(std::string(mc::coding_token(c)) + (with_data ? " data" : " empty"));
            auto e = mc::make_encoder(params_for(c, mc::default_level(c)));
            ASSERT_TRUE(e.is_ok());
            mc::StringSink sink;
            ASSERT_TRUE(
                e.value()->write(as_bytes(with_data ? "hello" : ""), Flush::kFinish, sink).is_ok());
            const std::string done = sink.data();
            EXPECT_FALSE(e.value()->write(as_bytes("x"), Flush::kNone, sink).is_ok());
            EXPECT_FALSE(e.value()->write({}, Flush::kNone, sink).is_ok());
            EXPECT_FALSE(e.value()->write({}, Flush::kSync, sink).is_ok());
            EXPECT_FALSE(e.value()->write({}, Flush::kFinish, sink).is_ok());
            EXPECT_FALSE(e.value()->write(as_bytes("y"), Flush::kFinish, sink).is_ok());
            EXPECT_EQ(sink.data(), done) << "a refused write produced output";
            const auto d = mc_test::decode_all(c, sink.data());
            ASSERT_TRUE(d.ok) << d.error;
            EXPECT_EQ(d.data, with_data ? "hello" : "");
        }
    }
}

// ---- Flush corner cases

TEST(FlushTest, RepeatedAndEmptySyncFlushes) {
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        auto e = mc::make_encoder(params_for(c, mc::default_level(c)));
        ASSERT_TRUE(e.is_ok());
        mc::StringSink sink;
        auto dec = mc_test::make_decoder(c);
        std::size_t fed = 0;
        std::string expected;
        const auto sync = [&](std::string_view data) {
            ASSERT_TRUE(e.value()->write(as_bytes(data), Flush::kSync, sink).is_ok());
            expected += data;
            ASSERT_TRUE(dec->feed(std::string_view(sink.data()).substr(fed))) << dec->error();
            fed = sink.data().size();
            ASSERT_EQ(dec->output(), expected);
        };
        sync("");  // flush before any data
        sync("");
        sync("event: one\n\n");
        sync("");
        sync("");
        sync("event: two\n\n");
        sync("x");
        ASSERT_TRUE(e.value()->write({}, Flush::kFinish, sink).is_ok());
        ASSERT_TRUE(dec->feed(std::string_view(sink.data()).substr(fed))) << dec->error();
        EXPECT_TRUE(dec->finished());
        EXPECT_EQ(dec->output(), expected);
    }
}

TEST(FlushTest, SyncFlushWithOneByteSpansTerminates) {
    // zlib repeats its flush marker when a flush ends exactly at the end of the output space;
    // a sink lending 1..5 bytes at a time used to make a sync flush loop forever.
    for (const std::size_t span : {1u, 2u, 3u, 4u, 5u, 6u, 7u}) {
        for (const Coding c : mc::kAllCompressing) {
            SCOPED_TRACE(std::string(mc::coding_token(c)) + " span " + std::to_string(span));
            auto e = mc::make_encoder(params_for(c, mc::default_level(c)));
            ASSERT_TRUE(e.is_ok());
            mc::StringSink sink(span);
            const std::string input = make_input(Input::kText, 3).substr(0, 3000);
            ASSERT_TRUE(e.value()->write(as_bytes(input), Flush::kSync, sink).is_ok());
            ASSERT_TRUE(e.value()->write({}, Flush::kSync, sink).is_ok());
            ASSERT_LT(sink.data().size(), input.size()) << "sync flush output is not compressed";
            auto dec = mc_test::make_decoder(c);
            ASSERT_TRUE(dec->feed(sink.data())) << dec->error();
            EXPECT_EQ(dec->output(), input);
        }
    }
}

// ---- Sink errors propagate

TEST(SinkErrorTest, CommitFailureIsReturned) {
    const std::string input = make_input(Input::kRandom, 21);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        auto e = mc::make_encoder(params_for(c, 1));
        ASSERT_TRUE(e.is_ok());
        FailingSink sink(1000);
        Status st = e.value()->write(as_bytes(input), Flush::kNone, sink);
        if (st.is_ok()) st = e.value()->write({}, Flush::kFinish, sink);
        ASSERT_FALSE(st.is_ok());
        EXPECT_EQ(st.code(), mc::Code::kLimitExceeded);
        EXPECT_STREQ(st.reason(), "test sink is full");
    }
}

// ---- The test's own decoders must be able to fail, or the round trips prove nothing.

TEST(DecoderHelperTest, DetectsTruncationAndCorruption) {
    const std::string input = make_input(Input::kText, 1);
    for (const Coding c : mc::kAllCompressing) {
        SCOPED_TRACE(mc::coding_token(c));
        mc::StringSink sink;
        ASSERT_TRUE(mc::compress_all(params_for(c, 3), as_bytes(input), sink).is_ok());
        const std::string& full = sink.data();
        ASSERT_TRUE(mc_test::decode_all(c, full).ok);
        EXPECT_FALSE(mc_test::decode_all(c, full.substr(0, full.size() - 1)).ok) << "truncated";
        EXPECT_FALSE(mc_test::decode_all(c, full + "x").ok) << "trailing garbage";
        EXPECT_FALSE(mc_test::decode_all(c, "not compressed at all").ok) << "garbage";
        std::string flipped = full;
        flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x5a);
        const auto d = mc_test::decode_all(c, flipped);
        EXPECT_FALSE(d.ok && d.data == input) << "corruption went unnoticed";
    }
}

}  // namespace
