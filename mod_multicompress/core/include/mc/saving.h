// SPDX-License-Identifier: Apache-2.0
// Bodies that will not shrink (MultiCompressMinSaving): a quick estimate of what compressing the
// first block of a body saves, and a bounded memory of what bodies saved, so that a body that
// does not shrink is sent unchanged without trying again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mc/status.h"
#include "mc/view_hash.h"

struct ZSTD_CCtx_s;

namespace mc {

/// The probe compresses at most this much of the start of a body.
inline constexpr std::size_t kSavingProbeBytes = 16 * 1024;
/// A sample or body shorter than this says too little about the rest: not probed, not remembered.
inline constexpr std::size_t kSavingMinSample = 512;

/// Percent of `in` saved by sending `out` bytes instead, rounded toward zero; negative when the
/// output is larger. 0 when `in` is 0.
int saving_percent(std::uint64_t in, std::uint64_t out);

/// Whether a body that saves `saving` percent is worth compressing under MultiCompressMinSaving
/// `min_saving` (0: Off, every body is).
constexpr bool worth_compressing(int saving, int min_saving) {
    return min_saving <= 0 || saving >= min_saving;
}

/// A cheap estimate of what compressing a body saves: its first kSavingProbeBytes through zstd at
/// level 1, a few tens of microseconds for text and less for random bytes (zstd skips ahead
/// faster the longer it finds no match). Not thread-safe: one user at a time; its context is kept
/// between samples.
class SavingProbe {
public:
    SavingProbe();
    ~SavingProbe();
    SavingProbe(const SavingProbe&) = delete;
    SavingProbe& operator=(const SavingProbe&) = delete;

    /// The percent `sample` (at most kSavingProbeBytes of it) saves.
    Result<int> saving(std::span<const std::byte> sample);

private:
    ZSTD_CCtx_s* cctx_ = nullptr;
    std::unique_ptr<std::byte[]> out_;
};

/// What one child process remembers of the savings bodies had: the last saving measured for a
/// key (a static file's version, or a dynamic response's host, path and type) until it expires.
/// Thread-safe; bounded: at most `capacity` keys of at most kMaxKey bytes, in shards that drop
/// their expired entries when full, and start over when that frees nothing.
class SavingMemory {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::size_t kDefaultCapacity = 4096;
    static constexpr std::size_t kMaxKey = 512;

    explicit SavingMemory(std::size_t capacity = kDefaultCapacity);

    /// Keys longer than kMaxKey are not remembered.
    void remember(std::string_view key, int saving, Clock::time_point expires);
    /// The saving remembered for `key`, unless it expired by `now`.
    [[nodiscard]] std::optional<int> recall(std::string_view key, Clock::time_point now) const;
    /// Entries held (expired ones included, until they are dropped).
    [[nodiscard]] std::size_t size() const;

private:
    static constexpr std::size_t kShards = 16;
    struct Entry {
        int saving;
        Clock::time_point expires;
    };
    struct Shard {
        mutable std::mutex mu;
        std::unordered_map<std::string, Entry, ViewHash, std::equal_to<>> entries;  // by a view
    };
    Shard& shard_of(std::string_view key) const;

    std::size_t per_shard_;
    std::unique_ptr<Shard[]> shards_;
};

}  // namespace mc
