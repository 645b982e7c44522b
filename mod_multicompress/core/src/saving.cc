// SPDX-License-Identifier: Apache-2.0
// MultiCompressMinSaving: the zstd-1 probe and the per-child memory of savings.
#include "mc/saving.h"

#include <zstd.h>

#include <algorithm>

namespace mc {

int saving_percent(std::uint64_t in, std::uint64_t out) {
    if (in == 0) return 0;
    if (out >= in) return -static_cast<int>(std::min<std::uint64_t>((out - in) * 100 / in, 1000));
    return static_cast<int>((in - out) * 100 / in);
}

SavingProbe::SavingProbe()
    : cctx_(ZSTD_createCCtx()),
      out_(std::make_unique<std::byte[]>(ZSTD_compressBound(kSavingProbeBytes))) {}

SavingProbe::~SavingProbe() {
    ZSTD_freeCCtx(cctx_);
}

Result<int> SavingProbe::saving(std::span<const std::byte> sample) {
    if (cctx_ == nullptr) return Status{Code::kOutOfMemory, "cannot create a zstd context"};
    if (sample.size() > kSavingProbeBytes) sample = sample.first(kSavingProbeBytes);
    // Level 1 with the parameters zstd picks for the sample's size (small tables for a 16 KiB
    // sample, so the context stays small).
    const std::size_t n = ZSTD_compressCCtx(
        cctx_, out_.get(), ZSTD_compressBound(kSavingProbeBytes), sample.data(), sample.size(), 1);
    if (ZSTD_isError(n)) return Status{Code::kLibraryError, ZSTD_getErrorName(n)};
    return saving_percent(sample.size(), n);
}

SavingMemory::SavingMemory(std::size_t capacity)
    : per_shard_(std::max<std::size_t>(1, capacity / kShards)),
      shards_(std::make_unique<Shard[]>(kShards)) {}

SavingMemory::Shard& SavingMemory::shard_of(std::string_view key) const {
    return shards_[ViewHash{}(key) % kShards];
}

void SavingMemory::remember(std::string_view key, int saving, Clock::time_point expires) {
    if (key.size() > kMaxKey) return;
    Shard& s = shard_of(key);
    const std::lock_guard<std::mutex> lock(s.mu);
    if (auto it = s.entries.find(key); it != s.entries.end()) {
        it->second = {saving, expires};
        return;
    }
    if (s.entries.size() >= per_shard_) {
        const Clock::time_point now = Clock::now();
        std::erase_if(s.entries, [now](const auto& kv) { return kv.second.expires <= now; });
        if (s.entries.size() >= per_shard_) s.entries.clear();
    }
    s.entries.emplace(std::string(key), Entry{saving, expires});
}

std::optional<int> SavingMemory::recall(std::string_view key, Clock::time_point now) const {
    if (key.size() > kMaxKey) return std::nullopt;
    const Shard& s = shard_of(key);
    const std::lock_guard<std::mutex> lock(s.mu);
    const auto it = s.entries.find(key);
    if (it == s.entries.end() || it->second.expires <= now) return std::nullopt;
    return it->second.saving;
}

std::size_t SavingMemory::size() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < kShards; ++i) {
        const std::lock_guard<std::mutex> lock(shards_[i].mu);
        n += shards_[i].entries.size();
    }
    return n;
}

}  // namespace mc
