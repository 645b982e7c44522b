// SPDX-License-Identifier: Apache-2.0
// Streaming decompressors (gzip, deflate, br, zstd) with inflate limits, for request bodies
// (the DEFLATE input filter) and the INFLATE output filter.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "mc/coding.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace mc {

/// Limits on inflation, as mod_deflate's DeflateInflateLimitRequestBody / RatioLimit / RatioBurst.
struct InflateLimits {
    std::int64_t max_output = 0;  ///< most decoded bytes; 0: unlimited
    int ratio = 200;              ///< most decoded/encoded ratio ...
    int burst = 3;                ///< ... that may be exceeded this many checks in a row
    /// Largest window (history) a br or zstd stream may make the decoder keep, in bytes: a
    /// stream that declares more fails with kWindowTooLarge before its window is allocated.
    /// 0: what the format allows for HTTP (brotli 16 MiB, zstd 8 MiB: RFC 9659). gzip and
    /// deflate always need 32 KiB at most.
    std::uint64_t max_window = 0;
};

/// A streaming decoder that enforces InflateLimits while it decodes, so a decompression bomb is
/// stopped after a bounded amount of output: the limits are checked after every step of at most
/// kDecodeStep bytes, so at most one step past max_output reaches the sink before write() fails.
///
/// A body may hold several units where the format allows it: gzip members one after the other
/// (RFC 1952 section 2.2) and zstd frames, skippable frames included (RFC 8878 section 3.1); the
/// limits count the whole body. deflate (the zlib format, RFC 1950) and brotli are one stream.
class Decoder {
public:
    /// Output is produced and checked in steps of this many bytes.
    static constexpr std::size_t kDecodeStep = 64 * 1024;

    Decoder() = default;
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;
    virtual ~Decoder();

    /// Decodes `in` into `out`. Returns kLimitExceeded when a limit is crossed,
    /// kWindowTooLarge when the stream needs a larger window than `max_window`, kCorrupt for
    /// invalid input (including data after the end of a stream that cannot hold another member
    /// or frame, and data after a gzip member or zstd frame that does not start another one).
    Status write(std::span<const std::byte> in, Sink& out);
    /// Whether the body so far ends where a stream, member or frame ends (a body that stops
    /// anywhere else is truncated).
    [[nodiscard]] bool finished() const { return finished_; }
    [[nodiscard]] std::uint64_t total_in() const { return total_in_; }
    [[nodiscard]] std::uint64_t total_out() const { return total_out_; }
    /// The window the stream declared, once known (0 before, or for gzip and deflate); after
    /// kWindowTooLarge, the one that was refused.
    [[nodiscard]] std::uint64_t window() const { return window_; }

protected:
    /// One library call: consume from `in` (advancing it) and write at most `out.size()` bytes.
    /// Sets `produced`, and `ended` when the stream's end was reached.
    virtual Status step(std::span<const std::byte>& in, std::span<std::byte> out,
                        std::size_t& produced, bool& ended) = 0;
    /// After the end of a member or frame, with more input: whether another one may follow
    /// (then the decoder is ready for it). The default: one stream per body.
    virtual bool next_member() { return false; }
    /// Records the window the stream declared; kWindowTooLarge if it is over the limit.
    Status declare_window(std::uint64_t window);
    [[nodiscard]] std::uint64_t max_window() const { return limits_.max_window; }

private:
    Status check_limits();

    InflateLimits limits_;
    std::uint64_t total_in_ = 0;
    std::uint64_t total_out_ = 0;
    int ratio_hits_ = 0;
    std::uint64_t window_ = 0;
    bool finished_ = false;

    template <class D, class... A>
    static Result<std::unique_ptr<Decoder>> build(const InflateLimits& limits, A... args);
    friend Result<std::unique_ptr<Decoder>> make_decoder(Coding, const InflateLimits&);
};

/// A decoder for `c` (gzip accepts the x-gzip alias upstream; deflate is the zlib format).
Result<std::unique_ptr<Decoder>> make_decoder(Coding c, const InflateLimits& limits);

}  // namespace mc
