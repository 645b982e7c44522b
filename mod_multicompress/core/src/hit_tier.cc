// SPDX-License-Identifier: Apache-2.0
// A process's tier of verified cache bodies: refcounted, bounded, LRU (mc/hit_tier.h).
#include "mc/hit_tier.h"

#include <cstring>
#include <new>

#include "mc/alloc.h"

namespace mc {

TierBody* TierBody::make(std::string_view bytes, int level, std::uint64_t window) noexcept {
    void* block = mem_alloc(sizeof(TierBody) + bytes.size());
    if (block == nullptr) return nullptr;
    auto* body = new (block) TierBody(bytes.size(), level, window);
    if (!bytes.empty())
        std::memcpy(static_cast<char*>(block) + sizeof(TierBody), bytes.data(), bytes.size());
    return body;
}

TierBody* TierBody::of_data(const void* data) noexcept {
    return const_cast<TierBody*>(static_cast<const TierBody*>(data) - 1);
}

void TierBody::unref() noexcept {
    // acq_rel: the thread that frees sees every other holder's reads done.
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    this->~TierBody();
    mem_free(this);
}

HitTier::~HitTier() {
    for (Item& item : lru_) item.body->unref();
}

TierBody* HitTier::find(std::string_view key) {
    const std::lock_guard<std::mutex> lock(mu_);
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);  // iterators stay valid
    TierBody* body = it->second->body;
    body->ref();
    return body;
}

void HitTier::drop(List::iterator it) {
    index_.erase(std::string_view(it->key));
    bytes_ -= it->footprint;
    it->body->unref();
    lru_.erase(it);
}

std::size_t HitTier::put(std::string_view key, TierBody* body, bool& kept) {
    kept = false;
    const std::size_t footprint = TierBody::footprint(body->size(), key.size());
    const std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = index_.find(key); it != index_.end()) drop(it->second);
    if (footprint > budget_) return 0;
    std::size_t evicted = 0;
    while (bytes_ + footprint > budget_ && !lru_.empty()) {
        drop(std::prev(lru_.end()));
        ++evicted;
    }
    body->ref();
    lru_.push_front(Item{std::string(key), body, footprint});
    index_.emplace(std::string_view(lru_.front().key), lru_.begin());
    bytes_ += footprint;
    kept = true;
    return evicted;
}

void HitTier::erase(std::string_view key) {
    const std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = index_.find(key); it != index_.end()) drop(it->second);
}

std::size_t HitTier::bytes() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
}

std::size_t HitTier::size() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
}

}  // namespace mc
