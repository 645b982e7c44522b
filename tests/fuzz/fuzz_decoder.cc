// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the inflate path (mc::Decoder, used by the DEFLATE input filter for request
// bodies and by the INFLATE output filter) and its limits.
//
// The data provider picks the coding, the limits (most output, ratio, burst), the sink, and a
// stream: raw fuzz bytes, or a body compressed by our own encoder (a short unit repeated up to
// 1 MiB, so bombs within the ratio are cheap), possibly damaged, truncated or followed by junk.
// The stream is fed in pieces, empty ones included, as bucket brigades deliver it.
//
// Invariants: no crash or sanitizer report; the byte counters match the sink; a write that
// returns ok never leaves more output than the limit, and a failing one at most one decode step
// more; an undamaged stream within its limits decodes to exactly the body, and one over a limit
// fails with kLimitExceeded after a prefix of the body; bytes after the end are kCorrupt; and
// without limits, how the stream is cut into pieces changes nothing.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "fuzz_sink.h"
#include "mc/coding.h"
#include "mc/decoder.h"
#include "mc/encoder.h"
#include "mc/params.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace {

constexpr std::size_t kMaxUnit = 16 * 1024;
constexpr std::size_t kMaxBody = 1024 * 1024;
constexpr std::size_t kMaxWrites = 4096;

