// SPDX-License-Identifier: Apache-2.0
// Decoders over zlib, libbrotlidec and libzstd, with mod_deflate's inflate limits.
#include "mc/decoder.h"

#include <brotli/decode.h>
#include <zlib.h>
// For ZSTD_createDCtx_advanced only (the context is allocated through mc/alloc.h).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <array>
#include <limits>

#include "mc/alloc.h"
#include "mc/zstd_frame.h"

namespace mc {
namespace {

const ZSTD_customMem kZstdMem{mem_alloc_cb, mem_free_cb, nullptr};

}  // namespace

Decoder::~Decoder() = default;

Status Decoder::write(std::span<const std::byte> in, Sink& out) {
    // Nothing to feed (a zero-length bucket): the last write already took out everything
    // decodable. And libzstd fails a stream after 16 calls in a row without progress ("Operation
    // made no progress over multiple calls"), so empty buckets must not reach it (fuzz_decoder).
    if (in.empty()) return Status::ok();
    while (!in.empty() || !finished_) {
        if (finished_) {
            // More input after a member or frame: another one, where the format has them.
            if (!next_member()) {
                return {Code::kCorrupt, "data after the end of the compressed stream"};
            }
            finished_ = false;
        }
        const std::span<std::byte> space = out.reserve();
        const std::span<std::byte> step_out = space.first(std::min(space.size(), kDecodeStep));
        const std::size_t before = in.size();
        std::size_t produced = 0;
        bool ended = false;
        if (Status st = step(in, step_out, produced, ended); !st.is_ok()) {
            out.commit(0);
            return st;
        }
        total_in_ += before - in.size();
        total_out_ += produced;
        if (Status st = out.commit(produced); !st.is_ok()) return st;
        finished_ = ended;
        if (Status st = check_limits(); !st.is_ok()) return st;
        // No progress and nothing left to feed: wait for more input.
        if (produced == 0 && before == in.size()) break;
        if (in.empty() && produced < step_out.size()) break;
    }
    return Status::ok();
}

Status Decoder::declare_window(std::uint64_t window) {
    window_ = window;
    if (limits_.max_window > 0 && window > limits_.max_window) {
        return {Code::kWindowTooLarge,
                "the stream needs a larger window than the decoder may keep"};
    }
    return Status::ok();
}

Status Decoder::check_limits() {
    if (limits_.max_output > 0 && total_out_ > static_cast<std::uint64_t>(limits_.max_output)) {
        return {Code::kLimitExceeded, "inflated body is larger than the configured limit"};
    }
    if (limits_.ratio > 0 && total_in_ > 0) {
        // mod_deflate check_ratio: the limit may be exceeded `burst` checks in a row.
        if (total_out_ / total_in_ < static_cast<std::uint64_t>(limits_.ratio)) {
            ratio_hits_ = 0;
        } else if (++ratio_hits_ > limits_.burst) {
            return {Code::kLimitExceeded, "inflation ratio is larger than the configured limit"};
        }
    }
    return Status::ok();
}

namespace {

class ZlibDecoder final : public Decoder {
public:
    explicit ZlibDecoder(bool gzip) : gzip_(gzip) {}
    ~ZlibDecoder() override {
        if (initialized_) inflateEnd(&zs_);
    }
    Status init() {
        // 15 + 16: gzip framing only (RFC 1952); 15: zlib format, the "deflate" coding.
        zs_.zalloc = mem_zalloc_cb;
        zs_.zfree = mem_free_cb;
        if (inflateInit2(&zs_, gzip_ ? 15 + 16 : 15) != Z_OK) {
            return {Code::kOutOfMemory, "zlib: inflateInit2 failed"};
        }
        initialized_ = true;
        return Status::ok();
    }

protected:
    Status step(std::span<const std::byte>& in, std::span<std::byte> out, std::size_t& produced,
                bool& ended) override {
        const std::size_t take = std::min<std::size_t>(in.size(), std::numeric_limits<uInt>::max());
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
        zs_.avail_in = static_cast<uInt>(take);
        zs_.next_out = reinterpret_cast<Bytef*>(out.data());
        zs_.avail_out = static_cast<uInt>(out.size());
        const int rc = inflate(&zs_, Z_NO_FLUSH);
        produced = out.size() - zs_.avail_out;
        in = in.subspan(take - zs_.avail_in);
        if (rc == Z_STREAM_END) {
            ended = true;
            return Status::ok();
        }
        if (rc == Z_OK || rc == Z_BUF_ERROR) return Status::ok();
        if (rc == Z_MEM_ERROR) return {Code::kOutOfMemory, "zlib: out of memory"};
        return {Code::kCorrupt, "invalid gzip/deflate data"};
    }
    // gzip: members may follow one another (RFC 1952 section 2.2), each with its own header,
    // CRC and size; what follows a member must be a whole one (zlib checks its magic), not
    // padding. The zlib format is one stream.
    bool next_member() override { return gzip_ && inflateReset(&zs_) == Z_OK; }

private:
    z_stream zs_{};
    bool gzip_;
    bool initialized_ = false;
};

struct BrotliDecoderDeleter {
    void operator()(BrotliDecoderState* s) const { BrotliDecoderDestroyInstance(s); }
};

class BrotliDecoder final : public Decoder {
public:
    Status init() {
        state_.reset(BrotliDecoderCreateInstance(mem_alloc_cb, mem_free_cb, nullptr));
        if (!state_) return {Code::kOutOfMemory, "brotli: cannot create decoder"};
        return Status::ok();
    }

protected:
    Status step(std::span<const std::byte>& in, std::span<std::byte> out, std::size_t& produced,
                bool& ended) override {
        if (!window_known_ && !in.empty()) {
            window_known_ = true;
            // The stream's first bits name its window (RFC 7932 §9.1), before the decoder
            // allocates it.
            if (const std::uint64_t w = declared_window(std::to_integer<std::uint8_t>(in[0]))) {
                if (Status st = declare_window(w); !st.is_ok()) return st;
            }
        }
        std::size_t avail_in = in.size();
        const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
        std::size_t avail_out = out.size();
        auto* next_out = reinterpret_cast<std::uint8_t*>(out.data());
        const BrotliDecoderResult rc = BrotliDecoderDecompressStream(
            state_.get(), &avail_in, &next_in, &avail_out, &next_out, nullptr);
        produced = out.size() - avail_out;
        in = in.subspan(in.size() - avail_in);
        if (rc == BROTLI_DECODER_RESULT_ERROR) return {Code::kCorrupt, "invalid brotli data"};
        ended = rc == BROTLI_DECODER_RESULT_SUCCESS;
        return Status::ok();
    }

private:
    // WBITS from the stream's first byte (bits from the least significant): 0 -> 16; else three
    // bits n, n != 0 -> 17 + n; else three bits m, m > 1 -> 8 + m, m == 0 -> 17. m == 1 is the
    // large-window extension, which this decoder does not enable (the library rejects it): 0.
    static std::uint64_t declared_window(std::uint8_t first) {
        int wbits = 16;
        if ((first & 1) != 0) {
            const int n = (first >> 1) & 7;
            const int m = (first >> 4) & 7;
            if (n != 0) {
                wbits = 17 + n;
            } else if (m == 1) {
                return 0;
            } else {
                wbits = m == 0 ? 17 : 8 + m;
            }
        }
        return std::uint64_t{1} << wbits;
    }

