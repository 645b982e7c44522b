// SPDX-License-Identifier: Apache-2.0
// The compressed-response cache's entries in the store: their key (bound to the file's version,
// the coding, the dictionary and the virtual host), lookup (hit, miss, unavailable) with every
// entry verified before a byte is used, storing, and what a bad entry costs (logged once per
// kind, removed).
#pragma once

#include <httpd.h>
#include <apr_buckets.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mc/coding.h"
#include "mc/dictionary.h"
#include "mc/hit_tier.h"

namespace mc::httpd {

/// The cache key of a file's compressed body: identity (path, size, mtime, inode, device),
/// coding, for dcz the dictionary's hash, and the virtual host that serves it.
std::string cache_key(request_rec* r, mc::Coding coding);

/// The version of a file an entry is made from, as its apr_finfo_t gives it.
struct FileIdentity {
    apr_off_t size = 0;
    apr_time_t mtime = 0;
    apr_ino_t inode = 0;
};
FileIdentity file_of(const request_rec* r);

/// A cached body: the level it was made at and the bytes.
struct CachedBody {
    int level = 0;
    const char* data = nullptr;  ///< in r->pool, or `tier`'s bytes
    std::size_t size = 0;
    /// The child's verified copy the bytes are in (a reference held until r->pool is cleared),
    /// or nullptr; `local` when the hit was found there (not read from the store).
    mc::TierBody* tier = nullptr;
    bool local = false;
};

/// What a lookup found.
enum class Lookup {
    kHit,          ///< `out` holds the body
    kMiss,         ///< no usable entry (a bad one was removed): the live response may fill it
    kUnavailable,  ///< no store, or it failed lately (logged once): nothing is to be stored
};
/// The child's tier of verified entries first (MultiCompressCacheLocal), then the store; an entry
/// read from the store at its final level enters the tier.
Lookup cache_lookup(request_rec* r, const std::string& key, mc::Coding coding, CachedBody& out);
/// A bucket with a hit's bytes: over the tier's copy (no copy, holding it while in flight), else
/// over r->pool's.
apr_bucket* cached_body_bucket(request_rec* r, const CachedBody& hit);
/// The largest window a client decodes for `coding` (RFC 9659: zstd 8 MiB; RFC 9842: dcz after
/// `dictionary`); 0 for codings without windows to check.
std::uint64_t max_window_for(mc::Coding coding, const mc::DictionaryBytes* dictionary);
/// The upgrade worker's check before it stores a strong copy of `size` bytes: when the store
/// holds a valid entry `key` for version `file` whose body is no larger, that entry is kept and
/// marked final (stored again at `level`, same bytes) so that no later hit asks again, and the
/// result is true; false when the strong copy is to be stored (no such entry, or it is larger).
bool cache_keep_stored(server_rec* s, const std::string& key, mc::Coding coding,
                       const FileIdentity& file, std::uint64_t max_window, std::int64_t max_entry,
                       int level, std::size_t size, apr_pool_t* pool);
/// Stores the entry `key` for version `file` of a file, made at `level`. False when the server
/// has no usable store, the format cannot hold it, or the store failed.
bool cache_put(server_rec* s, const std::string& key, mc::Coding coding, const FileIdentity& file,
               int level, std::string_view body, apr_pool_t* pool);

}  // namespace mc::httpd
