// SPDX-License-Identifier: Apache-2.0
// The compressed-response cache over httpd's socache providers, and its upgrade worker.
#include "mc_cache.h"

#include <ap_provider.h>
#include <ap_socache.h>
#include <apr_sha1.h>
#include <apr_strings.h>
#include <http_log.h>
#include <http_core.h>
#include <util_mutex.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <new>
#include <thread>

#include "mc/cache_entry.h"
#include "mc/encoder.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_log.h"
#include "mc_pool.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

constexpr const char* kMutexType = "mc-cache";
constexpr const char* kDefaultStore = "shmcb";
constexpr apr_size_t kDefaultShmSize = 32 * 1024 * 1024;
// Entries are keyed by the file's identity, so they never go stale; the expiry only lets a
// store drop what nobody asked for in a long time.
constexpr apr_time_t kExpiry = apr_time_from_sec(30 * 24 * 3600);
// A fleet secret: long enough to be one, short enough to be a key and not a mistake.
constexpr std::size_t kSecretMin = 16;
constexpr std::size_t kSecretMax = 4096;

struct ServerConf {
    const char* spec = nullptr;  ///< MultiCompressCacheStore as written
    const ap_socache_provider_t* provider = nullptr;
    ap_socache_instance_t* instance = nullptr;
    apr_global_mutex_t* mutex = nullptr;  ///< for providers that are not multi-process safe
};

// Written while the configuration is read (single-threaded), read-only afterwards.
bool g_cache_wanted = false;
// MultiCompressCacheSecret: the HMAC key of every entry (in pconf; empty: no MAC).
std::string_view g_secret;
// One per child process, set in child_init before any request thread runs.
class Upgrader;
Upgrader* g_upgrader = nullptr;
// After a store error the store is left alone for a while (per child): requests compress on the
// fly without waiting on it or filling the log (the store modules log each failed call).
constexpr apr_time_t kStoreRetry = apr_time_from_sec(30);
std::atomic<apr_time_t> g_store_down_until{0};

ServerConf* server_conf(const server_rec* s) {
    return static_cast<ServerConf*>(ap_get_module_config(s->module_config, &multicompress_module));
}

bool store_usable() {
    return apr_time_now() >= g_store_down_until.load();
}

// One log line per outage and process, then the store rests for kStoreRetry.
void store_failed(server_rec* s, apr_status_t rv, const char* what) {
    count(mc::metrics::Event::kCacheStoreError);
    const apr_time_t now = apr_time_now();
    const apr_time_t previous = g_store_down_until.exchange(now + kStoreRetry);
    if (previous != 0 && now < previous + kStoreRetry) return;  // same outage, already logged
    ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                 MC_LOGNO(00040) "compressed-response cache: %s failed; compressing on the fly "
                 "and trying the store again in %d s",
                 what, static_cast<int>(apr_time_sec(kStoreRetry)));
}

// A bad entry is logged once per kind and process in kBadEntryQuiet, with how many more of that
// kind were seen in between: a store full of garbage must not fill the log.
constexpr apr_time_t kBadEntryQuiet = apr_time_from_sec(300);
constexpr std::size_t kEntryErrorKinds =
    static_cast<std::size_t>(mc::EntryError::kIdentityMismatch) + 1;
std::array<std::atomic<apr_time_t>, kEntryErrorKinds> g_bad_logged{};
std::array<std::atomic<unsigned>, kEntryErrorKinds> g_bad_unlogged{};

