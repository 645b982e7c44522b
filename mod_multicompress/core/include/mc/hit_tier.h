// SPDX-License-Identifier: Apache-2.0
// A server process's tier of bodies already verified: cache bodies by store key (which names the
// file version, the coding, the dictionary and the virtual host), sidecars by the version of
// their file; bounded by bytes, least recently used evicted first. A hit costs a lookup under a
// short lock and a reference: no copy out of the store, no checksum of the body. Thread-safe; no
// I/O.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mc {

/// An immutable body with a reference count, its bytes right after this header in one
/// mc::mem_alloc block, so a holder that has only the bytes' address (an APR heap bucket's free
/// function) finds it again. A response in flight keeps it alive after the tier dropped it.
class TierBody {
public:
    /// A copy of `bytes` made at `level`, verified against a window of `window` bytes (0: not a
    /// coding with windows), with one reference (the caller's); nullptr when out of memory.
    static TierBody* make(std::string_view bytes, int level, std::uint64_t window) noexcept;
    /// The body whose data() is `data`.
    static TierBody* of_data(const void* data) noexcept;

    void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    /// Drops a reference; the last one frees the block.
    void unref() noexcept;

    [[nodiscard]] const char* data() const noexcept {
        return reinterpret_cast<const char*>(this + 1);
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] int level() const noexcept { return level_; }
    /// The largest window every frame of the body was checked to need at most (0: unchecked).
    [[nodiscard]] std::uint64_t window() const noexcept { return window_; }
    /// Whether the body may go to a client whose window limit for its coding is `max_window`
    /// (0: none to check): it was checked against that limit or a smaller one.
    [[nodiscard]] bool fits_window(std::uint64_t max_window) const noexcept {
        return max_window == 0 || (window_ != 0 && window_ <= max_window);
    }
    /// Bytes a tier counts for a body of `size` bytes under a key of `key_size` bytes: the
    /// block, the key and the tier's bookkeeping.
    static constexpr std::size_t footprint(std::size_t size, std::size_t key_size) {
        return sizeof(TierBody) + size + key_size + kBookkeeping;
    }

    TierBody(const TierBody&) = delete;
    TierBody& operator=(const TierBody&) = delete;

private:
    static constexpr std::size_t kBookkeeping = 128;  // list node, map node, bucket, strings
    TierBody(std::size_t size, int level, std::uint64_t window)
        : size_(size), window_(window), level_(level) {}
    ~TierBody() = default;

    std::atomic<std::uint32_t> refs_{1};
    std::size_t size_;
    std::uint64_t window_;
    int level_;
};

/// The tier: at most `budget` bytes (TierBody::footprint of every body kept). Full, it evicts the
/// least recently used bodies; a body that alone exceeds the budget is not kept.
class HitTier {
public:
    explicit HitTier(std::size_t budget) : budget_(budget) {}
    /// Drops the tier's references (bodies still held by responses live on until released).
    ~HitTier();
    HitTier(const HitTier&) = delete;
    HitTier& operator=(const HitTier&) = delete;

    /// The body kept under `key`, with a reference for the caller (who unrefs it), or nullptr.
    TierBody* find(std::string_view key);
    /// Keeps `body` (the caller holds a reference) under `key` with a reference of the tier's
    /// own, replacing what was kept there. Returns how many other bodies were evicted to make room;
    /// `kept` says whether it was kept (false: larger than the budget).
    std::size_t put(std::string_view key, TierBody* body, bool& kept);
    /// Forgets `key`.
    void erase(std::string_view key);

    /// Bytes counted for the bodies kept.
    [[nodiscard]] std::size_t bytes() const;
    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] std::size_t budget() const { return budget_; }

private:
    struct Item {
        std::string key;
        TierBody* body;
        std::size_t footprint;
    };
    using List = std::list<Item>;  // most recently used first

    void drop(List::iterator it);  // the caller holds the lock

    const std::size_t budget_;
    mutable std::mutex mu_;
    List lru_;
    std::unordered_map<std::string_view, List::iterator> index_;  // views of Item::key
    std::size_t bytes_ = 0;
};

}  // namespace mc
