// SPDX-License-Identifier: Apache-2.0
// Encoder round trips through the real decoders: random chunking, random sync flushes, a prefix
// check after every flush (zstd tests/fuzz stream_round_trip), tiny sink spans, error paths.
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

// ---- Seeds: fixed for reproducible CI, overridable to explore (MC_TEST_SEED=n).

std::uint32_t base_seed() {
    if (const char* env = std::getenv("MC_TEST_SEED")) {
        return static_cast<std::uint32_t>(std::strtoul(env, nullptr, 10));
    }
    return 0x6d63u;
}

// ---- Inputs

enum class Input { kEmpty, kOneByte, kRandom, kText, kMixed, kLarge };

const char* input_name(Input i) {
    switch (i) {
        case Input::kEmpty: return "empty";
        case Input::kOneByte: return "onebyte";
        case Input::kRandom: return "random";
        case Input::kText: return "text";
        case Input::kMixed: return "mixed";
        case Input::kLarge: return "10MiB";
    }
    return "?";
}

void append_random(std::string& s, std::size_t n, std::mt19937& rng) {
    const std::size_t start = s.size();
    s.resize(start + n);
    for (std::size_t i = 0; i < n; ++i) s[start + i] = static_cast<char>(rng() >> 24);
}

void append_text(std::string& s, std::size_t n, std::mt19937& rng) {
    static constexpr std::array<std::string_view, 16> kWords = {"<div class=\"item\">",
                                                                "</div>\n",
                                                                "the ",
                                                                "quick ",
                                                                "brown ",
                                                                "fox ",
                                                                "jumps ",
                                                                "over ",
                                                                "lazy ",
                                                                "dog ",
                                                                "multicompress ",
                                                                "{\"id\": ",
                                                                "\"name\": \"x\"}, ",
                                                                "zstd ",
                                                                "brotli ",
                                                                "gzip "};
    const std::size_t end = s.size() + n;
    while (s.size() < end) {
        s += kWords[rng() % kWords.size()];
        if (rng() % 16 == 0) s += std::to_string(rng() % 100000);
    }
    s.resize(end);
}

/// Text with stretches of random bytes, so blocks switch between compressed and stored.
void append_mixed(std::string& s, std::size_t n, std::mt19937& rng) {
    const std::size_t end = s.size() + n;
    while (s.size() < end) {
        const std::size_t left = end - s.size();
        const std::size_t len = std::min<std::size_t>(left, 1 + rng() % 40000);
        if (rng() % 4 == 0) {
            append_random(s, len, rng);
        } else {
            append_text(s, len, rng);
        }
    }
}

std::string make_input(Input kind, std::uint32_t seed) {
    std::mt19937 rng(seed ^ 0x9e3779b9u);
    std::string s;
    switch (kind) {
        case Input::kEmpty: break;
        case Input::kOneByte: s.push_back(static_cast<char>(rng())); break;
        case Input::kRandom: append_random(s, 96 * 1024, rng); break;
        case Input::kText: append_text(s, 128 * 1024, rng); break;
        case Input::kMixed: append_mixed(s, 128 * 1024, rng); break;
        case Input::kLarge: append_mixed(s, 10 * 1024 * 1024, rng); break;
    }
    return s;
}

// ---- Sinks

/// Lends 1 to `max` bytes per reserve() (random), and checks the Sink contract: commit() only
/// after reserve(), never more than lent, nothing written past the span.
class TinySink final : public mc::Sink {
public:
    explicit TinySink(std::uint32_t seed, std::size_t max = 7) : rng_(seed), dist_(1, max) {}

    std::span<std::byte> reserve() override {
        EXPECT_FALSE(reserved_) << "reserve() called twice without commit()";
        span_ = dist_(rng_);
        buf_.fill(kCanary);
        reserved_ = true;
        return {buf_.data(), span_};
    }

    Status commit(std::size_t used) override {
        EXPECT_TRUE(reserved_) << "commit() without reserve()";
        EXPECT_LE(used, span_) << "committed more than was lent";
        for (std::size_t i = span_; i < buf_.size(); ++i) {
            if (buf_[i] != kCanary) {
                ADD_FAILURE() << "encoder wrote past the lent span";
                break;
            }
        }
        out_.append(reinterpret_cast<const char*>(buf_.data()), std::min(used, span_));
        reserved_ = false;
        return Status::ok();
    }