void bad_entry_seen(const request_rec* r, const std::string& key, const mc::ParsedEntry& e) {
    const auto kind = static_cast<std::size_t>(e.error);
    if (kind >= kEntryErrorKinds) return;
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

mc::EntryIdentity identity_of(const std::string& key, mc::Coding coding, apr_off_t size,
                              apr_time_t mtime, apr_ino_t inode) {
    mc::EntryIdentity id;
    id.key = key;
    id.size = static_cast<std::int64_t>(size);
    id.mtime = static_cast<std::int64_t>(mtime);
    id.inode = static_cast<std::uint64_t>(inode);
    id.coding = coding;
    return id;
}

// Holds the store's global mutex for providers that need one.
class StoreLock {
public:
    explicit StoreLock(const ServerConf& sc) : m_(sc.mutex) {
        if (m_ != nullptr && apr_global_mutex_lock(m_) != APR_SUCCESS) m_ = nullptr;
    }
    ~StoreLock() {
        if (m_ != nullptr) apr_global_mutex_unlock(m_);
    }
    StoreLock(const StoreLock&) = delete;
    StoreLock& operator=(const StoreLock&) = delete;

private:
    apr_global_mutex_t* m_;
};

bool store_entry(server_rec* s, const ServerConf& sc, const mc::EntryIdentity& id, int level,
                 std::string_view body, apr_pool_t* pool) {
    // not malloc: see mc::MemAllocator
    mc::MemString value = mc::encode_entry_mem(id, level, body, g_secret);
    if (value.empty()) return false;  // a key or level the format cannot hold: nothing to keep
    const std::string_view key = id.key;
    apr_status_t rv;
    {
        StoreLock lock(sc);
        rv = sc.provider->store(sc.instance, s, reinterpret_cast<const unsigned char*>(key.data()),
                                static_cast<unsigned int>(key.size()), apr_time_now() + kExpiry,
                                reinterpret_cast<unsigned char*>(value.data()),
                                static_cast<unsigned int>(value.size()), pool);
    }
    if (rv != APR_SUCCESS) {
        store_failed(s, rv, "storing an entry");
        return false;
    }
    return true;
}

// ---- the upgrade worker: makes the strong copy off the request path.

struct UpgradeJob {
    std::string path;
    std::string key;
    mc::Coding coding = mc::Coding::kGzip;
    int level = 0;
    std::int64_t max_entry = 0;
    apr_off_t size = 0;
    apr_time_t mtime = 0;
    apr_ino_t inode = 0;
    server_rec* server = nullptr;
};

class Upgrader {
public:
    static constexpr std::size_t kMaxQueue = 64;

    Upgrader() : thread_([this] { loop(); }) {}
    ~Upgrader() {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cancel_.store(true);  // a running upgrade stops within one step: the child exits now
        cv_.notify_one();
        thread_.join();
    }
    Upgrader(const Upgrader&) = delete;
    Upgrader& operator=(const Upgrader&) = delete;

    void submit(UpgradeJob job) {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            if (queue_.size() >= kMaxQueue) return;  // busy: a later request asks again
            if (job.key == running_) return;
            for (const UpgradeJob& queued : queue_) {
                if (queued.key == job.key) return;
            }
            queue_.push_back(std::move(job));
        }
        cv_.notify_one();
    }

private:
    void loop() noexcept {
        apr_pool_t* pool = nullptr;
        if (apr_pool_create(&pool, nullptr) != APR_SUCCESS) return;
        for (;;) {
            UpgradeJob job;
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
                if (stop_) break;
                job = std::move(queue_.front());
                queue_.pop_front();
                running_ = job.key;
            }
            try {
                run(job, pool, cancel_);
            } catch (...) {
                ap_log_error(APLOG_MARK, APLOG_ERR, 0, job.server,
                             MC_LOGNO(00041) "cache upgrade failed");
            }
            apr_pool_clear(pool);
            const std::lock_guard<std::mutex> lock(mu_);
            running_.clear();
        }
        apr_pool_destroy(pool);
    }

    static void run(const UpgradeJob& job, apr_pool_t* pool, const std::atomic<bool>& cancel) {
        // The file must still be the one the key names; an edited file gets a new key anyway.
        struct stat st {};
        if (::stat(job.path.c_str(), &st) != 0 || st.st_size != job.size ||
            static_cast<apr_ino_t>(st.st_ino) != job.inode ||
            apr_time_from_sec(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec / 1000 != job.mtime) {
            return;
        }
        // The file and its compressed form in mc::mem_alloc memory, not malloc's (see
        // mc::MemAllocator): a multi-MB block freed through malloc raises its thresholds.
        std::ifstream in(job.path, std::ios::binary);
        mc::MemString body(static_cast<std::size_t>(job.size), '\0');
        in.read(body.data(), static_cast<std::streamsize>(body.size()));
        if (in.gcount() != static_cast<std::streamsize>(job.size) ||
            in.peek() != std::char_traits<char>::eof()) {
            return;
        }
        mc::EncoderParams p;
        p.coding = job.coding;
        p.level = job.level;
        mc::MemStringSink sink(64 * 1024);
        const auto done =
            mc::compress_all(p, std::as_bytes(std::span(body.data(), body.size())), sink, &cancel);
        if (!done.is_ok() || static_cast<std::int64_t>(sink.data().size()) > job.max_entry) return;
        const ServerConf* sc = server_conf(job.server);
        if (sc == nullptr || sc->instance == nullptr) return;
        const mc::EntryIdentity id =
            identity_of(job.key, job.coding, job.size, job.mtime, job.inode);
        if (!store_usable() || !store_entry(job.server, *sc, id, job.level,
                                            {sink.data().data(), sink.data().size()}, pool)) {
            return;
        }
        count(mc::metrics::Event::kCacheUpgrade);
        ap_log_error(APLOG_MARK, APLOG_TRACE1, 0, job.server, "cache: %s upgraded to %s level %d",
                     job.path.c_str(), mc::coding_token(job.coding).data(), job.level);
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<UpgradeJob> queue_;
    std::string running_;  ///< key of the job being compressed
    bool stop_ = false;
    std::atomic<bool> cancel_{false};  ///< set at exit: the running compression stops
    std::thread thread_;               // last: starts after the members it uses
};

apr_status_t destroy_instance(void* data) noexcept {
    auto* sc = static_cast<ServerConf*>(data);
    if (sc->instance != nullptr) sc->provider->destroy(sc->instance, nullptr);
    sc->instance = nullptr;
    return APR_SUCCESS;
}

const char* create_store(ServerConf* sc, const char* spec, apr_pool_t* ptemp, apr_pool_t* p) {
    const char* colon = std::strchr(spec, ':');
    const char* name = colon != nullptr
                           ? apr_pstrmemdup(ptemp, spec, static_cast<apr_size_t>(colon - spec))
                           : spec;
    const char* args = colon != nullptr ? colon + 1 : nullptr;
    sc->provider = static_cast<const ap_socache_provider_t*>(
        ap_lookup_provider(AP_SOCACHE_PROVIDER_GROUP, name, AP_SOCACHE_PROVIDER_VERSION));
    if (sc->provider == nullptr) {
        return apr_psprintf(p, "unknown socache provider '%s' (load mod_socache_%s)", name, name);
    }
    if (args == nullptr && std::strcmp(name, "shmcb") == 0) {
        // shmcb's own default (512 KB) cannot hold 1 MiB entries.
        args = apr_psprintf(p, "%s(%" APR_SIZE_T_FMT ")", ap_runtime_dir_relative(p, "mc_cache"),
                            kDefaultShmSize);
    }
    if (const char* err = sc->provider->create(&sc->instance, args, ptemp, p)) {
        return apr_psprintf(p, "'%s': %s", spec, err);
    }
    sc->spec = spec;
    return nullptr;
}

}  // namespace