    std::unique_ptr<BrotliDecoderState, BrotliDecoderDeleter> state_;
    bool window_known_ = false;
};

struct ZstdDCtxDeleter {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

class ZstdDecoder final : public Decoder {
public:
    Status init() {
        dctx_.reset(ZSTD_createDCtx_advanced(kZstdMem));
        if (!dctx_) return {Code::kOutOfMemory, "zstd: cannot create decoder"};
        // RFC 9659: HTTP zstd frames need at most an 8 MiB window; refuse bigger ones (and
        // ones over the configured window) rather than allocate for them.
        int log_max = 23;
        while (max_window() > 0 && log_max > ZSTD_WINDOWLOG_MIN &&
               (std::uint64_t{1} << log_max) > max_window()) {
            --log_max;
        }
        const std::size_t rc = ZSTD_DCtx_setParameter(dctx_.get(), ZSTD_d_windowLogMax, log_max);
        if (ZSTD_isError(rc)) return {Code::kLibraryError, ZSTD_getErrorName(rc)};
        return Status::ok();
    }

protected:
    Status step(std::span<const std::byte>& in, std::span<std::byte> out, std::size_t& produced,
                bool& ended) override {
        ZSTD_inBuffer input{in.data(), in.size(), 0};
        ZSTD_outBuffer output{out.data(), out.size(), 0};
        const std::size_t rc = ZSTD_decompressStream(dctx_.get(), &output, &input);
        produced = output.pos;
        if (ZSTD_isError(rc) && ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
            return refuse_window(in);
        }
        // libzstd stops at the end of a frame, so what it took is all of the current frame.
        note_header(in.first(input.pos));
        in = in.subspan(input.pos);
        if (ZSTD_isError(rc)) return {Code::kCorrupt, ZSTD_getErrorName(rc)};
        frame_out_ += produced;
        // RFC 8878 section 3.1.1.1.4: a declared Frame_Content_Size is the frame's exact size.
        // libzstd checks it when it gets the whole frame in one call, but not when it streams a
        // frame whose last block is empty, so the result would depend on how the input is cut.
        const bool declared =
            content_size_ != ZSTD_CONTENTSIZE_UNKNOWN && content_size_ != ZSTD_CONTENTSIZE_ERROR;
        if (declared && (frame_out_ > content_size_ || (rc == 0 && frame_out_ != content_size_))) {
            return {Code::kCorrupt, "zstd: frame content size does not match its data"};
        }
        // rc == 0: a frame (or a skippable frame) is complete; libzstd starts the next one with
        // the next input.
        ended = rc == 0;
        return Status::ok();
    }
    // Frames may follow one another, skippable frames among them (RFC 8878 section 3.1).
    bool next_member() override {
        header_size_ = 0;
        content_size_ = ZSTD_CONTENTSIZE_ERROR;
        frame_out_ = 0;
        return true;
    }

private:
    // RFC 8878 section 3.1.1: magic (4), descriptor (1), window (1), dictionary ID (4) and
    // content size (8) at most.
    static constexpr std::size_t kMaxFrameHeader = 18;