    [[nodiscard]] const std::string& data() const { return out_; }

private:
    static constexpr std::byte kCanary{0xA5};
    std::mt19937 rng_;
    std::uniform_int_distribution<std::size_t> dist_;
    std::array<std::byte, 32> buf_{};
    std::size_t span_ = 0;
    bool reserved_ = false;
    std::string out_;
};

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

enum class SinkKind { kString, kTiny, kOneByte };

const char* sink_name(SinkKind k) {
    switch (k) {
        case SinkKind::kString: return "stringsink";
        case SinkKind::kTiny: return "tinysink";
        case SinkKind::kOneByte: return "onebytesink";
    }
    return "?";
}

// ---- The streaming round trip

struct RoundTripCase {
    Coding coding;
    int level;
    Input input;
    SinkKind sink;
};

std::string case_name(const RoundTripCase& c) {
    return std::string(mc::coding_token(c.coding)) + "_" + std::to_string(c.level) + "_" +
           input_name(c.input) + "_" + sink_name(c.sink);
}

void PrintTo(const RoundTripCase& c, std::ostream* os) {
    *os << case_name(c);
}

std::uint32_t case_seed(const RoundTripCase& c) {
    std::uint32_t h = base_seed();
    for (const char ch : case_name(c)) h = h * 31u + static_cast<unsigned char>(ch);
    return h;
}

EncoderParams params_for(Coding c, int level) {
    EncoderParams p;
    p.coding = c;
    p.level = level;
    return p;
}