void* create_server_config(apr_pool_t* p, server_rec* /*s*/) noexcept {
    return new (apr_pcalloc(p, sizeof(ServerConf))) ServerConf();
}

void* merge_server_config(apr_pool_t* p, void* base_v, void* add_v) noexcept {
    const auto* base = static_cast<const ServerConf*>(base_v);
    const auto* add = static_cast<const ServerConf*>(add_v);
    return new (apr_pcalloc(p, sizeof(ServerConf)))
        ServerConf(add->provider != nullptr ? *add : *base);
}

void note_cache_wanted(cmd_parms* /*cmd*/) {
    // .htaccess files are read by request threads, after post_config: leave the flag alone.
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_RUN_MPM) return;
    g_cache_wanted = true;
}

const char* set_cache_store(cmd_parms* cmd, void* /*mconfig*/, const char* arg) noexcept {
    try {
        if (const char* err =
                create_store(server_conf(cmd->server), arg, cmd->temp_pool, cmd->pool)) {
            return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err);
        }
        g_cache_wanted = true;
        return nullptr;
    } catch (...) {
        return "MultiCompressCacheStore: internal error";
    }
}

namespace {

// Reads the secret file named by MultiCompressCacheSecret (as root, while the configuration is
// read). Returns an error message or nullptr.
const char* read_secret(const char* path, apr_pool_t* p, std::string_view& out) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return apr_psprintf(p, "cannot open '%s': %s", path, std::strerror(errno));
    struct stat st {};
    std::string data;
    const char* err = nullptr;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        err = apr_psprintf(p, "'%s' is not a regular file", path);
    } else if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
        err = apr_psprintf(p, "'%s' can be read or written by other users (chmod o-rw)", path);
    } else {
        char chunk[1024];
        ssize_t n;
        while ((n = ::read(fd, chunk, sizeof chunk)) > 0 && data.size() <= kSecretMax) {
            data.append(chunk, static_cast<std::size_t>(n));
        }
        if (n < 0) err = apr_psprintf(p, "cannot read '%s': %s", path, std::strerror(errno));
    }
    ::close(fd);
    if (err != nullptr) return err;
    while (!data.empty() && (data.back() == '\n' || data.back() == '\r' || data.back() == ' ' ||
                             data.back() == '\t')) {
        data.pop_back();
    }
    if (data.size() < kSecretMin || data.size() > kSecretMax) {
        return apr_psprintf(p,
                            "'%s' holds %" APR_SIZE_T_FMT " bytes; a secret has %" APR_SIZE_T_FMT
                            " to %" APR_SIZE_T_FMT " (e.g. openssl rand -hex 32)",
                            path, data.size(), kSecretMin, kSecretMax);
    }
    out = std::string_view(apr_pstrmemdup(p, data.data(), data.size()), data.size());
    return nullptr;
}

}  // namespace

