// SPDX-License-Identifier: Apache-2.0
// Where dictionaries are kept: in MultiCompressCacheStore (the bytes in chunks by hash, a head per
// origin the dictionary was offered on, both verified when read back) and, per child, a bounded
// cache of their bytes and prepared zstd tables (mc_dictionary.cc decides what goes in).
#pragma once

#include <httpd.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "mc/dictionary.h"

namespace mc::httpd {

using SharedDictionary = std::shared_ptr<const mc::DictionaryBytes>;

// The child's dictionaries: their bytes and prepared tables (bounded, least recently used
// first), the origins each may be used on, when this child last stored each (origin, dictionary)
// pair, and the hashes of static files it has learned.
class DictionaryCache {
public:
    static constexpr std::size_t kBudget = 64 * 1024 * 1024;  ///< bytes and tables, per child
    static constexpr std::size_t kMaxFiles = 1024;
    /// A dictionary this child stored is stored again after this long (an evicted entry comes
    /// back while it is still being served).
    static constexpr apr_time_t kRestoreAfter = apr_time_from_sec(3600);
    /// How long the store keeps a dictionary.
    static constexpr apr_time_t kStoreLifetime = apr_time_from_sec(30 * 24 * 3600);
    /// How long a dictionary the store did not have is not asked for again (a request that names
    /// random hashes costs the store nothing more; one learned by another server of a fleet is
    /// used here this much later at most).
    static constexpr apr_time_t kMissMemory = apr_time_from_sec(10);
    static constexpr std::size_t kMaxMisses = 4096;

    std::shared_ptr<const mc::DictionaryBytes> find(const mc::DictionaryHash& h) {
        const std::lock_guard<std::mutex> lock(mu_);
        const auto it = map_.find(hash_key(h));
        if (it == map_.end()) return nullptr;
        it->second.used = ++clock_;
        return it->second.bytes;
    }

    // The bytes of `h` if they may be used on `origin` here.
    std::shared_ptr<const mc::DictionaryBytes> find(const mc::DictionaryHash& h,
                                                    const std::string& origin) {
        const std::lock_guard<std::mutex> lock(mu_);
        const auto it = map_.find(hash_key(h));
        if (it == map_.end() || !it->second.origins.contains(origin)) return nullptr;
        it->second.used = ++clock_;
        return it->second.bytes;
    }

    // Keeps `d` and that it may be used on `origin`.
    void put(std::shared_ptr<const mc::DictionaryBytes> d, const std::string& origin) {
        const std::lock_guard<std::mutex> lock(mu_);
        Entry& e = map_[hash_key(d->hash)];
        if (!e.bytes) {
            e.bytes = std::move(d);
            total_ += e.bytes->bytes.size();
        }
        e.origins.emplace(origin, 0);
        e.used = ++clock_;
        misses_.erase(hash_key(e.bytes->hash) + origin);
        evict();
    }

    // Whether the store lately had no dictionary `h` for `origin`.
    bool missed_lately(const mc::DictionaryHash& h, const std::string& origin, apr_time_t now) {
        const std::lock_guard<std::mutex> lock(mu_);
        const auto it = misses_.find(hash_key(h) + origin);
        return it != misses_.end() && now - it->second < kMissMemory;
    }

    void note_miss(const mc::DictionaryHash& h, const std::string& origin, apr_time_t now) {
        const std::lock_guard<std::mutex> lock(mu_);
        if (misses_.size() >= kMaxMisses) misses_.clear();
        misses_[hash_key(h) + origin] = now;
    }

    // Whether this child holds `h` for `origin` and stored it lately.
    bool stored_recently(const mc::DictionaryHash& h, const std::string& origin, apr_time_t now) {
        const std::lock_guard<std::mutex> lock(mu_);
        const apr_time_t* stored = stored_at(h, origin);
        return stored != nullptr && *stored != 0 && now - *stored < kRestoreAfter;
    }

    // Whether the caller is to store `h` for `origin` now (not stored lately); if so, notes that
    // it is.
    bool claim_store(const mc::DictionaryHash& h, const std::string& origin, apr_time_t now) {
        const std::lock_guard<std::mutex> lock(mu_);
        apr_time_t* stored = stored_at(h, origin);
        if (stored == nullptr || (*stored != 0 && now - *stored < kRestoreAfter)) return false;
        *stored = now;
        return true;
    }

