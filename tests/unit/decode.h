// SPDX-License-Identifier: Apache-2.0
// Test helper: streaming decoders for gzip, deflate (zlib format), br and zstd over the real
// libraries, plus byte/string conversions. Header-only; unit tests only.
#pragma once

#include <brotli/decode.h>
#include <zlib.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "mc/coding.h"

namespace mc_test {

inline std::span<const std::byte> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

/// A decoder that can be fed a compressed stream piece by piece. Everything decodable so far is
/// appended to output() after each feed(), so a test can check the prefix after a sync flush.
class StreamDecoder {
public:
    StreamDecoder() = default;
    StreamDecoder(const StreamDecoder&) = delete;
    StreamDecoder& operator=(const StreamDecoder&) = delete;
    virtual ~StreamDecoder() = default;

    /// Decodes `in`. Returns false (and sets error()) on corrupt data or data after the end.
    bool feed(std::string_view in) {
        if (!error_.empty()) return false;
        if (in.empty()) return true;
        if (finished_) return fail("data after the end of the stream");
        return do_feed(in);
    }
    /// True once the stream's end (gzip trailer, last brotli meta-block, zstd frame end) was seen
    /// and verified (checksums included where the format has them).
    [[nodiscard]] bool finished() const { return finished_; }
    [[nodiscard]] const std::string& output() const { return out_; }
    [[nodiscard]] const std::string& error() const { return error_; }

protected:
    virtual bool do_feed(std::string_view in) = 0;
    bool fail(std::string why) {
        error_ = std::move(why);
        return false;
    }
    static constexpr std::size_t kOutChunk = 64 * 1024;
    std::string out_;
    std::string error_;
    bool finished_ = false;
};

/// gzip (RFC 1952, windowBits 15+16) or deflate as HTTP means it: the zlib format (RFC 1950,
/// windowBits 15), not raw deflate.
class ZlibDecoder final : public StreamDecoder {
public:
    explicit ZlibDecoder(bool gzip) {
        ok_ = inflateInit2(&zs_, gzip ? 15 + 16 : 15) == Z_OK;
        if (!ok_) error_ = "inflateInit2 failed";
    }
    ~ZlibDecoder() override {
        if (ok_) inflateEnd(&zs_);
    }

private:
    bool do_feed(std::string_view in) override {
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        zs_.avail_in = static_cast<uInt>(in.size());
        for (;;) {
            const std::size_t had = out_.size();
            out_.resize(had + kOutChunk);
            zs_.next_out = reinterpret_cast<Bytef*>(out_.data() + had);
            zs_.avail_out = static_cast<uInt>(kOutChunk);
            const int rc = inflate(&zs_, Z_NO_FLUSH);
            out_.resize(had + (kOutChunk - zs_.avail_out));
            if (rc == Z_STREAM_END) {
                finished_ = true;
                if (zs_.avail_in != 0) return fail("data after the end of the stream");
                return true;
            }
            if (rc != Z_OK && rc != Z_BUF_ERROR) {
                return fail(std::string("inflate: ") + (zs_.msg ? zs_.msg : "error"));
            }
            if (zs_.avail_in == 0 && zs_.avail_out != 0) return true;
        }
    }

    z_stream zs_{};
    bool ok_ = false;
};

class BrotliDecoder final : public StreamDecoder {
public:
    BrotliDecoder() : st_(BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)) {
        if (!st_) error_ = "BrotliDecoderCreateInstance failed";
    }

private:
    struct Deleter {
        void operator()(BrotliDecoderState* s) const { BrotliDecoderDestroyInstance(s); }
    };