const char* set_cache_secret(cmd_parms* cmd, void* /*mconfig*/, const char* arg) noexcept {
    try {
        if (const char* err = ap_check_cmd_context(cmd, GLOBAL_ONLY)) return err;
        const char* path = ap_server_root_relative(cmd->temp_pool, arg);
        if (path == nullptr)
            return apr_psprintf(cmd->pool, "%s: bad path '%s'", cmd->cmd->name, arg);
        if (const char* err = read_secret(path, cmd->pool, g_secret)) {
            return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err);
        }
        return nullptr;
    } catch (...) {
        return "MultiCompressCacheSecret: internal error";
    }
}

int cache_pre_config(apr_pool_t* pconf, apr_pool_t* /*plog*/, apr_pool_t* /*ptemp*/) noexcept {
    g_cache_wanted = false;
    g_secret = {};
    ap_mutex_register(pconf, kMutexType, nullptr, APR_LOCK_DEFAULT, 0);
    return OK;
}

int cache_post_config(apr_pool_t* pconf, apr_pool_t* /*plog*/, apr_pool_t* ptemp,
                      server_rec* s) noexcept {
    try {
        if (!g_cache_wanted || ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
            return OK;
        }
        ServerConf* main_sc = server_conf(s);
        if (main_sc->provider == nullptr) {
            if (const char* err = create_store(main_sc, kDefaultStore, ptemp, pconf)) {
                ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, MC_LOGNO(00042) "cache store: %s", err);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
        }
        ap_socache_hints hints{};
        hints.avg_id_len = 40;
        hints.avg_obj_size = 32 * 1024;
        hints.expiry_interval = apr_time_from_sec(3600);
        for (server_rec* vs = s; vs != nullptr; vs = vs->next) {
            ServerConf* sc = server_conf(vs);
            if (sc->provider == nullptr) *sc = *main_sc;  // vhosts without a store use the main one
            if (sc != main_sc && sc->instance == main_sc->instance) {
                sc->mutex = main_sc->mutex;
                continue;
            }
            if (apr_status_t rv = sc->provider->init(sc->instance, "mc-cache", &hints, vs, pconf);
                rv != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_EMERG, rv, vs,
                             MC_LOGNO(00043) "cannot initialise the cache store '%s'", sc->spec);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            apr_pool_cleanup_register(pconf, sc, destroy_instance, apr_pool_cleanup_null);
            if ((sc->provider->flags & AP_SOCACHE_FLAG_NOTMPSAFE) != 0) {
                if (apr_status_t rv = ap_global_mutex_create(&sc->mutex, nullptr, kMutexType,
                                                             nullptr, vs, pconf, 0);
                    rv != APR_SUCCESS) {
                    return HTTP_INTERNAL_SERVER_ERROR;
                }
            }
        }
    } catch (...) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

void cache_child_init(apr_pool_t* pchild, server_rec* s) noexcept {
    try {
        if (!g_cache_wanted) return;
        for (server_rec* vs = s; vs != nullptr; vs = vs->next) {
            ServerConf* sc = server_conf(vs);
            if (sc->mutex != nullptr) {
                apr_global_mutex_child_init(&sc->mutex, apr_global_mutex_lockfile(sc->mutex),
                                            pchild);
            }
        }
        g_upgrader = pool_new<Upgrader>(pchild);
    } catch (...) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     MC_LOGNO(00044) "cache: cannot start the upgrade worker");
    }
}

