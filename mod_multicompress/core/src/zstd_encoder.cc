// SPDX-License-Identifier: Apache-2.0
// zstd encoder over libzstd's streaming API; its context is allocated through mc/alloc.h
// (ZSTD_createCCtx_advanced, which needs ZSTD_STATIC_LINKING_ONLY; nothing else of the
// experimental API is used).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <array>

#include "encoders.h"
#include "mc/alloc.h"
#include "mc/dictionary.h"

namespace mc {
namespace {

const ZSTD_customMem kZstdMem{mem_alloc_cb, mem_free_cb, nullptr};

struct ZstdCCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

class ZstdEncoder final : public Encoder {
public:
    Status init(const EncoderParams& p) {
        cctx_.reset(ZSTD_createCCtx_advanced(kZstdMem));
        if (!cctx_) return {Code::kOutOfMemory, "zstd: cannot create context"};
        if (p.coding == Coding::kDcz) return init_dcz(p);
        std::size_t rc = ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_compressionLevel, p.level);
        // RFC 9659: a zstd frame for HTTP must not need a window over 8 MiB. Levels <= 19 stay
        // within 2^23 in libzstd's tables, but say so explicitly rather than rely on them.
        const int wlog = p.window_log != 0 ? p.window_log : kZstdMaxWindowLog;
        if (!ZSTD_isError(rc) && (p.window_log != 0 || p.level >= 17)) {
            rc = ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_windowLog, wlog);
        }
        // A length that is known but not pledged (a streamed body with Content-Length): zstd
        // would size its tables from the level alone, megabytes for a few-KB body. tune() already
        // shrank the window to the body; keep the match tables within it too (stable API
        // parameters; ZSTD_c_srcSizeHint is experimental).
        if (!ZSTD_isError(rc) && !p.exact_size && p.size_hint >= 0 && p.window_log != 0 &&
            p.window_log < 20) {
            rc = ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_hashLog, p.window_log + 1);
            if (!ZSTD_isError(rc)) {
                rc = ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_chainLog, p.window_log + 1);
            }
        }
        if (!ZSTD_isError(rc) && p.exact_size && p.size_hint >= 0) {
            rc = ZSTD_CCtx_setPledgedSrcSize(cctx_.get(),
                                             static_cast<unsigned long long>(p.size_hint));
        }
        if (ZSTD_isError(rc)) return {Code::kInvalidArgument, ZSTD_getErrorName(rc)};
        return Status::ok();
    }

    Status write(std::span<const std::byte> in, Flush flush, Sink& out) override {
        if (finished_) return {Code::kInvalidArgument, "zstd: write after finish"};
        if (header_pending_) {
            // dcz: the skippable frame with the dictionary's hash goes first (RFC 9842 §4).
            if (Status st = out.append(header_); !st.is_ok()) return st;
            out_ += header_.size();
            header_pending_ = false;
        }
        if (in.empty() && flush == Flush::kNone) return Status::ok();
        const ZSTD_EndDirective mode = flush == Flush::kFinish ? ZSTD_e_end
                                       : flush == Flush::kSync ? ZSTD_e_flush
                                                               : ZSTD_e_continue;
        ZSTD_inBuffer input{in.data(), in.size(), 0};
        in_ += in.size();
        for (;;) {
            const std::span<std::byte> space = out.reserve();
            ZSTD_outBuffer output{space.data(), space.size(), 0};
            const std::size_t remaining = ZSTD_compressStream2(cctx_.get(), &output, &input, mode);
            if (ZSTD_isError(remaining)) return {Code::kLibraryError, ZSTD_getErrorName(remaining)};
            out_ += output.pos;
            if (Status st = out.commit(output.pos); !st.is_ok()) return st;
            const bool input_done = input.pos == input.size;
            if (mode == ZSTD_e_continue) {
                if (input_done && output.pos < output.size) return Status::ok();
            } else if (remaining == 0 && input_done) {
                finished_ = mode == ZSTD_e_end;
                return Status::ok();
            }
        }
    }

    [[nodiscard]] Coding coding() const override { return coding_; }

private:
    // dcz: the prepared dictionary (raw content) referenced by the context, the window that
    // reaches back over it (tune), the level the dictionary was prepared at.
    Status init_dcz(const EncoderParams& p) {
        if (p.dictionary == nullptr) return {Code::kInvalidArgument, "dcz: no dictionary"};
        coding_ = Coding::kDcz;
        header_ = dcz_header(p.dictionary->hash());
        header_pending_ = true;
        return setup_dcz(cctx_.get(), p);
    }

    std::unique_ptr<ZSTD_CCtx, ZstdCCtxDeleter> cctx_;
    bool finished_ = false;
    Coding coding_ = Coding::kZstd;
    std::array<std::byte, kDczHeaderSize> header_{};  ///< dcz: the frame header with the hash
    bool header_pending_ = false;                     ///< dcz: the header is still to be written
};

}  // namespace

Result<std::unique_ptr<Encoder>> make_zstd_encoder(const EncoderParams& p) {
    auto enc = std::make_unique<ZstdEncoder>();
    if (Status st = enc->init(p); !st.is_ok()) return st;
    return std::unique_ptr<Encoder>(std::move(enc));
}

}  // namespace mc
