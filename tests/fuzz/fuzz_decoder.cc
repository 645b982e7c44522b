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
//
// Members: the body split into up to 4 parts, each compressed on its own and the streams
// concatenated (gzip members, RFC 1952 section 2.2; zstd frames with skippable frames before,
// between and after them, RFC 8878 section 3.1), whole or cut at a random byte. gzip and zstd
// decode the concatenation to the body; deflate and brotli refuse a second stream. A cut body is
// never finished() unless the cut falls where a member or frame ends, and then the output is
// exactly the parts before it; small bodies are checked at every cut.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

constexpr std::size_t kMaxMembers = 4;
constexpr std::size_t kEveryCutMax = 2048;

std::span<const std::byte> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string compress(mc::Coding coding, std::string_view body) {
    mc::EncoderParams params;
    params.coding = coding;
    params.level = mc::level_range(coding).min + 1;  // fast; the decoder is under test
    mc::StringSink sink;
    MC_FUZZ_CHECK(mc::compress_all(params, as_bytes(body), sink).is_ok());
    return sink.take();
}

// RFC 8878 section 3.1.2: magic 0x184D2A5?, a little-endian 32-bit size, that many bytes.
std::string skippable_frame(unsigned variant, std::string_view payload) {
    std::string s;
    const std::uint32_t magic = 0x184D2A50U + (variant & 0xFU);
    const auto size = static_cast<std::uint32_t>(payload.size());
    for (int i = 0; i < 4; ++i) s += static_cast<char>((magic >> (8 * i)) & 0xFFU);
    for (int i = 0; i < 4; ++i) s += static_cast<char>((size >> (8 * i)) & 0xFFU);
    return s + std::string(payload);
}

// Where a member or frame ends in the stream, and how much of the body is decoded by then.
struct Boundary {
    std::size_t stream_end;
    std::size_t body_end;
};

bool multi_unit(mc::Coding c) {
    return c == mc::Coding::kGzip || c == mc::Coding::kZstd;
}

// One write of stream[0, cut): finished() only at a boundary, with exactly the body before it
// (gzip and zstd need every byte of a member or frame, their trailer or last block included;
// brotli and deflate may only claim an end whose output is a whole part).
void check_cut(mc::Coding coding, std::string_view stream, std::size_t cut,
               const std::vector<Boundary>& bounds, std::string_view body) {
    mc::Result<std::unique_ptr<mc::Decoder>> made =
        mc::make_decoder(coding, mc::InflateLimits{0, 0, 0});
    MC_FUZZ_CHECK(made.is_ok());
    mc::StringSink sink;
    const mc::Status st = made.value()->write(as_bytes(stream.substr(0, cut)), sink);
    if (!st.is_ok()) {
        MC_FUZZ_CHECK(st.code() == mc::Code::kCorrupt);
        return;
    }
    MC_FUZZ_CHECK(body.starts_with(sink.data()));
    bool at_boundary = false;
    bool whole_parts = false;
    for (const Boundary& b : bounds) {
        if (b.stream_end == cut && sink.data().size() == b.body_end) at_boundary = true;
        if (sink.data().size() == b.body_end) whole_parts = true;
    }
    if (cut == 0) whole_parts = sink.data().empty();
    if (multi_unit(coding)) {
        MC_FUZZ_CHECK(made.value()->finished() == at_boundary);
    } else if (made.value()->finished()) {
        MC_FUZZ_CHECK(whole_parts);
    }
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
    enum class Stream { kRaw, kValid, kDamaged, kTruncated, kTrailing, kMembers };
    const Stream kind =
        fdp.PickValueInArray({Stream::kRaw, Stream::kValid, Stream::kDamaged, Stream::kTruncated,
                              Stream::kTrailing, Stream::kMembers});
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
        if (kind != Stream::kMembers) stream = compress(coding, body);
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
    // Members: the body in parts, each compressed alone, the streams one after the other.
    std::vector<Boundary> bounds;
    std::size_t members = 1;
    std::size_t first_end = 0;  // where the first member or frame ends
    bool cut_short = false;
    if (kind == Stream::kMembers) {
        members = fdp.ConsumeIntegralInRange<std::size_t>(1, kMaxMembers);
        std::size_t done = 0;
        const auto skippable = [&] {
            if (coding != mc::Coding::kZstd || !fdp.ConsumeBool()) return;
            const auto variant = fdp.ConsumeIntegral<std::uint8_t>();
            stream += skippable_frame(
                variant, fdp.ConsumeBytesAsString(fdp.ConsumeIntegralInRange<std::size_t>(0, 64)));
            bounds.push_back({stream.size(), done});
        };
        for (std::size_t m = 0; m < members; ++m) {
            skippable();
            const std::size_t len =
                m + 1 == members ? body.size() - done
                                 : fdp.ConsumeIntegralInRange<std::size_t>(0, body.size() - done);
            stream += compress(coding, std::string_view(body).substr(done, len));
            done += len;
            bounds.push_back({stream.size(), done});
        }
        skippable();
        first_end = bounds.front().stream_end;
        if (fdp.ConsumeBool()) {
            stream.resize(fdp.ConsumeIntegralInRange<std::size_t>(0, stream.size()));
            cut_short = true;
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
            // The whole stream, then junk after its end: an error, or for gzip and zstd the
            // start of a member or frame, so not finished; or, zstd only, a whole (skippable
            // or empty) frame that adds nothing.
            if (multi_unit(coding)) {
                MC_FUZZ_CHECK(!st.is_ok() || !dec.finished() || out == body);
            } else {
                MC_FUZZ_CHECK(!st.is_ok());
            }
            break;
        case Stream::kDamaged: break;
        case Stream::kMembers: {
            const bool several_streams = members > 1 || bounds.size() > 1;
            if (!multi_unit(coding) && several_streams && compressed_size > first_end) {
                // One stream per body: what follows the first is refused.
                MC_FUZZ_CHECK(!st.is_ok());
                break;
            }
            if (st.is_ok()) {
                MC_FUZZ_CHECK(body.starts_with(out));
                if (!cut_short) {
                    MC_FUZZ_CHECK(dec.finished() && out == body);
                    MC_FUZZ_CHECK(dec.total_in() == compressed_size);
                }
            } else {
                MC_FUZZ_CHECK(st.code() == mc::Code::kLimitExceeded);
                MC_FUZZ_CHECK(limits.max_output > 0 || limits.ratio > 0);
            }
            if (multi_unit(coding) || !several_streams) {
                // Truncation is never taken for the end, at every cut of a small body.
                if (compressed_size <= kEveryCutMax) {
                    for (std::size_t cut = 0; cut <= compressed_size; ++cut) {
                        check_cut(coding, stream, cut, bounds, body);
                    }
                } else {
                    check_cut(coding, stream, compressed_size, bounds, body);
                }
            }
            break;
        }
    }
    return 0;
}