std::string cache_key(const request_rec* r, mc::Coding coding) {
    const char* identity =
        apr_psprintf(r->pool, "%s|%" APR_OFF_T_FMT "|%" APR_TIME_T_FMT "|%lu|%lu|%s", r->filename,
                     r->finfo.size, r->finfo.mtime, static_cast<unsigned long>(r->finfo.inode),
                     static_cast<unsigned long>(r->finfo.device), mc::coding_token(coding).data());
    unsigned char digest[APR_SHA1_DIGESTSIZE];
    apr_sha1_ctx_t sha;
    apr_sha1_init(&sha);
    apr_sha1_update(&sha, identity, static_cast<unsigned int>(std::strlen(identity)));
    apr_sha1_final(digest, &sha);
    static constexpr char kHex[] = "0123456789abcdef";
    // "mc2-": entries in the verified format of mc/cache_entry.h. A change of the format changes
    // the prefix, so servers of two versions sharing a store do not read each other's entries.
    std::string key = "mc2-";
    for (unsigned char b : digest) {
        key += kHex[b >> 4];
        key += kHex[b & 15];
    }
    return key;
}

namespace {

// Removes a bad entry, so the live response (this request is a miss) stores a good one; a
// provider without remove() keeps it until that overwrites it.
void drop_bad_entry(request_rec* r, const ServerConf& sc, const std::string& key,
                    const mc::ParsedEntry& e) {
    count(mc::metrics::Event::kCacheRejected);
    bad_entry_seen(r, key, e);
    if (sc.provider->remove == nullptr) return;
    StoreLock lock(sc);
    (void)sc.provider->remove(sc.instance, r->server,
                              reinterpret_cast<const unsigned char*>(key.data()),
                              static_cast<unsigned int>(key.size()), r->pool);
}

}  // namespace

