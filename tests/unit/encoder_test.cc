// SPDX-License-Identifier: Apache-2.0
// Encoder round trips through the real decoders: random chunking, random sync flushes, a prefix
// check after every flush (zstd tests/fuzz stream_round_trip), tiny sink spans. compress_all, the
// factory, framing and error paths: encoder_api_test.cc.
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
using mc_test::base_seed;
using mc_test::Input;
using mc_test::input_name;
using mc_test::make_input;
using mc_test::params_for;

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

}  // namespace