    // The frame's header (what was noted of it, then `in`) names a window over the limit.
    Status refuse_window(std::span<const std::byte> in) {
        std::array<std::byte, kMaxFrameHeader> head = header_;
        const std::size_t n = std::min(in.size(), kMaxFrameHeader - header_size_);
        std::copy_n(in.begin(), n, head.begin() + static_cast<std::ptrdiff_t>(header_size_));
        const auto w = mc::zstd_frame_window(std::span(head).first(header_size_ + n));
        if (Status st = declare_window(w.is_ok() ? w.value() : 0); !st.is_ok()) return st;
        return {Code::kWindowTooLarge, "zstd: the frame needs a window over 8 MiB"};
    }

    // Collects the first bytes of the current frame until its header says what content size it
    // declares (ZSTD_CONTENTSIZE_UNKNOWN if none; 0 for a skippable frame).
    void note_header(std::span<const std::byte> taken) {
        if (content_size_ != ZSTD_CONTENTSIZE_ERROR || header_size_ == kMaxFrameHeader) return;
        const std::size_t n = std::min(taken.size(), kMaxFrameHeader - header_size_);
        std::copy_n(taken.begin(), n, header_.begin() + static_cast<std::ptrdiff_t>(header_size_));
        header_size_ += n;
        content_size_ = ZSTD_getFrameContentSize(header_.data(), header_size_);
    }

    std::unique_ptr<ZSTD_DCtx, ZstdDCtxDeleter> dctx_;
    std::array<std::byte, kMaxFrameHeader> header_{};
    std::size_t header_size_ = 0;
    // ZSTD_CONTENTSIZE_ERROR until the header is complete.
    unsigned long long content_size_ = ZSTD_CONTENTSIZE_ERROR;  // NOLINT(google-runtime-int)
    std::uint64_t frame_out_ = 0;
};

}  // namespace

// The limits are set before init(): the zstd decoder's largest window comes from them.
template <class D, class... A>
Result<std::unique_ptr<Decoder>> Decoder::build(const InflateLimits& limits, A... args) {
    auto d = std::make_unique<D>(args...);
    static_cast<Decoder&>(*d).limits_ = limits;
    if (Status st = d->init(); !st.is_ok()) return st;
    return std::unique_ptr<Decoder>(std::move(d));
}

Result<std::unique_ptr<Decoder>> make_decoder(Coding c, const InflateLimits& limits) {
    switch (c) {
        case Coding::kGzip: return Decoder::build<ZlibDecoder>(limits, true);
        case Coding::kDeflate: return Decoder::build<ZlibDecoder>(limits, false);
        case Coding::kBrotli: return Decoder::build<BrotliDecoder>(limits);
        case Coding::kZstd: return Decoder::build<ZstdDecoder>(limits);
        case Coding::kDcz:  // needs a dictionary the server does not have for request bodies
            return Status{Code::kInvalidArgument, "no decoder for dcz request bodies"};
        case Coding::kIdentity: break;
    }
    return Status{Code::kInvalidArgument, "no decoder for identity"};
}

}  // namespace mc
