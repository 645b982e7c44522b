// SPDX-License-Identifier: Apache-2.0
// The cache's entries in the store: key, verified lookup, store, bad entries (mc_cache_entries.h).
#include "mc_cache_entries.h"

#include <apr_sha1.h>
#include <apr_strings.h>
#include <http_log.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

#include "mc/cache_entry.h"
#include "mc/config.h"
#include "mc/dictionary.h"
#include "mc/params.h"
#include "mc_request_state.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_file_memo.h"
#include "mc_hit_tier.h"
#include "mc_log.h"
#include "mc_shared.h"
#include "mc_socache.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Entries are keyed by the file's identity, so they never go stale; the expiry only lets a
// store drop what nobody asked for in a long time.
constexpr apr_time_t kExpiry = apr_time_from_sec(30 * 24 * 3600);

// A bad entry is logged once per kind and process in kBadEntryQuiet, with how many more of that
// kind were seen in between: a store full of garbage must not fill the log.
constexpr apr_time_t kBadEntryQuiet = apr_time_from_sec(300);
std::array<std::atomic<apr_time_t>, mc::kEntryErrorKinds> g_bad_logged{};
std::array<std::atomic<unsigned>, mc::kEntryErrorKinds> g_bad_unlogged{};

void bad_entry_seen(const request_rec* r, const std::string& key, const mc::ParsedEntry& e) {
    const auto kind = static_cast<std::size_t>(e.error);
    if (kind >= mc::kEntryErrorKinds) return;
    const apr_time_t now = apr_time_now();
    apr_time_t last = g_bad_logged[kind].load();
    if ((last != 0 && now < last + kBadEntryQuiet) ||
        !g_bad_logged[kind].compare_exchange_strong(last, now)) {
        g_bad_unlogged[kind].fetch_add(1);
        return;
    }
    const unsigned more = g_bad_unlogged[kind].exchange(0);
    const std::string_view name = mc::entry_error_name(e.error);
    ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                  MC_LOGNO(00120) "compressed-response cache: bad entry %s for %s (%.*s: %s); "
                  "treated as a miss and removed%s%s; further '%.*s' entries are not logged for "
                  "%d s",
                  key.c_str(), r->filename, static_cast<int>(name.size()), name.data(), e.detail,
                  more != 0 ? ", more of this kind since the last line: " : "",
                  more != 0 ? apr_psprintf(r->pool, "%u", more) : "",
                  static_cast<int>(name.size()), name.data(),
                  static_cast<int>(apr_time_sec(kBadEntryQuiet)));
}

mc::EntryIdentity identity_of(const std::string& key, mc::Coding coding, const FileIdentity& file) {
    mc::EntryIdentity id;
    id.key = key;
    id.size = static_cast<std::int64_t>(file.size);
    id.mtime = static_cast<std::int64_t>(file.mtime);
    id.inode = static_cast<std::uint64_t>(file.inode);
    id.coding = coding;
    return id;
}

// One read of the entry `id.key` into `pool` and, when the store has it (APR_SUCCESS), its check
// into `out`. The store is shared and often unauthenticated: nothing of the value is used before
// it is known to be whole, intact and made from `id`'s version of the file, with frames within
// `id.max_window`. The buffer holds any entry this file can have: the largest body kept
// (MultiCompressCacheMaxEntry), or what any of our encoders can make of the file if that is less
// (stored bodies are at most a few bytes per 16 KiB larger than their input). A larger value is
// not ours; shmcb skips it (a miss), memcache and redis fail the read with ENOMEM (memcache also
// logs an error, so a smaller buffer will not do for a smaller entry either).
apr_status_t read_entry(server_rec* s, const ServerConf& sc, const mc::EntryIdentity& id,
                        std::int64_t max_entry, apr_pool_t* pool, mc::ParsedEntry& out) {
    const auto size = static_cast<std::uint64_t>(id.size);
    const std::uint64_t body_cap =
        std::min(static_cast<std::uint64_t>(max_entry), size + size / 64 + 1024);
    const auto cap = static_cast<apr_size_t>(body_cap + mc::entry_overhead(id.key.size()));
    auto* buf = static_cast<unsigned char*>(apr_palloc(pool, cap));
    unsigned int len = static_cast<unsigned int>(cap);
    const apr_status_t rv = store_get(sc, s, id.key, buf, &len, pool);
    if (rv == APR_SUCCESS) {
        out = mc::parse_entry(std::string_view(reinterpret_cast<const char*>(buf), len), id,
                              cache_secret());
    }
    return rv;
}

