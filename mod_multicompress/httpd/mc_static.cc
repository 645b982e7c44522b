// SPDX-License-Identifier: Apache-2.0
// The handler that sends a file compressed once (a sidecar or a cache entry) instead of letting
// the default handler send it to be compressed live.
#include "mc_static.h"

#include <apr_buckets.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>

#include <cstring>
#include <string>

#include "mc_brigade.h"
#include "mc_cache.h"
#include "mc_cache_entries.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_digest.h"
#include "mc_file_memo.h"
#include "mc_hit_tier.h"
#include "mc_log.h"
#include "mc_request_state.h"
#include "mc_response.h"
#include "mc_saving.h"
#include "mc_shared.h"
#include "mc_sidecar.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Validators describe the original file (its ETag, with the coding's suffix, and its
// Last-Modified), so a 304 works for sidecar, cached and live responses alike. Returns OK, or the
// status of a conditional request (304, 412).
int set_validators_and_headers(request_rec* r, const mc::Config& cfg, mc::Coding coding,
                               apr_off_t length, const char* source) {
    merge_vary(r);
    ap_update_mtime(r, r->finfo.mtime);
    ap_set_last_modified(r);
    ap_set_etag(r);
    const int cond = ap_meets_conditions(r);
    set_compressed_headers(r, coding, cfg);
    set_source(r, cfg, source);
    if (cond == OK) {
        mc::metrics::ResponseFacts facts;
        facts.coding = coding;
        facts.source = std::strcmp(source, "sidecar") == 0 ? mc::metrics::Source::kSidecar
                                                           : mc::metrics::Source::kCache;
        facts.bytes_in = static_cast<std::uint64_t>(r->finfo.size);
        facts.bytes_out = r->header_only ? 0 : static_cast<std::uint64_t>(length);
        set_response_facts(r, facts);
        request_state(r, true)->sent_encoded = true;
    }
    // Also on a 304, as the default handler does: mod_cache takes the length of the entry it
    // revalidates from the 304's Content-Length (without it, from the empty body: 0).
    ap_set_content_length(r, length);
    return cond;
}

// Ends the request as httpd's default handler does (server/core.c): a failed precondition is
// not returned as the handler's status but set in r->status and sent down the filter chain
// with an empty body, so mod_cache (which revalidates with the client's or its own
// conditions), mod_headers, mod_include and ErrorDocument see it as they see the default
// handler's. `bb` holds the body (empty for a precondition).
int send_brigade(request_rec* r, apr_bucket_brigade* bb) {
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(r->connection->bucket_alloc));
    const apr_status_t rv = ap_pass_brigade(r->output_filters, bb);
    apr_brigade_cleanup(bb);
    if (rv == APR_SUCCESS || r->status != HTTP_OK || r->connection->aborted) return OK;
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, rv, r, "sending a precompressed body failed");
    return AP_FILTER_ERROR;
}

int send_precondition(request_rec* r, int status) {
    r->status = status;
    return send_brigade(r, apr_brigade_create(r->pool, r->connection->bucket_alloc));
}

// The sidecar read whole, from its start, in one read() into a heap bucket, and kept in the
// child's tier for the next requests. nullptr when the file no longer has the size its stat said
// (it is being replaced), with `side.fd` back at its start.
apr_bucket* read_whole_sidecar(request_rec* r, const Sidecar& side) {
    const auto size = static_cast<apr_size_t>(side.finfo.size);
    apr_bucket_alloc_t* list = r->connection->bucket_alloc;
    // One read() of a byte more than the size: a regular file gives all it has up to the count,
    // so exactly `size` bytes is the whole file, as stat'ed.
    void* buf = apr_bucket_alloc(size + 1, list);
    apr_size_t got = size + 1;
    if (apr_file_read(side.fd, buf, &got) != APR_SUCCESS || got != size) {
        apr_bucket_free(buf);
        apr_off_t start = 0;  // for whoever reads it next from where it is (put_digests)
        apr_file_seek(side.fd, APR_SET, &start);
        return nullptr;
    }
    keep_sidecar(r, side, std::string_view(static_cast<const char*>(buf), size));
    return apr_bucket_heap_create(static_cast<const char*>(buf), size, apr_bucket_free, list);
}

void close_sidecar(const Sidecar& side) {
    if (side.fd != nullptr) apr_file_close(side.fd);
}

int send_sidecar(request_rec* r, const mc::Config& cfg, mc::Coding coding, const Sidecar& side) {
    // One this child kept (read whole before) was not opened at all; a small one is read first
    // (sidecar_read says why).
    const SidecarRead how = sidecar_read(r, side.finfo.size);
    apr_bucket* whole = nullptr;
    if (side.kept != nullptr) {
        whole = tier_bucket(side.kept, r->connection->bucket_alloc);
    } else if (how == SidecarRead::kFirst && (whole = read_whole_sidecar(r, side)) == nullptr) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "sidecar %s changed as it was read",
                      side.path);
        close_sidecar(side);
        return DECLINED;  // FILE is sent (compressed live) as without a sidecar
    }
    keep_digests_of_file(r);
    if (const int cond = set_validators_and_headers(r, cfg, coding, side.finfo.size, "sidecar");
        cond != OK) {
        if (whole != nullptr) apr_bucket_destroy(whole);
        close_sidecar(side);
        return send_precondition(r, cond);
    }
    // Should the file have changed size meanwhile, it goes as a file bucket, as before.
    if (whole == nullptr && how == SidecarRead::kForBody && !r->header_only) {
        whole = read_whole_sidecar(r, side);
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "sending sidecar %s (%s)", side.path,
                  side.kept != nullptr ? "kept by the child"
                  : whole != nullptr   ? "read whole"
                                       : "as a file");
    apr_bucket_brigade* bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    if (whole != nullptr) {
        const char* data = nullptr;
        apr_size_t len = 0;
        apr_bucket_read(whole, &data, &len, APR_BLOCK_READ);
        put_digests(r, std::string_view(data, len));
        close_sidecar(side);
        APR_BRIGADE_INSERT_TAIL(bb, whole);
        flush_if_small(bb, len);
    } else {
        put_digests(r, side.fd, side.finfo.size);
        insert_file_unmapped(bb, side.fd, side.finfo.size, r->pool);  // sendfile or read, no mmap
    }
    return send_brigade(r, bb);
}

