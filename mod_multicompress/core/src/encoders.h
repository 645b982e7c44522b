// SPDX-License-Identifier: Apache-2.0
// Private to the core: one factory per library, called by make_encoder().
#pragma once

#include <memory>

#include "mc/encoder.h"

struct ZSTD_CCtx_s;

namespace mc {

Result<std::unique_ptr<Encoder>> make_zlib_encoder(const EncoderParams& p);
Result<std::unique_ptr<Encoder>> make_brotli_encoder(const EncoderParams& p);
Result<std::unique_ptr<Encoder>> make_zstd_encoder(const EncoderParams& p);

/// Sets up a fresh (or reset) zstd context for a dcz frame of `p` (p.dictionary set, after tune):
/// the prepared dictionary (its level's tables), the window, and the pledged size when exact.
Status setup_dcz(ZSTD_CCtx_s* cctx, const EncoderParams& p);

}  // namespace mc
