// SPDX-License-Identifier: Apache-2.0
// Fuzz target: every encoder, round-tripped through the real decoders (after zstd's
// tests/fuzz/stream_round_trip.c).
//
// The data provider picks the codec, level, window, memLevel, brotli block, size hint, the sink's
// chunk size, and how the body is cut into write() calls with kSync flushes between them.
// Invariants: no crash or sanitizer report; the output decodes with zlib's inflate,
// BrotliDecoderDecompressStream or ZSTD_decompressStream (window limited to 2^23, RFC 9659) to
// exactly the body; after each kSync flush the output so far decodes to exactly the input so far;
// the byte counters match; a write after kFinish fails and writes nothing.
#include <brotli/decode.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_sink.h"
#include "mc/coding.h"
#include "mc/encoder.h"
#include "mc/params.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace {

constexpr std::size_t kMaxBody = 64 * 1024;
constexpr std::size_t kMaxWrites = 2048;
// Slow settings (brotli 10-11, zstd 13-19) only for inputs this small, so the fuzzer stays fast.
constexpr std::size_t kTinyInput = 2048;
constexpr std::size_t kDecodeChunk = 16 * 1024;

std::span<const std::byte> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// ---- Streaming decoders: feed() appends everything decodable so far to `out`.

class Decoder {
public:
    virtual ~Decoder() = default;
    /// False on a decoding error. Bytes after the end of the stream are an error too.
    virtual bool feed(std::string_view in, std::string& out) = 0;
    [[nodiscard]] bool ended() const { return ended_; }

protected:
    bool ended_ = false;
};

class ZlibDecoder final : public Decoder {
public:
    explicit ZlibDecoder(mc::Coding c) {
        // gzip must be gzip (RFC 1952) and deflate must be zlib (RFC 1950): no auto-detection.
        const int rc = inflateInit2(&zs_, c == mc::Coding::kGzip ? 15 + 16 : 15);
        MC_FUZZ_CHECK(rc == Z_OK);
    }
    ~ZlibDecoder() override { inflateEnd(&zs_); }

    bool feed(std::string_view in, std::string& out) override {
        if (ended_) return in.empty();
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        zs_.avail_in = static_cast<uInt>(in.size());
        for (;;) {
            const std::size_t at = out.size();
            out.resize(at + kDecodeChunk);
            zs_.next_out = reinterpret_cast<Bytef*>(out.data() + at);
            zs_.avail_out = static_cast<uInt>(kDecodeChunk);
            const int rc = inflate(&zs_, Z_NO_FLUSH);
            out.resize(at + kDecodeChunk - zs_.avail_out);
            if (rc == Z_STREAM_END) {
                ended_ = true;
                return zs_.avail_in == 0;
            }
            if (rc == Z_BUF_ERROR && zs_.avail_in == 0) return true;  // needs more input
            if (rc != Z_OK) return false;
            if (zs_.avail_in == 0 && zs_.avail_out != 0) return true;
        }
    }

private:
    z_stream zs_{};
};

class BrotliDecoder final : public Decoder {
public:
    BrotliDecoder() : state_(BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)) {
        MC_FUZZ_CHECK(state_ != nullptr);
    }
    ~BrotliDecoder() override { BrotliDecoderDestroyInstance(state_); }
    BrotliDecoder(const BrotliDecoder&) = delete;
    BrotliDecoder& operator=(const BrotliDecoder&) = delete;

    bool feed(std::string_view in, std::string& out) override {
        if (ended_) return in.empty();
        std::size_t avail_in = in.size();
        const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
        for (;;) {
            const std::size_t at = out.size();
            out.resize(at + kDecodeChunk);
            std::size_t avail_out = kDecodeChunk;
            auto* next_out = reinterpret_cast<std::uint8_t*>(out.data() + at);
            const BrotliDecoderResult r = BrotliDecoderDecompressStream(
                state_, &avail_in, &next_in, &avail_out, &next_out, nullptr);
            out.resize(at + kDecodeChunk - avail_out);
            switch (r) {
                case BROTLI_DECODER_RESULT_SUCCESS: ended_ = true; return avail_in == 0;
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: return avail_in == 0;
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue;
                case BROTLI_DECODER_RESULT_ERROR: return false;
            }
            return false;
        }
    }

private:
    BrotliDecoderState* state_;
};

