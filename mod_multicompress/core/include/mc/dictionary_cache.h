// SPDX-License-Identifier: Apache-2.0
// A server process's dictionaries (RFC 9842): their bytes and prepared zstd tables within a
// memory budget, least recently used first; the origins each may be used on; when this process
// last stored each (dictionary, origin) pair; the store's recent misses; and the hashes of the
// static files it learned. Thread-safe; no I/O (the adapter reads and writes the store).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mc/dictionary.h"
#include "mc/view_hash.h"

namespace mc {

/// Microseconds since the epoch (httpd's apr_time_t).
using MicroTime = std::int64_t;

class DictionaryCache {
public:
    using Shared = std::shared_ptr<const DictionaryBytes>;

    static constexpr std::size_t kDefaultBudget = 64 * 1024 * 1024;  ///< bytes and tables
    static constexpr std::size_t kMaxFiles = 1024;
    static constexpr std::size_t kMaxMisses = 4096;
    /// A dictionary this process stored is stored again after this long (an evicted entry comes
    /// back while it is still being served).
    static constexpr MicroTime kRestoreAfter = MicroTime{3600} * 1'000'000;
    /// How long the store keeps a dictionary.
    static constexpr MicroTime kStoreLifetime = MicroTime{30} * 24 * 3600 * 1'000'000;
    /// How long a dictionary the store did not have is not asked for again (a client that names
    /// random hashes costs the store nothing more; one learned by another server of a fleet is
    /// used here this much later at most).
    static constexpr MicroTime kMissMemory = MicroTime{10} * 1'000'000;

    explicit DictionaryCache(std::size_t budget = kDefaultBudget) : budget_(budget) {}

    /// The bytes of `h`, whatever origin they were offered on (a store read then only needs the
    /// head for a new origin).
    Shared find(const DictionaryHash& h);
    /// The bytes of `h` if they may be used on `origin` here.
    Shared find(const DictionaryHash& h, std::string_view origin);
    /// Keeps `d` and that it may be used on `origin`; forgets a miss noted for them.
    void put(const Shared& d, std::string_view origin);

    /// Whether the store lately had no dictionary `h` for `origin`.
    bool missed_lately(const DictionaryHash& h, std::string_view origin, MicroTime now);
    void note_miss(const DictionaryHash& h, std::string_view origin, MicroTime now);

    /// Whether this process holds `h` for `origin` and stored it lately.
    bool stored_recently(const DictionaryHash& h, std::string_view origin, MicroTime now);
    /// Whether the caller is to store `h` for `origin` now (held, not stored lately); if so,
    /// notes that it is.
    bool claim_store(const DictionaryHash& h, std::string_view origin, MicroTime now);

    /// `d` prepared for zstd at `level`, made on first use (outside the lock) and kept with the
    /// bytes; nullptr when libzstd cannot prepare it.
    std::shared_ptr<const PreparedDictionary> prepared(const Shared& d, int level);

    /// The hash learned for a version of a static file (`file` names path, size, mtime, inode).
    std::optional<DictionaryHash> file_hash(std::string_view file);
    void remember_file(std::string_view file, const DictionaryHash& h);
    /// Whether this process learned `file` and holds and lately stored its hash for `origin`
    /// (file_hash, then stored_recently, under one lock: asked on every response of a file).
    bool file_stored_recently(std::string_view file, std::string_view origin, MicroTime now);

    /// Memory held: bytes and prepared tables of the dictionaries kept.
    std::size_t footprint() const;
    std::size_t size() const;

private:
    struct Entry {
        Shared bytes;
        std::map<int, std::shared_ptr<const PreparedDictionary>> prepared;
        /// Where it may be used: when stored (0: not). Looked up by a view, without a copy.
        std::map<std::string, MicroTime, std::less<>> origins;
        std::uint64_t used = 0;
    };
    // Keys looked up on every response that names or offers a dictionary: by the hash's own
    // bytes, and files by a view, so a lookup allocates nothing. std::hash of the bytes, as for
    // the strings these keys were (a client names any hash it likes).
    struct BytesHash : ViewHash {
        using ViewHash::operator();
        std::size_t operator()(const DictionaryHash& h) const {
            return (*this)(std::string_view(reinterpret_cast<const char*>(h.data()), h.size()));
        }
    };

    static std::string miss_key(const DictionaryHash& h, std::string_view origin);
    MicroTime* stored_at(const DictionaryHash& h, std::string_view origin);
    /// Whether `stored` (from stored_at) says stored lately.
    static bool recently(const MicroTime* stored, MicroTime now);
    static std::size_t footprint_of(const Entry& e);
    Entry& entry_for(const Shared& d);
    void evict();

    const std::size_t budget_;
    mutable std::mutex mu_;
    std::unordered_map<DictionaryHash, Entry, BytesHash> map_;
    std::unordered_map<std::string, DictionaryHash, ViewHash, std::equal_to<>> files_;
    std::unordered_map<std::string, MicroTime> misses_;  ///< hash + origin: when
    std::size_t total_ = 0;
    std::uint64_t clock_ = 0;
};

}  // namespace mc