/// Streams `input` through a new encoder into `sink` (whose bytes are `sink_data`) in random
/// chunks with random sync flushes, feeding a decoder as it goes: at every point the decoded
/// bytes are a prefix of the input, and after every sync flush they are exactly the input so far.
void stream_round_trip(Coding coding, int level, const std::string& input, mc::Sink& sink,
                       const std::string& sink_data, std::uint32_t seed) {
    SCOPED_TRACE(::testing::Message() << "case seed=" << seed << " from MC_TEST_SEED="
                                      << base_seed() << " (set it to reproduce or explore)");
    std::mt19937 rng(seed);
    auto made = mc::make_encoder(params_for(coding, level));
    ASSERT_TRUE(made.is_ok()) << made.status().reason();
    mc::Encoder& enc = *made.value();
    ASSERT_EQ(enc.coding(), coding);
    auto dec = mc_test::make_decoder(coding);
    ASSERT_NE(dec, nullptr);

    const bool large = input.size() > (1u << 20);
    const std::size_t max_chunk = large ? 256 * 1024 : input.size();
    std::size_t pos = 0;       // input bytes handed to the encoder
    std::size_t fed = 0;       // output bytes handed to the decoder
    std::size_t verified = 0;  // decoded bytes compared with the input
    int syncs = 0;
    bool finished = false;

    const auto check_decoded = [&](bool synced) {
        ASSERT_TRUE(dec->feed(std::string_view(sink_data).substr(fed)))
            << "decoder: " << dec->error() << " at input " << pos;
        fed = sink_data.size();
        const std::string& out = dec->output();
        ASSERT_LE(out.size(), pos) << "decoded more than was written";
        ASSERT_TRUE(std::string_view(out).substr(verified) ==
                    std::string_view(input).substr(verified, out.size() - verified))
            << "decoded bytes differ from the input in [" << verified << ", " << out.size() << ")";
        verified = out.size();
        if (synced) {
            ASSERT_EQ(out.size(), pos) << "after sync flush " << syncs << " not all input decodes";
            ASSERT_FALSE(dec->finished()) << "a sync flush ended the stream";
        }
    };

    while (pos < input.size()) {
        const std::size_t left = input.size() - pos;
        std::size_t n = 0;
        switch (rng() % 4) {
            case 0: n = 1 + rng() % 16; break;
            case 1:
            case 2: n = 1 + rng() % 4096; break;
            default: n = 1 + rng() % std::max<std::size_t>(max_chunk, 1); break;
        }
        n = std::min(n, left);
        const bool last = n == left;
        Flush flush = Flush::kNone;
        if (last && rng() % 2 == 0) {
            flush = Flush::kFinish;  // data and end in one call
        } else if (rng() % 5 == 0) {
            flush = Flush::kSync;
        }
        const Status st = enc.write(as_bytes(std::string_view(input).substr(pos, n)), flush, sink);
        ASSERT_TRUE(st.is_ok()) << st.reason();
        pos += n;
        if (flush == Flush::kFinish) {
            finished = true;
            break;
        }
        if (flush == Flush::kSync) ++syncs;
        check_decoded(flush == Flush::kSync);
        if (::testing::Test::HasFatalFailure()) return;
        // Now and then a flush or a no-op with no data (a FLUSH bucket on an idle stream).
        if (rng() % 10 == 0) {
            const Flush empty_flush = rng() % 2 == 0 ? Flush::kSync : Flush::kNone;
            ASSERT_TRUE(enc.write({}, empty_flush, sink).is_ok());
            if (empty_flush == Flush::kSync) ++syncs;
            check_decoded(empty_flush == Flush::kSync);
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
    ASSERT_EQ(pos, input.size());
    if (!finished) {  // the last chunk went without kFinish (or there was no data at all)
        const Status st = enc.write({}, Flush::kFinish, sink);
        ASSERT_TRUE(st.is_ok()) << st.reason();
    }
    ASSERT_TRUE(dec->feed(std::string_view(sink_data).substr(fed))) << dec->error();
    fed = sink_data.size();
    ASSERT_TRUE(dec->finished()) << "stream has no end after kFinish";
    ASSERT_EQ(dec->output().size(), input.size());
    ASSERT_TRUE(dec->output() == input) << "decoded stream differs from the input";

    // The whole output again, in one piece, with a fresh decoder.
    const mc_test::Decoded whole = mc_test::decode_all(coding, sink_data);
    ASSERT_TRUE(whole.ok) << whole.error;
    ASSERT_TRUE(whole.data == input);

    EXPECT_EQ(enc.bytes_in(), input.size());
    EXPECT_EQ(enc.bytes_out(), sink_data.size());
    // Further writes are refused and add nothing.
    const std::size_t size_at_end = sink_data.size();
    EXPECT_FALSE(enc.write(as_bytes("more"), Flush::kNone, sink).is_ok());
    EXPECT_EQ(sink_data.size(), size_at_end);
}

class RoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(RoundTrip, RandomChunksAndSyncFlushes) {
    const RoundTripCase& c = GetParam();
    const std::uint32_t seed = case_seed(c);
    const std::string input = make_input(c.input, seed);
    switch (c.sink) {
        case SinkKind::kString: {
            mc::StringSink sink;
            stream_round_trip(c.coding, c.level, input, sink, sink.data(), seed);
            break;
        }
        case SinkKind::kOneByte: {
            mc::StringSink sink(1);
            stream_round_trip(c.coding, c.level, input, sink, sink.data(), seed);
            break;
        }
        case SinkKind::kTiny: {
            TinySink sink(seed);
            stream_round_trip(c.coding, c.level, input, sink, sink.data(), seed);
            break;
        }
    }
}

struct CodingLevels {
    Coding coding;
    std::vector<int> levels;
};

std::vector<RoundTripCase> round_trip_cases() {
    const std::vector<CodingLevels> all = {
        {Coding::kGzip, {1, 6, 9}},
        {Coding::kDeflate, {1, 6}},
        {Coding::kBrotli, {0, 1, 4, 11}},
        {Coding::kZstd, {1, 3, 19}},
    };
    std::vector<RoundTripCase> cases;
    for (const CodingLevels& cl : all) {
        for (const int level : cl.levels) {
            for (const Input in :
                 {Input::kEmpty, Input::kOneByte, Input::kRandom, Input::kText, Input::kMixed}) {
                cases.push_back({cl.coding, level, in, SinkKind::kString});
                cases.push_back({cl.coding, level, in, SinkKind::kTiny});
                if (in == Input::kOneByte || in == Input::kText) {
                    cases.push_back({cl.coding, level, in, SinkKind::kOneByte});
                }
            }
        }
    }
    // 10 MiB: fast levels only, to keep the suite within seconds.
    for (const Coding c : {Coding::kGzip, Coding::kDeflate, Coding::kBrotli, Coding::kZstd}) {
        cases.push_back({c, 1, Input::kLarge, SinkKind::kString});
    }
    cases.push_back({Coding::kZstd, 3, Input::kLarge, SinkKind::kTiny});
    cases.push_back({Coding::kGzip, 1, Input::kLarge, SinkKind::kTiny});
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Encoders, RoundTrip, ::testing::ValuesIn(round_trip_cases()),
                         [](const ::testing::TestParamInfo<RoundTripCase>& param_info) {
                             return case_name(param_info.param);
                         });

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
