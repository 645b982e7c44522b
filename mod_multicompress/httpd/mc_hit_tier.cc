// SPDX-License-Identifier: Apache-2.0
// The child's tier of verified cache entries (mc_hit_tier.h).
#include "mc_hit_tier.h"

#include <apr_strings.h>
#include <http_config.h>
#include <http_log.h>

#include <cstdint>

#include "mc/metrics.h"
#include "mc_counters.h"
#include "mc_directive_args.h"
#include "mc_log.h"
#include "mc_pool.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Per child: what the hot pages of a site need (a page, its stylesheets and scripts in one or
// two codings at their strong levels are tens of KB each), well under a child's encoder memory.
constexpr std::int64_t kDefaultBudget = 8 * 1024 * 1024;
constexpr std::int64_t kMaxBudget = std::int64_t{64} * 1024 * 1024 * 1024;

// Written while the configuration is read (single-threaded), read-only afterwards.
std::int64_t g_budget = kDefaultBudget;

// The child's tier, made in child_init and destroyed with the child's pool, after its worker
// threads are joined; responses still holding a body keep it (TierBody's reference count).
class ChildTier {
public:
    explicit ChildTier(std::size_t budget) : tier_(budget) {
        set_cache_local_bytes(0);  // the block may be an exited child's
    }
    ~ChildTier() { set_cache_local_bytes(0); }
    ChildTier(const ChildTier&) = delete;
    ChildTier& operator=(const ChildTier&) = delete;
    mc::HitTier& tier() { return tier_; }

private:
    mc::HitTier tier_;
};
mc::HitTier* g_tier = nullptr;

apr_status_t clear_tier(void* /*data*/) noexcept {
    g_tier = nullptr;
    return APR_SUCCESS;
}

apr_status_t release_for_request(void* body) noexcept {
    static_cast<mc::TierBody*>(body)->unref();
    return APR_SUCCESS;
}

// The caller's reference to `body` is dropped when the request's pool is cleared.
void hold_for_request(request_rec* r, mc::TierBody* body) {
    apr_pool_cleanup_register(r->pool, body, release_for_request, apr_pool_cleanup_null);
}

// The free function of a heap bucket over a body's bytes.
void release_bytes(void* data) noexcept {
    mc::TierBody::of_data(data)->unref();
}

}  // namespace

const char* set_cache_local(cmd_parms* cmd, void* /*mconfig*/, const char* arg) noexcept {
    return directive::guarded(cmd, [&]() -> const char* {
        // One tier per child: a size for the whole server.
        if (const char* err = ap_check_cmd_context(cmd, GLOBAL_ONLY)) return err;
        if (strcasecmp(arg, "Off") == 0) {
            g_budget = 0;
            return nullptr;
        }
        return directive::size(cmd, arg, 0, kMaxBudget, g_budget);
    });
}

int hit_tier_pre_config(apr_pool_t* /*pconf*/, apr_pool_t* /*plog*/,
                        apr_pool_t* /*ptemp*/) noexcept {
    g_budget = kDefaultBudget;
    return OK;
}

void hit_tier_child_init(apr_pool_t* pchild, server_rec* s) noexcept {
    if (g_budget <= 0) return;  // also without the cache: sidecars read whole are kept
    try {
        // The pointer is cleared before the tier is destroyed (cleanups run in reverse order).
        g_tier = &pool_new<ChildTier>(pchild, static_cast<std::size_t>(g_budget))->tier();
        apr_pool_cleanup_register(pchild, nullptr, clear_tier, apr_pool_cleanup_null);
    } catch (...) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     MC_LOGNO(00140) "cannot create the tier of verified cache entries");
    }
}

bool tier_takes(std::size_t bytes) {
    return g_tier != nullptr && mc::TierBody::footprint(bytes, 0) <= g_tier->budget();
}

mc::TierBody* tier_find(request_rec* r, std::string_view key, int min_level,
                        std::uint64_t max_window) {
    if (g_tier == nullptr) return nullptr;
    mc::TierBody* body = g_tier->find(key);
    if (body == nullptr) return nullptr;
    // An entry kept for a section with a lower MultiCompressCacheLevel (the same file at another
    // URL) is not final here: the store has, or gets, the stronger copy.
    if (body->level() < min_level || !body->fits_window(max_window)) {
        body->unref();
        return nullptr;
    }
    hold_for_request(r, body);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "hit in the child's tier");
    return body;
}

mc::TierBody* tier_keep(request_rec* r, std::string_view key, int level, int min_level,
                        std::uint64_t max_window, std::string_view body) {
    // An entry still waiting for its upgrade stays out: the upgraded one replaces it in the store
    // and enters here on its first hit.
    if (g_tier == nullptr || level < min_level ||
        mc::TierBody::footprint(body.size(), key.size()) > g_tier->budget()) {
        return nullptr;
    }
    mc::TierBody* kept = mc::TierBody::make(body, level, max_window);
    if (kept == nullptr) return nullptr;
    bool in_tier = false;
    count(mc::metrics::Event::kCacheLocalEvict, g_tier->put(key, kept, in_tier));
    set_cache_local_bytes(g_tier->bytes());
    hold_for_request(r, kept);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "kept in the child's tier (level %d, %" APR_SIZE_T_FMT
                  " bytes; the tier holds %" APR_SIZE_T_FMT " of %" APR_SIZE_T_FMT ")",
                  level, body.size(), g_tier->bytes(), g_tier->budget());
    return kept;
}

apr_bucket* tier_bucket(mc::TierBody* body, apr_bucket_alloc_t* list) {
    body->ref();
    return apr_bucket_heap_create(body->data(), body->size(), release_bytes, list);
}

}  // namespace mc::httpd