    std::shared_ptr<const mc::PreparedDictionary> prepared(
        const std::shared_ptr<const mc::DictionaryBytes>& d, int level) {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            const auto it = map_.find(hash_key(d->hash));
            if (it != map_.end()) {
                it->second.used = ++clock_;
                if (const auto p = it->second.prepared.find(level); p != it->second.prepared.end())
                    return p->second;
            }
        }
        // Made outside the lock: preparing a large dictionary at a high level takes a while.
        auto made = mc::PreparedDictionary::make(d, level);
        if (!made.is_ok()) return nullptr;
        std::shared_ptr<const mc::PreparedDictionary> p = std::move(made).value();
        const std::lock_guard<std::mutex> lock(mu_);
        Entry& e = map_[hash_key(d->hash)];
        if (!e.bytes) {
            e.bytes = d;
            total_ += d->bytes.size();
        }
        e.used = ++clock_;
        const auto [it, inserted] = e.prepared.emplace(level, p);
        if (!inserted) return it->second;  // another thread was first
        total_ += p->footprint() - d->bytes.size();
        evict();
        return p;
    }

    std::optional<mc::DictionaryHash> file_hash(const std::string& file) {
        const std::lock_guard<std::mutex> lock(mu_);
        const auto it = files_.find(file);
        if (it == files_.end()) return std::nullopt;
        return it->second;
    }

    void remember_file(const std::string& file, const mc::DictionaryHash& h) {
        const std::lock_guard<std::mutex> lock(mu_);
        if (files_.size() >= kMaxFiles) files_.clear();
        files_[file] = h;
    }

private:
    static std::string hash_key(const mc::DictionaryHash& h) {
        return {reinterpret_cast<const char*>(h.data()), h.size()};
    }

    struct Entry {
        std::shared_ptr<const mc::DictionaryBytes> bytes;
        std::map<int, std::shared_ptr<const mc::PreparedDictionary>> prepared;
        std::map<std::string, apr_time_t> origins;  ///< where it may be used: when stored (0: not)
        std::uint64_t used = 0;
    };

    apr_time_t* stored_at(const mc::DictionaryHash& h, const std::string& origin) {
        const auto it = map_.find(hash_key(h));
        if (it == map_.end()) return nullptr;
        const auto o = it->second.origins.find(origin);
        return o == it->second.origins.end() ? nullptr : &o->second;
    }

    static std::size_t footprint(const Entry& e) {
        std::size_t n = e.bytes ? e.bytes->bytes.size() : 0;
        for (const auto& [level, p] : e.prepared) n += p->footprint() - p->size();
        return n;
    }

    // Least recently used first, keeping at least the newest; responses that hold a dictionary
    // keep it alive (shared_ptr) until they end.
    void evict() {
        while (total_ > kBudget && map_.size() > 1) {
            auto oldest = map_.begin();
            for (auto it = map_.begin(); it != map_.end(); ++it) {
                if (it->second.used < oldest->second.used) oldest = it;
            }
            total_ -= std::min(total_, footprint(oldest->second));
            map_.erase(oldest);
        }
    }

    std::mutex mu_;
    std::unordered_map<std::string, Entry> map_;
    std::unordered_map<std::string, mc::DictionaryHash> files_;
    std::unordered_map<std::string, apr_time_t> misses_;  ///< hash + origin: when
    std::size_t total_ = 0;
    std::uint64_t clock_ = 0;
};

/// This child's dictionaries.
DictionaryCache& child_dictionaries();

/// Stores `d` for `origin` (chunks, then the head), each entry for 30 days.
void store_dictionary(server_rec* s, const mc::DictionaryBytes& d, const std::string& origin,
                      apr_pool_t* pool);
/// The dictionary `h` if the store says it was offered on `origin`: its head, then (unless `have`
/// holds the bytes already) its chunks, checked against the hash. A bad entry is logged, counted
/// and removed; nullptr for it and for a miss.
SharedDictionary fetch_dictionary(request_rec* r, const mc::DictionaryHash& h,
                                  const std::string& origin, const SharedDictionary& have);

}  // namespace mc::httpd