Lookup cache_lookup(request_rec* r, const std::string& key, mc::Coding coding, CachedBody& out) {
    const ServerConf* sc = server_conf(r->server);
    if (sc == nullptr || sc->instance == nullptr || !store_usable()) return Lookup::kUnavailable;
    // One read, into a buffer that holds any entry this file can have: the largest body kept
    // (MultiCompressCacheMaxEntry), or what any of our encoders can make of the file if that is
    // less (stored bodies are at most a few bytes per 16 KiB larger than their input). A larger
    // value is not ours; shmcb skips it (a miss), memcache and redis fail the read with ENOMEM.
    const auto max_entry = static_cast<std::uint64_t>(dir_config(r).cache_max_entry_value());
    const auto file_size = static_cast<std::uint64_t>(r->finfo.size);
    const std::uint64_t body_cap = std::min(max_entry, file_size + file_size / 64 + 1024);
    const auto cap = static_cast<apr_size_t>(body_cap + mc::entry_overhead(key.size()));
    auto* buf = static_cast<unsigned char*>(apr_palloc(r->pool, cap));
    unsigned int len = static_cast<unsigned int>(cap);
    apr_status_t rv;
    {
        StoreLock lock(*sc);
        rv = sc->provider->retrieve(sc->instance, r->server,
                                    reinterpret_cast<const unsigned char*>(key.data()),
                                    static_cast<unsigned int>(key.size()), buf, &len, r->pool);
    }
    if (APR_STATUS_IS_NOTFOUND(rv)) return Lookup::kMiss;
    if (rv == APR_ENOSPC || rv == APR_ENOMEM) {
        mc::ParsedEntry e;
        e.error = mc::EntryError::kLengthMismatch;
        e.detail = "larger than any entry for this file";
        drop_bad_entry(r, *sc, key, e);
        return Lookup::kMiss;
    }
    if (rv != APR_SUCCESS) {
        store_failed(r->server, rv, "a lookup");
        return Lookup::kUnavailable;
    }
    // The store is shared and often unauthenticated: nothing of the value is used before it is
    // known to be whole, intact and made from this version of this file.
    const mc::ParsedEntry e = mc::parse_entry(
        std::string_view(reinterpret_cast<const char*>(buf), len),
        identity_of(key, coding, r->finfo.size, r->finfo.mtime, r->finfo.inode), g_secret);
    if (!e.ok()) {
        drop_bad_entry(r, *sc, key, e);
        return Lookup::kMiss;
    }
    out.level = e.level;
    out.data = e.body.data();
    out.size = e.body.size();
    return Lookup::kHit;
}

void cache_store(request_rec* r, const std::string& key, mc::Coding coding, int level,
                 std::string_view body) {
    const ServerConf* sc = server_conf(r->server);
    if (sc == nullptr || sc->instance == nullptr || !store_usable()) return;
    const mc::EntryIdentity id =
        identity_of(key, coding, r->finfo.size, r->finfo.mtime, r->finfo.inode);
    if (!store_entry(r->server, *sc, id, level, body, r->pool)) return;
    count(mc::metrics::Event::kCacheStore);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "cache: stored %s at level %d (%" APR_SIZE_T_FMT " bytes)",
                  mc::coding_token(coding).data(), level, body.size());
    if (level < dir_config(r).cache_level_for(coding)) cache_request_upgrade(r, key, coding);
}

void cache_request_upgrade(request_rec* r, const std::string& key, mc::Coding coding) {
    if (g_upgrader == nullptr) return;
    const mc::Config& cfg = dir_config(r);
    UpgradeJob job;
    job.path = r->filename;
    job.key = key;
    job.coding = coding;
    job.level = cfg.cache_level_for(coding);
    job.max_entry = cfg.cache_max_entry_value();
    job.size = r->finfo.size;
    job.mtime = r->finfo.mtime;
    job.inode = r->finfo.inode;
    job.server = r->server;
    g_upgrader->submit(std::move(job));
}

}  // namespace mc::httpd