    bool do_feed(std::string_view in) override {
        std::size_t avail_in = in.size();
        const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
        for (;;) {
            const std::size_t had = out_.size();
            out_.resize(had + kOutChunk);
            std::size_t avail_out = kOutChunk;
            auto* next_out = reinterpret_cast<std::uint8_t*>(out_.data() + had);
            const BrotliDecoderResult r = BrotliDecoderDecompressStream(
                st_.get(), &avail_in, &next_in, &avail_out, &next_out, nullptr);
            out_.resize(had + (kOutChunk - avail_out));
            switch (r) {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    finished_ = true;
                    if (avail_in != 0) return fail("data after the end of the stream");
                    return true;
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                    // All input is taken, but decoded bytes may still wait for output space.
                    if (avail_out == 0 || BrotliDecoderHasMoreOutput(st_.get())) continue;
                    return true;
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue;
                case BROTLI_DECODER_RESULT_ERROR:
                    return fail(std::string("brotli: ") +
                                BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st_.get())));
            }
            return fail("brotli: unexpected result");
        }
    }

    std::unique_ptr<BrotliDecoderState, Deleter> st_;
};

class ZstdDecoder final : public StreamDecoder {
public:
    /// `window_log_max` > 0 limits the window the decoder accepts (ZSTD_d_windowLogMax), as a
    /// browser does: RFC 9659 allows 8 MiB, i.e. 23.
    explicit ZstdDecoder(int window_log_max = 0) : dctx_(ZSTD_createDCtx()) {
        if (!dctx_) {
            error_ = "ZSTD_createDCtx failed";
        } else if (window_log_max > 0) {
            const std::size_t rc =
                ZSTD_DCtx_setParameter(dctx_.get(), ZSTD_d_windowLogMax, window_log_max);
            if (ZSTD_isError(rc)) error_ = ZSTD_getErrorName(rc);
        }
    }

private:
    struct Deleter {
        void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
    };

    bool do_feed(std::string_view in) override {
        ZSTD_inBuffer input{in.data(), in.size(), 0};
        for (;;) {
            const std::size_t had = out_.size();
            out_.resize(had + kOutChunk);
            ZSTD_outBuffer output{out_.data() + had, kOutChunk, 0};
            const std::size_t rc = ZSTD_decompressStream(dctx_.get(), &output, &input);
            out_.resize(had + output.pos);
            if (ZSTD_isError(rc)) return fail(std::string("zstd: ") + ZSTD_getErrorName(rc));
            if (rc == 0) {  // frame complete and fully flushed
                finished_ = true;
                if (input.pos != input.size) return fail("data after the end of the frame");
                return true;
            }
            if (input.pos == input.size && output.pos < output.size) return true;
        }
    }

    std::unique_ptr<ZSTD_DCtx, Deleter> dctx_;
};

struct DecoderOptions {
    int zstd_window_log_max = 23;  ///< RFC 9659 by default; 0 for the library's own limit
};

inline std::unique_ptr<StreamDecoder> make_decoder(mc::Coding c, DecoderOptions opts = {}) {
    switch (c) {
        case mc::Coding::kGzip: return std::make_unique<ZlibDecoder>(true);
        case mc::Coding::kDeflate: return std::make_unique<ZlibDecoder>(false);
        case mc::Coding::kBrotli: return std::make_unique<BrotliDecoder>();
        case mc::Coding::kZstd: return std::make_unique<ZstdDecoder>(opts.zstd_window_log_max);
        case mc::Coding::kDcz:  // needs the dictionary: tests decode it themselves
        case mc::Coding::kIdentity: break;
    }
    return nullptr;
}

struct Decoded {
    bool ok = false;  ///< decoded without error and the stream was complete
    std::string data;
    std::string error;
};

/// Decodes a complete stream in one go.
inline Decoded decode_all(mc::Coding c, std::string_view in, DecoderOptions opts = {}) {
    Decoded d;
    auto dec = make_decoder(c, opts);
    if (!dec) {
        d.error = "no decoder";
        return d;
    }
    const bool fed = dec->feed(in);
    d.data = dec->output();
    if (!fed) {
        d.error = dec->error();
    } else if (!dec->finished()) {
        d.error = "stream is truncated (no end marker)";
    } else {
        d.ok = true;
    }
    return d;
}

}  // namespace mc_test
