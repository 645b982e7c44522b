// SPDX-License-Identifier: Apache-2.0
// Encoder factory and the whole-body helper.
#include "mc/encoder.h"

#include <algorithm>

#include "encoders.h"

namespace mc {

Encoder::~Encoder() = default;

Result<std::unique_ptr<Encoder>> make_encoder(const EncoderParams& params) {
    const EncoderParams p = tune(params);
    switch (p.coding) {
        case Coding::kGzip:
        case Coding::kDeflate: return make_zlib_encoder(p);
        case Coding::kBrotli: return make_brotli_encoder(p);
        case Coding::kZstd:
        case Coding::kDcz: return make_zstd_encoder(p);
        case Coding::kIdentity: break;
    }
    return Status{Code::kInvalidArgument, "no encoder for identity"};
}

Result<std::size_t> compress_all(const EncoderParams& params, std::span<const std::byte> in,
                                 Sink& out, const std::atomic<bool>* cancel) {
    EncoderParams p = params;
    p.size_hint = static_cast<std::int64_t>(in.size());
    p.exact_size = true;
    auto enc = make_encoder(p);
    if (!enc.is_ok()) return enc.status();
    Encoder& e = *enc.value();
    const std::size_t step = cancel != nullptr ? kCancelStep : in.size();
    std::size_t off = 0;
    do {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
            return Status{Code::kCancelled, "compression cancelled"};
        }
        const std::size_t n = std::min(step, in.size() - off);
        const bool last = off + n == in.size();
        if (Status st = e.write(in.subspan(off, n), last ? Flush::kFinish : Flush::kNone, out);
            !st.is_ok()) {
            return st;
        }
        off += n;
    } while (off < in.size());
    return e.bytes_out();
}

}  // namespace mc
