// SPDX-License-Identifier: Apache-2.0
// gzip and deflate (zlib format) encoders over zlib; zlib writes the gzip framing itself.
#include <zlib.h>

#include <algorithm>
#include <array>
#include <limits>

#include "encoders.h"
#include "mc/alloc.h"

namespace mc {
namespace {

class ZlibEncoder final : public Encoder {
public:
    explicit ZlibEncoder(Coding c) : coding_(c) {}
    ~ZlibEncoder() override {
        if (initialized_) deflateEnd(&zs_);
    }

    Status init(const EncoderParams& p) {
        // windowBits + 16: zlib writes the gzip header and CRC-32 trailer (RFC 1952).
        const int wbits = coding_ == Coding::kGzip ? p.window_log + 16 : p.window_log;
        zs_.zalloc = mem_zalloc_cb;
        zs_.zfree = mem_free_cb;
        const int rc =
            deflateInit2(&zs_, p.level, Z_DEFLATED, wbits, p.mem_level, Z_DEFAULT_STRATEGY);
        if (rc == Z_MEM_ERROR) return {Code::kOutOfMemory, "zlib: out of memory"};
        if (rc != Z_OK) return {Code::kLibraryError, "zlib: deflateInit2 failed"};
        initialized_ = true;
        return Status::ok();
    }

    Status write(std::span<const std::byte> in, Flush flush, Sink& out) override {
        if (finished_) return {Code::kInvalidArgument, "zlib: write after finish"};
        if (in.empty() && flush == Flush::kNone) return Status::ok();
        const int mode = flush == Flush::kFinish ? Z_FINISH
                         : flush == Flush::kSync ? Z_SYNC_FLUSH
                                                 : Z_NO_FLUSH;
        // zlib counts in uInt; feed huge inputs in slices.
        constexpr std::size_t kSlice = std::numeric_limits<uInt>::max() / 2;
        in_ += in.size();
        do {
            const std::size_t take = std::min(in.size(), kSlice);
            const bool last = take == in.size();
            zs_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
            zs_.avail_in = static_cast<uInt>(take);
            if (Status st = pump(last ? mode : Z_NO_FLUSH, out); !st.is_ok()) return st;
            in = in.subspan(take);
        } while (!in.empty());
        return Status::ok();
    }

    [[nodiscard]] Coding coding() const override { return coding_; }

private:
    Status pump(int mode, Sink& out) {
        for (;;) {
            const std::span<std::byte> lent = out.reserve();
            // zlib emits its flush marker again when a flush ends exactly at the end of the output
            // space (zlib.h: "make sure that avail_out is greater than six"), so with a sink that
            // lends only a few bytes at a time a sync flush never ends. Deflate into our own small
            // buffer then, and copy it out.
            const bool staged = lent.size() < stage_.size();
            const std::span<std::byte> space = staged ? std::span<std::byte>(stage_) : lent;
            zs_.next_out = reinterpret_cast<Bytef*>(space.data());
            zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(space.size(), kMaxChunk));
            const uInt offered = zs_.avail_out;
            const int rc = deflate(&zs_, mode);
            const std::size_t produced = offered - zs_.avail_out;
            out_ += produced;
            if (staged) {
                if (Status st = out.commit(0); !st.is_ok()) return st;
                if (Status st = out.append(space.first(produced)); !st.is_ok()) return st;
            } else if (Status st = out.commit(produced); !st.is_ok()) {
                return st;
            }
            if (rc == Z_STREAM_END) {
                finished_ = true;
                return Status::ok();
            }
            // Z_BUF_ERROR only means "no progress possible" (e.g. a flush with nothing new);
            // it is benign here, as mod_deflate notes.
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                return {Code::kLibraryError, "zlib: deflate failed"};
            // Done when all input is taken and zlib did not fill the space (so it has nothing
            // pending for this flush mode). Z_FINISH loops until Z_STREAM_END.
            if (mode != Z_FINISH && zs_.avail_in == 0 && zs_.avail_out != 0) return Status::ok();
        }
    }

    static constexpr std::size_t kMaxChunk = std::numeric_limits<uInt>::max();
    z_stream zs_{};
    std::array<std::byte, 64> stage_{};
    Coding coding_;
    bool initialized_ = false;
    bool finished_ = false;
};

}  // namespace

Result<std::unique_ptr<Encoder>> make_zlib_encoder(const EncoderParams& p) {
    auto enc = std::make_unique<ZlibEncoder>(p.coding);
    if (Status st = enc->init(p); !st.is_ok()) return st;
    return std::unique_ptr<Encoder>(std::move(enc));
}

}  // namespace mc