std::uint64_t client_max_window(request_rec* r, mc::Coding coding) {
    const RequestState* st = coding == mc::Coding::kDcz ? request_state(r) : nullptr;
    return max_window_for(coding, st != nullptr ? st->dictionary.get() : nullptr);
}

bool store_entry(server_rec* s, const ServerConf& sc, const mc::EntryIdentity& id, int level,
                 std::string_view body, apr_pool_t* pool) {
    // not malloc: see mc::MemAllocator
    mc::MemString value = mc::encode_entry_mem(id, level, body, cache_secret());
    if (value.empty()) return false;  // a key or level the format cannot hold: nothing to keep
    const apr_status_t rv = store_put(sc, s, id.key, std::span(value.data(), value.size()),
                                      apr_time_now() + kExpiry, pool);
    if (rv != APR_SUCCESS) {
        store_failed(s, rv, "storing an entry");
        return false;
    }
    return true;
}

// Removes a bad entry, so the live response (this request is a miss) stores a good one; a
// provider without remove() keeps it until that overwrites it.
void drop_bad_entry(request_rec* r, const ServerConf& sc, const std::string& key,
                    const mc::ParsedEntry& e) {
    count(mc::metrics::Event::kCacheRejected);
    bad_entry_seen(r, key, e);
    store_remove(sc, r->server, key, r->pool);
}

// The keys this child has made, by everything they are made of: the same inputs always make the
// same key, so a remembered one is the key.
PerFileVersion<std::string>& cache_keys() {
    static PerFileVersion<std::string> keys;
    return keys;
}

}  // namespace

std::uint64_t max_window_for(mc::Coding coding, const mc::DictionaryBytes* dictionary) {
    if (coding == mc::Coding::kZstd) return std::uint64_t{1} << mc::kZstdMaxWindowLog;
    if (coding != mc::Coding::kDcz || dictionary == nullptr) return 0;
    return std::uint64_t{1} << mc::dcz_max_window_log(dictionary->bytes.size());
}

FileIdentity file_of(const request_rec* r) {
    return {r->finfo.size, r->finfo.mtime, r->finfo.inode};
}

std::string cache_key(request_rec* r, mc::Coding coding) {
    const RequestState* st = request_state(r);
    const mc::DictionaryBytes* dict =
        coding == mc::Coding::kDcz && st != nullptr ? st->dictionary.get() : nullptr;
    const std::string_view server = server_identity(r);
    // What the key is made of besides the file's path and version, for the child's memo of
    // keys: a SHA-1 and a printf on every hit cost more than the rest of the lookup.
    std::string what;
    what.reserve(2 + (dict != nullptr ? dict->hash.size() : 0) + server.size());
    what.append(1, '\0').append(1, static_cast<char>(coding));
    if (dict != nullptr) what.append(dict->hash.begin(), dict->hash.end());
    what.append(server);
    const std::string_view path = r->filename != nullptr ? r->filename : "";
    if (auto known = cache_keys().find(path, r->finfo, what)) return std::move(*known);
    // Bound to the virtual host: an entry is never served for another one (with the same
    // ServerName and port, the servers of a fleet share it).
    const char* identity = apr_psprintf(
        r->pool, "%s|%" APR_OFF_T_FMT "|%" APR_TIME_T_FMT "|%lu|%lu|%s%s%s|@%.*s", r->filename,
        r->finfo.size, r->finfo.mtime, static_cast<unsigned long>(r->finfo.inode),
        static_cast<unsigned long>(r->finfo.device), mc::coding_token(coding).data(),
        dict != nullptr ? "|" : "", dict != nullptr ? mc::hash_hex(dict->hash).c_str() : "",
        static_cast<int>(server.size()), server.data());
    unsigned char digest[APR_SHA1_DIGESTSIZE];
    apr_sha1_ctx_t sha;
    apr_sha1_init(&sha);
    apr_sha1_update(&sha, identity, static_cast<unsigned int>(std::strlen(identity)));
    apr_sha1_final(digest, &sha);
    // "mc2-": entries in the verified format of mc/cache_entry.h. A change of the format changes
    // the prefix, so servers of two versions sharing a store do not read each other's entries.
    std::string key = "mc2-";
    key.resize(key.size() + 2 * sizeof digest);
    mc::hex_into(std::span<const std::uint8_t>(digest, sizeof digest), key.data() + 4);
    return cache_keys().remember(path, r->finfo, std::move(key), what);
}

