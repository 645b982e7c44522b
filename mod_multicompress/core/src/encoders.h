// SPDX-License-Identifier: Apache-2.0
// Private to the core: one factory per library, called by make_encoder().
#pragma once

#include <memory>

#include "mc/encoder.h"

namespace mc {

Result<std::unique_ptr<Encoder>> make_zlib_encoder(const EncoderParams& p);
Result<std::unique_ptr<Encoder>> make_brotli_encoder(const EncoderParams& p);
Result<std::unique_ptr<Encoder>> make_zstd_encoder(const EncoderParams& p);

}  // namespace mc
