// SPDX-License-Identifier: Apache-2.0
// MultiCompressCache's policy: fill after a miss, ask for the stronger copy (mc_cache.h).
#include "mc_cache.h"

#include <http_log.h>

#include <utility>

#include "mc_cache_entries.h"
#include "mc_cache_worker.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_request_state.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

void cache_store(request_rec* r, const std::string& key, mc::Coding coding, int level,
                 std::string_view body) {
    if (!cache_put(r->server, key, coding, file_of(r), level, body, r->pool)) return;
    count(mc::metrics::Event::kCacheStore);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "cache: stored %s at level %d (%" APR_SIZE_T_FMT " bytes)",
                  mc::coding_token(coding).data(), level, body.size());
    if (level < dir_config(r).cache_level_for(coding)) cache_request_upgrade(r, key, coding);
}

void cache_request_upgrade(request_rec* r, const std::string& key, mc::Coding coding) {
    const mc::Config& cfg = dir_config(r);
    UpgradeJob job;
    job.path = r->filename;
    job.key = key;
    job.coding = coding;
    job.level = cfg.cache_level_for(coding);
    job.max_entry = cfg.cache_max_entry_value();
    job.file = file_of(r);
    job.server = r->server;
    if (coding == mc::Coding::kDcz) {
        const RequestState* st = request_state(r);
        if (st != nullptr) job.dictionary = st->dictionary;
        if (!job.dictionary) return;
    }
    submit_upgrade(std::move(job));
}

}  // namespace mc::httpd
