// SPDX-License-Identifier: Apache-2.0
// A server process's dictionaries: bounded, least recently used first (mc/dictionary_cache.h).
#include "mc/dictionary_cache.h"

#include <algorithm>

namespace mc {

std::string DictionaryCache::miss_key(const DictionaryHash& h, std::string_view origin) {
    std::string key(reinterpret_cast<const char*>(h.data()), h.size());
    return key.append(origin);
}

DictionaryCache::Shared DictionaryCache::find(const DictionaryHash& h) {
    const std::lock_guard<std::mutex> lock(mu_);
    const auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    it->second.used = ++clock_;
    return it->second.bytes;
}

DictionaryCache::Shared DictionaryCache::find(const DictionaryHash& h, std::string_view origin) {
    const std::lock_guard<std::mutex> lock(mu_);
    const auto it = map_.find(h);
    if (it == map_.end() || !it->second.origins.contains(origin)) return nullptr;
    it->second.used = ++clock_;
    return it->second.bytes;
}

// The entry for `d`, made (and its bytes counted) when new; the caller holds the lock.
DictionaryCache::Entry& DictionaryCache::entry_for(const Shared& d) {
    Entry& e = map_[d->hash];
    if (!e.bytes) {
        e.bytes = d;
        total_ += d->bytes.size();
    }
    e.used = ++clock_;
    return e;
}

void DictionaryCache::put(const Shared& d, std::string_view origin) {
    const std::lock_guard<std::mutex> lock(mu_);
    Entry& e = entry_for(d);
    if (!e.origins.contains(origin)) e.origins.emplace(std::string(origin), 0);
    misses_.erase(miss_key(d->hash, origin));
    evict();
}

bool DictionaryCache::missed_lately(const DictionaryHash& h, std::string_view origin,
                                    MicroTime now) {
    const std::string key = miss_key(h, origin);
    const std::lock_guard<std::mutex> lock(mu_);
    const auto it = misses_.find(key);
    return it != misses_.end() && now - it->second < kMissMemory;
}

void DictionaryCache::note_miss(const DictionaryHash& h, std::string_view origin, MicroTime now) {
    std::string key = miss_key(h, origin);
    const std::lock_guard<std::mutex> lock(mu_);
    if (misses_.size() >= kMaxMisses) misses_.clear();
    misses_[std::move(key)] = now;
}

bool DictionaryCache::recently(const MicroTime* stored, MicroTime now) {
    return stored != nullptr && *stored != 0 && now - *stored < kRestoreAfter;
}

MicroTime* DictionaryCache::stored_at(const DictionaryHash& h, std::string_view origin) {
    const auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    const auto o = it->second.origins.find(origin);
    return o == it->second.origins.end() ? nullptr : &o->second;
}

bool DictionaryCache::stored_recently(const DictionaryHash& h, std::string_view origin,
                                      MicroTime now) {
    const std::lock_guard<std::mutex> lock(mu_);
    return recently(stored_at(h, origin), now);
}

bool DictionaryCache::file_stored_recently(std::string_view file, std::string_view origin,
                                           MicroTime now) {
    const std::lock_guard<std::mutex> lock(mu_);
    const auto it = files_.find(file);
    return it != files_.end() && recently(stored_at(it->second, origin), now);
}

bool DictionaryCache::claim_store(const DictionaryHash& h, std::string_view origin, MicroTime now) {
    const std::lock_guard<std::mutex> lock(mu_);
    MicroTime* stored = stored_at(h, origin);
    if (stored == nullptr || recently(stored, now)) return false;
    *stored = now;
    return true;
}

std::shared_ptr<const PreparedDictionary> DictionaryCache::prepared(const Shared& d, int level) {
    {
        const std::lock_guard<std::mutex> lock(mu_);
        const auto it = map_.find(d->hash);
        if (it != map_.end()) {
            it->second.used = ++clock_;
            if (const auto p = it->second.prepared.find(level); p != it->second.prepared.end())
                return p->second;
        }
    }
    // Made outside the lock: preparing a large dictionary at a high level takes a while.
    auto made = PreparedDictionary::make(d, level);
    if (!made.is_ok()) return nullptr;
    std::shared_ptr<const PreparedDictionary> p = std::move(made).value();
    const std::lock_guard<std::mutex> lock(mu_);
    Entry& e = entry_for(d);
    const auto [it, inserted] = e.prepared.emplace(level, p);
    if (!inserted) return it->second;  // another thread was first
    total_ += p->footprint() - d->bytes.size();
    evict();
    return p;
}

std::optional<DictionaryHash> DictionaryCache::file_hash(std::string_view file) {
    const std::lock_guard<std::mutex> lock(mu_);
    const auto it = files_.find(file);
    if (it == files_.end()) return std::nullopt;
    return it->second;
}

void DictionaryCache::remember_file(std::string_view file, const DictionaryHash& h) {
    const std::lock_guard<std::mutex> lock(mu_);
    if (files_.size() >= kMaxFiles) files_.clear();
    if (const auto it = files_.find(file); it != files_.end()) {
        it->second = h;
    } else {
        files_.emplace(std::string(file), h);
    }
}

std::size_t DictionaryCache::footprint() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return total_;
}

std::size_t DictionaryCache::size() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
}

std::size_t DictionaryCache::footprint_of(const Entry& e) {
    std::size_t n = e.bytes ? e.bytes->bytes.size() : 0;
    for (const auto& [level, p] : e.prepared) n += p->footprint() - p->size();
    return n;
}

// Least recently used first, keeping at least the newest; responses that hold a dictionary
// keep it alive (shared_ptr) until they end.
void DictionaryCache::evict() {
    while (total_ > budget_ && map_.size() > 1) {
        auto oldest = map_.begin();
        for (auto it = map_.begin(); it != map_.end(); ++it) {
            if (it->second.used < oldest->second.used) oldest = it;
        }
        total_ -= std::min(total_, footprint_of(oldest->second));
        map_.erase(oldest);
    }
}

}  // namespace mc
