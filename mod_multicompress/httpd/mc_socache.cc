// SPDX-License-Identifier: Apache-2.0
// The socache store under the cache: server config and directives, provider and instance, the
// global mutex, store health, and the raw store/retrieve/remove calls.
#include "mc_socache.h"

#include <ap_provider.h>
#include <ap_socache.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <util_mutex.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "mc/metrics.h"
#include "mc_counters.h"
#include "mc_directive_args.h"
#include "mc_log.h"
#include "mc_module.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

struct ServerConf {
    const char* spec = nullptr;  ///< MultiCompressCacheStore as written
    const ap_socache_provider_t* provider = nullptr;
    ap_socache_instance_t* instance = nullptr;
    apr_global_mutex_t* mutex = nullptr;  ///< for providers that are not multi-process safe
};

namespace {

constexpr const char* kMutexType = "mc-cache";
constexpr const char* kDefaultStore = "shmcb";
constexpr apr_size_t kDefaultShmSize = 32 * 1024 * 1024;
// A fleet secret: long enough to be one, short enough to be a key and not a mistake.
constexpr std::size_t kSecretMin = 16;
constexpr std::size_t kSecretMax = 4096;

// Written while the configuration is read (single-threaded), read-only afterwards.
bool g_cache_wanted = false;
// MultiCompressCacheSecret: the HMAC key of every entry (in pconf; empty: no MAC).
std::string_view g_secret;
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

bool cache_wanted() {
    return g_cache_wanted;
}

std::string_view cache_secret() {
    return g_secret;
}

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
    return directive::guarded(cmd, [&]() -> const char* {
        if (const char* err =
                create_store(server_conf(cmd->server), arg, cmd->temp_pool, cmd->pool)) {
            return directive::fail(cmd, err, arg);
        }
        g_cache_wanted = true;
        return nullptr;
    });
}

const char* set_cache_secret(cmd_parms* cmd, void* /*mconfig*/, const char* arg) noexcept {
    return directive::guarded(cmd, [&]() -> const char* {
        if (const char* err = ap_check_cmd_context(cmd, GLOBAL_ONLY)) return err;
        const char* path = ap_server_root_relative(cmd->temp_pool, arg);
        if (path == nullptr) return directive::fail(cmd, "bad path", arg);
        if (const char* err = read_secret(path, cmd->pool, g_secret)) {
            return directive::fail(cmd, err, arg);
        }
        return nullptr;
    });
}

int socache_pre_config(apr_pool_t* pconf, apr_pool_t* /*plog*/, apr_pool_t* /*ptemp*/) noexcept {
    g_cache_wanted = false;
    g_secret = {};
    ap_mutex_register(pconf, kMutexType, nullptr, APR_LOCK_DEFAULT, 0);
    return OK;
}

int socache_post_config(apr_pool_t* pconf, apr_pool_t* /*plog*/, apr_pool_t* ptemp,
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

void socache_child_init(apr_pool_t* pchild, server_rec* s) noexcept {
    if (!g_cache_wanted) return;
    for (server_rec* vs = s; vs != nullptr; vs = vs->next) {
        ServerConf* sc = server_conf(vs);
        if (sc->mutex != nullptr) {
            apr_global_mutex_child_init(&sc->mutex, apr_global_mutex_lockfile(sc->mutex), pchild);
        }
    }
}

const ServerConf* usable_store(const server_rec* s) {
    const ServerConf* sc = server_conf(s);
    if (sc == nullptr || sc->instance == nullptr || !store_usable()) return nullptr;
    return sc;
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

apr_status_t store_put(const ServerConf& sc, server_rec* s, std::string_view key,
                       std::span<char> value, apr_time_t expiry, apr_pool_t* pool) {
    const StoreLock lock(sc);
    return sc.provider->store(sc.instance, s, reinterpret_cast<const unsigned char*>(key.data()),
                              static_cast<unsigned int>(key.size()), expiry,
                              reinterpret_cast<unsigned char*>(value.data()),
                              static_cast<unsigned int>(value.size()), pool);
}

apr_status_t store_get(const ServerConf& sc, server_rec* s, std::string_view key,
                       unsigned char* buf, unsigned int* len, apr_pool_t* pool) {
    const StoreLock lock(sc);
    return sc.provider->retrieve(sc.instance, s, reinterpret_cast<const unsigned char*>(key.data()),
                                 static_cast<unsigned int>(key.size()), buf, len, pool);
}

void store_remove(const ServerConf& sc, server_rec* s, std::string_view key, apr_pool_t* pool) {
    if (sc.provider->remove == nullptr) return;
    const StoreLock lock(sc);
    (void)sc.provider->remove(sc.instance, s, reinterpret_cast<const unsigned char*>(key.data()),
                              static_cast<unsigned int>(key.size()), pool);
}

}  // namespace mc::httpd
