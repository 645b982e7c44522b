// SPDX-License-Identifier: Apache-2.0
// The socache store under the cache: server config and directives, provider and instance, the
// global mutex, store health, and the raw store/retrieve/remove calls.
#pragma once

#include <httpd.h>
#include <http_config.h>

#include <span>
#include <string_view>

namespace mc::httpd {

void* create_server_config(apr_pool_t* p, server_rec* s) noexcept;
void* merge_server_config(apr_pool_t* p, void* base, void* add) noexcept;
// Its directives, MultiCompressCacheStore provider[:args] (server and virtual host) and
// MultiCompressCacheSecret FILE (main server only: entries carry an HMAC-SHA256 keyed with the
// file's contents, and entries without a valid one are refused), are in mc_directives.h.
/// Notes that some section turned MultiCompressCache on (a store is then set up at startup).
/// Only while the configuration is read: a directive in .htaccess (read at request time) writes
/// no process state, and without a server-level store its requests find the cache unavailable.
void note_cache_wanted(cmd_parms* cmd);
/// Whether the configuration turned the cache on anywhere (read-only once it is read).
bool cache_wanted();
/// The key of every entry's HMAC (MultiCompressCacheSecret); empty: entries carry no MAC.
std::string_view cache_secret();

int socache_pre_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp) noexcept;
/// Creates the default store where none was configured and initialises every instance.
int socache_post_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                        server_rec* s) noexcept;
void socache_child_init(apr_pool_t* pchild, server_rec* s) noexcept;

/// A (virtual) server's store: provider, instance and mutex (opaque outside mc_socache.cc).
struct ServerConf;
/// The store of `s`, or nullptr when it has none or it rests after an error (store_failed).
const ServerConf* usable_store(const server_rec* s);
/// Counts a store error and lets the store rest for a while (one log line per outage).
void store_failed(server_rec* s, apr_status_t rv, const char* what);

apr_status_t store_put(const ServerConf& sc, server_rec* s, std::string_view key,
                       std::span<char> value, apr_time_t expiry, apr_pool_t* pool);
/// `*len` is the size of `buf` on the way in and of the value on the way out.
apr_status_t store_get(const ServerConf& sc, server_rec* s, std::string_view key,
                       unsigned char* buf, unsigned int* len, apr_pool_t* pool);
/// A no-op for a provider without remove(): the next store overwrites the entry.
void store_remove(const ServerConf& sc, server_rec* s, std::string_view key, apr_pool_t* pool);

}  // namespace mc::httpd