std::span<const std::byte> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider fdp(data, size);
    const mc::Coding coding = fdp.PickValueInArray(
        {mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli, mc::Coding::kZstd});
    mc::InflateLimits limits;
    limits.max_output =
        fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange<std::int64_t>(1, 2 * kMaxBody);
    limits.ratio = fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange(1, 1000);
    limits.burst = fdp.ConsumeIntegralInRange(0, 5);
    const std::size_t sink_chunk = fdp.ConsumeIntegralInRange<std::size_t>(1, 100000);
    const bool varying_sink = fdp.ConsumeBool();
    enum class Stream { kRaw, kValid, kDamaged, kTruncated, kTrailing };
    const Stream kind = fdp.PickValueInArray(
        {Stream::kRaw, Stream::kValid, Stream::kDamaged, Stream::kTruncated, Stream::kTrailing});
    const std::size_t repeat = fdp.ConsumeIntegralInRange<std::size_t>(1, 1024);
    const std::string unit = fdp.ConsumeBytesAsString(
        fdp.ConsumeIntegralInRange<std::size_t>(0, std::min(fdp.remaining_bytes(), kMaxUnit)));

    // The body and the stream that carries it.
    std::string body;
    std::string stream;
    if (kind == Stream::kRaw) {
        stream = unit;
    } else {
        const std::size_t copies = unit.empty() ? 1 : std::min(repeat, kMaxBody / unit.size());
        body.reserve(unit.size() * copies);
        for (std::size_t i = 0; i < copies; ++i) body += unit;
        mc::EncoderParams params;
        params.coding = coding;
        params.level = mc::level_range(coding).min + 1;  // fast; the decoder is under test
        mc::StringSink sink;
        MC_FUZZ_CHECK(mc::compress_all(params, as_bytes(body), sink).is_ok());
        stream = sink.take();
        if (kind == Stream::kDamaged && !stream.empty()) {
            const auto at = fdp.ConsumeIntegralInRange<std::size_t>(0, stream.size() - 1);
            stream[at] = static_cast<char>(stream[at] ^ fdp.ConsumeIntegralInRange(1, 255));
        } else if (kind == Stream::kTruncated) {
            stream.resize(fdp.ConsumeIntegralInRange<std::size_t>(0, stream.size()));
        } else if (kind == Stream::kTrailing) {
            stream += static_cast<char>(fdp.ConsumeIntegral<std::uint8_t>());
            stream += fdp.ConsumeBytesAsString(fdp.ConsumeIntegralInRange<std::size_t>(0, 16));
        }
    }
    const std::size_t compressed_size = stream.size();

    mc::Result<std::unique_ptr<mc::Decoder>> made = mc::make_decoder(coding, limits);
    MC_FUZZ_CHECK(made.is_ok());
    mc::Decoder& dec = *made.value();
    mc_fuzz::CheckingSink sink(sink_chunk, varying_sink);

    // Feed it in pieces; empty pieces too (zero-length buckets).
    mc::Status st = mc::Status::ok();
    std::size_t pos = 0;
    for (std::size_t writes = 0; st.is_ok(); ++writes) {
        std::size_t len = stream.size() - pos;
        if (writes < kMaxWrites && fdp.remaining_bytes() > 0) {
            len = fdp.ConsumeIntegralInRange<std::size_t>(0, len);
        }
        st = dec.write(as_bytes(stream).subspan(pos, len), sink);
        pos += len;
        const std::uint64_t out = sink.data().size();
        MC_FUZZ_CHECK(dec.total_out() == out);
        MC_FUZZ_CHECK(dec.total_in() <= pos);
        if (limits.max_output > 0) {
            const auto max = static_cast<std::uint64_t>(limits.max_output);
            // Over the limit only when the write says so, and by one step at most.
            if (st.is_ok()) MC_FUZZ_CHECK(out <= max);
            MC_FUZZ_CHECK(out <= max + mc::Decoder::kDecodeStep);
        }
        if (!st.is_ok()) {
            MC_FUZZ_CHECK(st.code() == mc::Code::kCorrupt || st.code() == mc::Code::kLimitExceeded);
        }
        if (pos == stream.size() && (writes >= kMaxWrites || fdp.remaining_bytes() == 0)) break;
    }
    const std::string& out = sink.data();

    // However the stream is cut, it decodes the same: compare with one write of all of it.
    if (limits.max_output == 0 && limits.ratio == 0) {
        mc::Result<std::unique_ptr<mc::Decoder>> ref = mc::make_decoder(coding, limits);
        MC_FUZZ_CHECK(ref.is_ok());
        mc::StringSink ref_sink;
        const mc::Status ref_st = ref.value()->write(as_bytes(stream), ref_sink);
        const std::string& ref_out = ref_sink.data();
        MC_FUZZ_CHECK(st.is_ok() == ref_st.is_ok());
        if (st.is_ok()) {
            MC_FUZZ_CHECK(out == ref_out);
            MC_FUZZ_CHECK(dec.finished() == ref.value()->finished());
        } else {
            // Both stop at the error, perhaps after different amounts of the same output.
            MC_FUZZ_CHECK(out.starts_with(ref_out) || ref_out.starts_with(out));
        }
    }

    switch (kind) {
        case Stream::kRaw: break;
        case Stream::kValid:
            if (st.is_ok()) {
                MC_FUZZ_CHECK(dec.finished());
                MC_FUZZ_CHECK(dec.total_in() == compressed_size);
                MC_FUZZ_CHECK(out == body);
                if (limits.max_output > 0) {
                    MC_FUZZ_CHECK(body.size() <= static_cast<std::size_t>(limits.max_output));
                }
            } else {
                // Only a limit stops a valid stream, and what came out so far is the body's.
                MC_FUZZ_CHECK(st.code() == mc::Code::kLimitExceeded);
                MC_FUZZ_CHECK(limits.max_output > 0 || limits.ratio > 0);
                MC_FUZZ_CHECK(out.size() <= body.size() && body.starts_with(out));
            }
            if (limits.max_output == 0 && limits.ratio == 0) MC_FUZZ_CHECK(st.is_ok());
            break;
        case Stream::kTruncated:
            // A prefix never decodes to more than the body, and never claims to be complete
            // unless it is (zstd and brotli can end before their last bytes only if none are
            // missing).
            if (st.is_ok()) MC_FUZZ_CHECK(body.starts_with(out));
            if (st.is_ok() && dec.finished()) MC_FUZZ_CHECK(out == body);
            break;
        case Stream::kTrailing:
            // The whole stream, then junk after its end: always an error.
            MC_FUZZ_CHECK(!st.is_ok());
            break;
        case Stream::kDamaged: break;
    }
    return 0;
}