class ZstdDecoder final : public Decoder {
public:
    ZstdDecoder() : dctx_(ZSTD_createDCtx()) {
        MC_FUZZ_CHECK(dctx_ != nullptr);
        // RFC 9659: a client may refuse any frame that needs more than an 8 MiB window.
        MC_FUZZ_CHECK(!ZSTD_isError(
            ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, mc::kZstdMaxWindowLog)));
    }
    ~ZstdDecoder() override { ZSTD_freeDCtx(dctx_); }
    ZstdDecoder(const ZstdDecoder&) = delete;
    ZstdDecoder& operator=(const ZstdDecoder&) = delete;

    bool feed(std::string_view in, std::string& out) override {
        if (ended_) return in.empty();
        // Everything decodable was output by the last call; and libzstd fails a stream that is
        // called repeatedly with no input ("Operation made no progress").
        if (in.empty()) return true;
        ZSTD_inBuffer input{in.data(), in.size(), 0};
        for (;;) {
            const std::size_t at = out.size();
            out.resize(at + kDecodeChunk);
            ZSTD_outBuffer output{out.data() + at, kDecodeChunk, 0};
            const std::size_t rc = ZSTD_decompressStream(dctx_, &output, &input);
            out.resize(at + output.pos);
            if (ZSTD_isError(rc)) {
                std::fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(rc));
                return false;
            }
            if (rc == 0) {  // the frame is complete; one frame per response
                ended_ = true;
                return input.pos == input.size;
            }
            if (input.pos == input.size && output.pos < output.size) return true;
        }
    }

private:
    ZSTD_DCtx* dctx_;
};

std::unique_ptr<Decoder> make_decoder(mc::Coding c) {
    switch (c) {
        case mc::Coding::kGzip:
        case mc::Coding::kDeflate: return std::make_unique<ZlibDecoder>(c);
        case mc::Coding::kBrotli: return std::make_unique<BrotliDecoder>();
        case mc::Coding::kZstd: return std::make_unique<ZstdDecoder>();
        case mc::Coding::kDcz:  // needs the dictionary: tests decode it themselves
        case mc::Coding::kIdentity: break;
    }
    std::abort();
}

