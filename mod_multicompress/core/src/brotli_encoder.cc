// SPDX-License-Identifier: Apache-2.0
// br encoder over libbrotlienc's streaming API.
#include <brotli/encode.h>

#include <algorithm>
#include <cstdint>

#include "encoders.h"
#include "mc/alloc.h"

namespace mc {
namespace {

struct BrotliStateDeleter {
    void operator()(BrotliEncoderState* s) const { BrotliEncoderDestroyInstance(s); }
};

class BrotliEncoder final : public Encoder {
public:
    Status init(const EncoderParams& p) {
        state_.reset(BrotliEncoderCreateInstance(mem_alloc_cb, mem_free_cb, nullptr));
        if (!state_) return {Code::kOutOfMemory, "brotli: cannot create encoder"};
        bool ok = BrotliEncoderSetParameter(state_.get(), BROTLI_PARAM_QUALITY,
                                            static_cast<std::uint32_t>(p.level)) != 0;
        ok = ok && BrotliEncoderSetParameter(state_.get(), BROTLI_PARAM_LGWIN,
                                             static_cast<std::uint32_t>(p.window_log)) != 0;
        if (p.brotli_lgblock > 0) {
            ok = ok && BrotliEncoderSetParameter(state_.get(), BROTLI_PARAM_LGBLOCK,
                                                 static_cast<std::uint32_t>(p.brotli_lgblock)) != 0;
        }
        if (p.size_hint >= 0) {
            const auto hint = static_cast<std::uint32_t>(
                std::min<std::int64_t>(p.size_hint, std::int64_t{1} << 30));
            ok = ok && BrotliEncoderSetParameter(state_.get(), BROTLI_PARAM_SIZE_HINT, hint) != 0;
        }
        if (!ok) return {Code::kInvalidArgument, "brotli: invalid parameter"};
        return Status::ok();
    }

    Status write(std::span<const std::byte> in, Flush flush, Sink& out) override {
        if (BrotliEncoderIsFinished(state_.get())) {
            return {Code::kInvalidArgument, "brotli: write after finish"};
        }
        if (in.empty() && flush == Flush::kNone) return Status::ok();
        const BrotliEncoderOperation op = flush == Flush::kFinish ? BROTLI_OPERATION_FINISH
                                          : flush == Flush::kSync ? BROTLI_OPERATION_FLUSH
                                                                  : BROTLI_OPERATION_PROCESS;
        std::size_t avail_in = in.size();
        const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
        in_ += in.size();
        for (;;) {
            const std::span<std::byte> space = out.reserve();
            std::size_t avail_out = space.size();
            auto* next_out = reinterpret_cast<std::uint8_t*>(space.data());
            if (!BrotliEncoderCompressStream(state_.get(), op, &avail_in, &next_in, &avail_out,
                                             &next_out, nullptr)) {
                return {Code::kLibraryError, "brotli: compression failed"};
            }
            const std::size_t produced = space.size() - avail_out;
            out_ += produced;
            if (Status st = out.commit(produced); !st.is_ok()) return st;
            if (op == BROTLI_OPERATION_FINISH) {
                if (BrotliEncoderIsFinished(state_.get())) return Status::ok();
            } else if (avail_in == 0 && !BrotliEncoderHasMoreOutput(state_.get())) {
                return Status::ok();
            }
        }
    }

    [[nodiscard]] Coding coding() const override { return Coding::kBrotli; }

private:
    std::unique_ptr<BrotliEncoderState, BrotliStateDeleter> state_;
};

}  // namespace

Result<std::unique_ptr<Encoder>> make_brotli_encoder(const EncoderParams& p) {
    auto enc = std::make_unique<BrotliEncoder>();
    if (Status st = enc->init(p); !st.is_ok()) return st;
    return std::unique_ptr<Encoder>(std::move(enc));
}

}  // namespace mc