// Whether the default handler could open FILE (it answers 403 when file permissions deny it):
// a cached body is never sent for a file the server may no longer read. Opened once per version of
// FILE in each child: the version's ctime is in the key, and a chmod, chown or ACL change sets it
// (a directory that no longer lets the server in fails the request's own stat first).
bool file_readable(request_rec* r) {
    static PerFileVersion<bool> readable;  // per child
    if (readable.find(r->filename, r->finfo)) return true;
    apr_file_t* fd = nullptr;
    if (apr_file_open(&fd, r->filename, APR_READ | APR_BINARY, 0, r->pool) != APR_SUCCESS)
        return false;
    apr_file_close(fd);
    return readable.remember(r->filename, r->finfo, true);
}

// DECLINED on a miss, after marking the request so the live response fills the entry.
int try_cache(request_rec* r, const mc::Config& cfg, mc::Coding coding, RequestState* st) {
    if (r->finfo.size > 8 * cfg.cache_max_entry_value()) return DECLINED;  // would not fit
    const std::string key = cache_key(r, coding);
    CachedBody hit;
    if (const Lookup found = cache_lookup(r, key, coding, hit); found != Lookup::kHit) {
        // The live response fills the entry, if the filter's decision is this coding (see
        // RequestState::fills_cache); with the store unavailable nothing is copied for it.
        if (found == Lookup::kMiss)
            st->plan.cache_key = apr_pstrmemdup(r->pool, key.data(), key.size());
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "cache miss");
        count(mc::metrics::Event::kCacheMiss);
        return DECLINED;
    }
    if (!file_readable(r)) return DECLINED;  // the default handler answers (403)
    count(mc::metrics::Event::kCacheHit);
    if (hit.level < cfg.cache_level_for(coding)) cache_request_upgrade(r, key, coding);
    keep_digests_of_file(r);
    const int cond =
        set_validators_and_headers(r, cfg, coding, static_cast<apr_off_t>(hit.size), "cache");
    if (cond != OK) return send_precondition(r, cond);
    put_digests(r, std::string_view(hit.data, hit.size));
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "cache hit (level %d, %" APR_SIZE_T_FMT " bytes)",
                  hit.level, hit.size);
    apr_bucket_brigade* bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(bb, cached_body_bucket(r, hit));  // the tier's copy, held in flight
    flush_if_small(bb, hit.size);
    return send_brigade(r, bb);
}

int serve(request_rec* r) {
    const mc::Config& cfg = dir_config(r);
    if (!cfg.static_on() && !cfg.cache_on()) return DECLINED;
    RequestState* st = request_state(r, false);
    if (st == nullptr || st->codings.empty()) return DECLINED;  // we would not compress it
    // Compress-once only where the response is the file, the same for every client (no SSI,
    // no mod_substitute, no filter we do not know between the handler and us).
    if (!response_is_the_file(r)) return DECLINED;

    mc::ResponseView view = view_of(r, content_encoding_of(r), r->finfo.size);
    // A deploy-time delta against the dictionary the request names is a dcz answer even when
    // this server does not hold that dictionary's bytes.
    const DeltaSidecarPath delta =
        cfg.static_on() && st->named ? delta_sidecar_there(r, *st) : DeltaSidecarPath{};
    if (delta.path != nullptr) view.dictionary_available = true;
    // The handler's plan: the coding it looks a sidecar or entry up for. The filter decides for
    // the live response from its final headers and fills the entry only for this coding.
    mc::Decision d = mc::decide(view, cfg, st->codings);
    if (d.coding == mc::Coding::kDcz && delta.path != nullptr) {
        const std::size_t held = st->dictionary ? st->dictionary->bytes.size() : 0;
        if (Sidecar side; find_delta_sidecar(r, *st->named, delta, held, side)) {
            return send_sidecar(r, cfg, d.coding, side);
        }
        // Not sendable: live dcz where the dictionary is held, else the normal codings.
        view.dictionary_available = st->dictionary != nullptr;
        d = mc::decide(view, cfg, st->codings);
    }
    if (d.coding == mc::Coding::kIdentity) return DECLINED;
    st->plan.coding = d.coding;
    if (cfg.static_on()) {
        if (Sidecar side; find_sidecar(r, d.coding, side)) {
            return send_sidecar(r, cfg, d.coding, side);
        }
    }
    // A body remembered not to shrink goes out unchanged: no store read for it.
    if (cfg.cache_on() && !remembered_no_saving(r, cfg)) return try_cache(r, cfg, d.coding, st);
    return DECLINED;
}

}  // namespace

int serve_precompressed(request_rec* r) noexcept {
    try {
        return serve(r);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00032) "static handler failed");
    }
    return DECLINED;
}

}  // namespace mc::httpd