// Decodes `compressed` in the pieces cut at `marks` (output offsets of kSync flushes, each with
// the input length written by then), checking every prefix, then the whole.
void check_decodes(mc::Coding c, const std::string& compressed, std::string_view body,
                   const std::vector<std::pair<std::size_t, std::size_t>>& marks) {
    const std::unique_ptr<Decoder> dec = make_decoder(c);
    std::string decoded;
    std::size_t fed = 0;
    for (const auto& [out_at, in_at] : marks) {
        MC_FUZZ_CHECK(out_at >= fed && out_at <= compressed.size());
        MC_FUZZ_CHECK(dec->feed(std::string_view(compressed).substr(fed, out_at - fed), decoded));
        fed = out_at;
        // Everything written before the flush is decodable now, and nothing more.
        MC_FUZZ_CHECK(decoded.size() == in_at);
        MC_FUZZ_CHECK(std::memcmp(decoded.data(), body.data(), in_at) == 0);
    }
    MC_FUZZ_CHECK(dec->feed(std::string_view(compressed).substr(fed), decoded));
    MC_FUZZ_CHECK(dec->ended());
    MC_FUZZ_CHECK(decoded == body);
    if (c == mc::Coding::kGzip) {
        MC_FUZZ_CHECK(compressed.size() >= 18 &&
                      static_cast<unsigned char>(compressed[0]) == 0x1f &&
                      static_cast<unsigned char>(compressed[1]) == 0x8b);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider fdp(data, size);
    const bool tiny = size <= kTinyInput;

    mc::EncoderParams params;
    params.coding = fdp.PickValueInArray(
        {mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli, mc::Coding::kZstd});
    enum class Hint { kNone, kExact, kGuess };
    const Hint hint = fdp.PickValueInArray({Hint::kNone, Hint::kExact, Hint::kGuess});
    const mc::Range levels = mc::level_range(params.coding);
    // Keep executions fast. Brotli 10-11 and zstd 13-19 cost CPU, so only for tiny inputs. And
    // without a pledged size libzstd sizes its tables from the level alone, whatever the window
    // (level 9: 17 MB, 12: 54 MB, 19: 90 MB set up per call), so without an exact size zstd
    // stays at 6, or 9 now and then.
    const bool rare = fdp.ConsumeIntegralInRange(0, 7) == 0;
    int max_level = levels.max;
    if (params.coding == mc::Coding::kBrotli) {
        max_level = tiny && (hint == Hint::kExact || rare) ? 11 : 9;
    } else if (params.coding == mc::Coding::kZstd) {
        max_level = hint == Hint::kExact ? (tiny ? 19 : 12) : (rare ? 9 : 6);
    }
    params.level = fdp.ConsumeIntegralInRange(levels.min, max_level);
    const mc::Range windows = mc::window_range(params.coding);
    // 0 (library default), a valid window, or a bad one that tune() must clamp.
    params.window_log =
        fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange(windows.min - 2, windows.max + 2);
    params.mem_level = fdp.ConsumeIntegralInRange(0, 10);
    params.brotli_lgblock = fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange(15, 25);
    const bool one_shot = fdp.ConsumeIntegralInRange(0, 7) == 0;  // compress_all()
    const std::size_t sink_chunk =
        fdp.ConsumeBool() ? fdp.PickValueInArray<std::size_t>({1, 7, 64, 4096, 16384, 65536})
                          : fdp.ConsumeIntegralInRange<std::size_t>(1, 100000);

    enum class SinkKind { kString, kChecking, kVarying };
    const SinkKind sink_kind =
        fdp.PickValueInArray({SinkKind::kString, SinkKind::kChecking, SinkKind::kVarying});
    const std::size_t body_size =
        fdp.ConsumeIntegralInRange<std::size_t>(0, std::min(fdp.remaining_bytes(), kMaxBody));
    const std::string body = fdp.ConsumeBytesAsString(body_size);
    if (hint == Hint::kExact) {
        params.size_hint = static_cast<std::int64_t>(body.size());
        params.exact_size = true;
    } else if (hint == Hint::kGuess) {
        // A Content-Length that may be wrong: only a hint, never pledged.
        params.size_hint = fdp.ConsumeIntegralInRange<std::int64_t>(0, 2 * kMaxBody);
    }

    // MC_FUZZ_VERBOSE=1 prints what an input does (to check seeds, or read a crash).
    static const bool verbose = std::getenv("MC_FUZZ_VERBOSE") != nullptr;
    if (verbose) {
        std::fprintf(stderr,
                     "coding=%s level=%d window=%d mem=%d lgblock=%d hint=%lld exact=%d "
                     "one_shot=%d sink=%zu/%d body=%zu\n",
                     std::string(mc::coding_token(params.coding)).c_str(), params.level,
                     params.window_log, params.mem_level, params.brotli_lgblock,
                     static_cast<long long>(params.size_hint), params.exact_size ? 1 : 0,
                     one_shot ? 1 : 0, sink_chunk, static_cast<int>(sink_kind), body.size());
    }

    mc::StringSink string_sink(sink_chunk);
    mc_fuzz::CheckingSink checking_sink(sink_chunk, sink_kind == SinkKind::kVarying);
    mc::Sink& sink = sink_kind == SinkKind::kString ? static_cast<mc::Sink&>(string_sink)
                                                    : static_cast<mc::Sink&>(checking_sink);
    auto output = [&]() -> const std::string& {
        return sink_kind == SinkKind::kString ? string_sink.data() : checking_sink.data();
    };
    std::vector<std::pair<std::size_t, std::size_t>> marks;  // (output size, input size) at kSync
    std::size_t bytes_out = 0;
    if (one_shot) {
        const mc::Result<std::size_t> r = mc::compress_all(params, as_bytes(body), sink);
        MC_FUZZ_CHECK(r.is_ok());
        bytes_out = r.value();
    } else {
        mc::Result<std::unique_ptr<mc::Encoder>> made = mc::make_encoder(params);
        MC_FUZZ_CHECK(made.is_ok());
        mc::Encoder& enc = *made.value();
        MC_FUZZ_CHECK(enc.coding() == params.coding);
        std::size_t pos = 0;
        for (std::size_t writes = 0; writes < kMaxWrites; ++writes) {
            if (fdp.remaining_bytes() == 0) break;  // the rest goes with kFinish
            const std::size_t len = fdp.ConsumeIntegralInRange<std::size_t>(0, body.size() - pos);
            const mc::Flush flush =
                fdp.PickValueInArray({mc::Flush::kNone, mc::Flush::kNone, mc::Flush::kSync});
            const mc::Status st = enc.write(as_bytes(body).subspan(pos, len), flush, sink);
            MC_FUZZ_CHECK(st.is_ok());
            pos += len;
            if (flush == mc::Flush::kSync) marks.emplace_back(output().size(), pos);
            if (verbose)
                std::fprintf(stderr, "  write %zu%s\n", len,
                             flush == mc::Flush::kSync ? " sync" : "");
        }
        MC_FUZZ_CHECK(enc.write(as_bytes(body).subspan(pos), mc::Flush::kFinish, sink).is_ok());
        MC_FUZZ_CHECK(enc.bytes_in() == body.size());
        bytes_out = enc.bytes_out();
        // Finished means finished: no more input, no more output.
        const std::size_t final_size = output().size();
        MC_FUZZ_CHECK(!enc.write(as_bytes("x"), mc::Flush::kNone, sink).is_ok());
        MC_FUZZ_CHECK(output().size() == final_size);
    }
    const std::string& compressed = output();
    MC_FUZZ_CHECK(bytes_out == compressed.size());
    check_decodes(params.coding, compressed, body, marks);
    if (params.coding == mc::Coding::kZstd && params.exact_size) {
        MC_FUZZ_CHECK(ZSTD_getFrameContentSize(compressed.data(), compressed.size()) ==
                      body.size());
    }
    return 0;
}
