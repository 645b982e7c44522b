// SPDX-License-Identifier: Apache-2.0
// Streaming compressors behind one interface: gzip/deflate (zlib), br (brotli), zstd.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>

#include "mc/coding.h"
#include "mc/params.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace mc {

enum class Flush {
    kNone,    ///< buffer as the library likes
    kSync,    ///< everything written so far must be decodable from the output
    kFinish,  ///< end of the stream; no write() is allowed afterwards
};

/// A streaming compressor. Not copyable or movable (zlib's state points back at its z_stream).
class Encoder {
public:
    Encoder() = default;
    Encoder(const Encoder&) = delete;
    Encoder& operator=(const Encoder&) = delete;
    virtual ~Encoder();

    /// Compresses `in` and, per `flush`, drains the library into `out`.
    /// After kFinish the encoder is finished; a further write() returns an error.
    virtual Status write(std::span<const std::byte> in, Flush flush, Sink& out) = 0;
    [[nodiscard]] virtual Coding coding() const = 0;

    /// Total bytes given to write() and produced into sinks, for notes and ratios.
    [[nodiscard]] std::size_t bytes_in() const { return in_; }
    [[nodiscard]] std::size_t bytes_out() const { return out_; }

protected:
    std::size_t in_ = 0;
    std::size_t out_ = 0;
};

/// Builds an encoder for `params.coding` (not identity) after mc::tune(params).
Result<std::unique_ptr<Encoder>> make_encoder(const EncoderParams& params);

/// Compresses a whole body in one go (used when the body is known at once). With `cancel`, the
/// body goes in in pieces of kCancelStep bytes and the work stops with Code::kCancelled as soon
/// as *cancel reads true between two of them (a background job that must not hold up a
/// process's exit); the output is then incomplete.
inline constexpr std::size_t kCancelStep = 64 * 1024;
Result<std::size_t> compress_all(const EncoderParams& params, std::span<const std::byte> in,
                                 Sink& out, const std::atomic<bool>* cancel = nullptr);

}  // namespace mc
