// SPDX-License-Identifier: Apache-2.0
// MultiCompressCache policy: the key, lookup (hit, miss, unavailable), store, bad entries, and
// asking for an upgrade; the store itself is mc_socache, the upgrade thread mc_cache_worker.
#pragma once

#include <httpd.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "mc/coding.h"

namespace mc::httpd {

/// The cache key of a file's compressed body: identity (path, size, mtime, inode) and coding,
/// and for dcz the dictionary's hash (a popular file and dictionary pair is compressed once).
std::string cache_key(request_rec* r, mc::Coding coding);

/// The version of a file an entry is made from, as its apr_finfo_t gives it.
struct FileIdentity {
    apr_off_t size = 0;
    apr_time_t mtime = 0;
    apr_ino_t inode = 0;
};

/// A cached body: the level it was made at and the bytes.
struct CachedBody {
    int level = 0;
    const char* data = nullptr;  ///< in r->pool
    std::size_t size = 0;
};

/// What a lookup found.
enum class Lookup {
    kHit,          ///< `out` holds the body
    kMiss,         ///< no usable entry (a bad one was removed): the live response may fill it
    kUnavailable,  ///< no store, or it failed lately (logged once): nothing is to be stored
};
Lookup cache_lookup(request_rec* r, const std::string& key, mc::Coding coding, CachedBody& out);
/// Stores a body made at `level` (the live response) and asks for a stronger copy when
/// MultiCompressCacheLevel is higher.
void cache_store(request_rec* r, const std::string& key, mc::Coding coding, int level,
                 std::string_view body);
/// Asks the background worker to replace the entry with one made at the cache level.
void cache_request_upgrade(request_rec* r, const std::string& key, mc::Coding coding);
/// Stores the entry `key` for version `file` of a file, without a request (the upgrade worker).
/// False when the server has no usable store, the format cannot hold it, or the store failed.
bool cache_put(server_rec* s, const std::string& key, mc::Coding coding, const FileIdentity& file,
               int level, std::string_view body, apr_pool_t* pool);

}  // namespace mc::httpd
