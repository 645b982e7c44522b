// SPDX-License-Identifier: Apache-2.0
// MultiCompressCache: compressed bodies of static files kept in an httpd socache store (shmcb,
// memcache, redis, ...), keyed by the file's identity and the encoding, upgraded to a stronger
// level off the request path.
#pragma once

#include <httpd.h>
#include <http_config.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "mc/coding.h"
#include "mc/config.h"

namespace mc::httpd {

void* create_server_config(apr_pool_t* p, server_rec* s) noexcept;
void* merge_server_config(apr_pool_t* p, void* base, void* add) noexcept;
/// MultiCompressCacheStore provider[:args] (server and virtual host).
const char* set_cache_store(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
/// MultiCompressCacheSecret FILE (main server only): entries carry an HMAC-SHA256 keyed with the
/// file's contents, and entries without a valid one are refused.
const char* set_cache_secret(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
/// Notes that some section turned MultiCompressCache on (a store is then set up at startup).
/// Only while the configuration is read: a directive in .htaccess (read at request time) writes
/// no process state, and without a server-level store its requests find the cache unavailable.
void note_cache_wanted(cmd_parms* cmd);

int cache_pre_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp) noexcept;
int cache_post_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                      server_rec* s) noexcept;
void cache_child_init(apr_pool_t* pchild, server_rec* s) noexcept;

/// The cache key of a file's compressed body: identity (path, size, mtime, inode) and coding.
std::string cache_key(const request_rec* r, mc::Coding coding);

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

}  // namespace mc::httpd