Lookup cache_lookup(request_rec* r, const std::string& key, mc::Coding coding, CachedBody& out) {
    // The child's verified copy needs no store (also while the store rests after an error).
    const int final_level = dir_config(r).cache_level_for(coding);
    mc::EntryIdentity expected = identity_of(key, coding, file_of(r));
    expected.max_window = client_max_window(r, coding);
    if (mc::TierBody* kept = tier_find(r, key, final_level, expected.max_window)) {
        out = {kept->level(), kept->data(), kept->size(), kept, true};
        return Lookup::kHit;
    }
    const ServerConf* sc = usable_store(r->server);
    if (sc == nullptr) return Lookup::kUnavailable;
    mc::ParsedEntry e;
    const apr_status_t rv =
        read_entry(r->server, *sc, expected, dir_config(r).cache_max_entry_value(), r->pool, e);
    if (APR_STATUS_IS_NOTFOUND(rv)) return Lookup::kMiss;
    if (rv == APR_ENOSPC || rv == APR_ENOMEM) {
        e.error = mc::EntryError::kLengthMismatch;
        e.detail = "larger than any entry for this file";
        drop_bad_entry(r, *sc, key, e);
        return Lookup::kMiss;
    }
    if (rv != APR_SUCCESS) {
        store_failed(r->server, rv, "a lookup");
        return Lookup::kUnavailable;
    }
    if (!e.ok()) {
        drop_bad_entry(r, *sc, key, e);
        return Lookup::kMiss;
    }
    out.level = e.level;
    out.data = e.body.data();
    out.size = e.body.size();
    if (mc::TierBody* kept = tier_keep(r, key, e.level, final_level, expected.max_window, e.body)) {
        out.data = kept->data();  // sent from the tier's copy: r->pool's buffer is not held
        out.tier = kept;
    }
    return Lookup::kHit;
}

apr_bucket* cached_body_bucket(request_rec* r, const CachedBody& hit) {
    apr_bucket_alloc_t* list = r->connection->bucket_alloc;
    if (hit.tier == nullptr) return apr_bucket_pool_create(hit.data, hit.size, r->pool, list);
    if (hit.local) count(mc::metrics::Event::kCacheLocalHit);
    return tier_bucket(hit.tier, list);
}

bool cache_put(server_rec* s, const std::string& key, mc::Coding coding, const FileIdentity& file,
               int level, std::string_view body, apr_pool_t* pool) {
    const ServerConf* sc = usable_store(s);
    return sc != nullptr && store_entry(s, *sc, identity_of(key, coding, file), level, body, pool);
}

bool cache_keep_stored(server_rec* s, const std::string& key, mc::Coding coding,
                       const FileIdentity& file, std::uint64_t max_window, std::int64_t max_entry,
                       int level, std::size_t size, apr_pool_t* pool) {
    const ServerConf* sc = usable_store(s);
    if (sc == nullptr) return false;
    mc::EntryIdentity expected = identity_of(key, coding, file);
    expected.max_window = max_window;
    mc::ParsedEntry e;
    if (read_entry(s, *sc, expected, max_entry, pool, e) != APR_SUCCESS || !e.ok() ||
        e.body.size() > size) {
        return false;
    }
    // Already final (another child's worker): nothing to write.
    return e.level >= level || store_entry(s, *sc, expected, level, e.body, pool);
}

}  // namespace mc::httpd
