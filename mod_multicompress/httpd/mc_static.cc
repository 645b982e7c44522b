// SPDX-License-Identifier: Apache-2.0
// Sidecar files: FILE.zst / FILE.br / FILE.gz next to FILE, sent instead of compressing FILE.
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

#include "mc/zstd_frame.h"
#include "mc/params.h"
#include "mc_cache.h"
#include "mc_config.h"
#include "mc_log.h"
#include "mc_response.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Whether the default handler would serve this request as a plain file.
bool is_static_file(const request_rec* r) {
    if (r->main != nullptr || r->method_number != M_GET || r->finfo.filetype != APR_REG)
        return false;
    if (r->path_info != nullptr && *r->path_info != '\0') return false;
    // httpd names the handler after the content type when nothing else claimed the request.
    const char* h = r->handler;
    return h == nullptr || std::strcmp(h, "default-handler") == 0 ||
           (r->content_type != nullptr && std::strcmp(h, r->content_type) == 0);
}

// RFC 9659: never send a zstd frame that needs more than an 8 MiB window.
bool zstd_window_ok(apr_file_t* fd) {
    std::byte head[mc::kZstdFrameHeaderMax];
    apr_size_t n = sizeof head;
    if (apr_file_read(fd, head, &n) != APR_SUCCESS) return false;
    apr_off_t start = 0;
    if (apr_file_seek(fd, APR_SET, &start) != APR_SUCCESS) return false;
    const auto window = mc::zstd_frame_window({head, n});
    return window.is_ok() && window.value() <= (std::uint64_t{1} << mc::kZstdMaxWindowLog);
}

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
    if (cond == OK) ap_set_content_length(r, length);
    return cond;
}

int send_brigade(request_rec* r, apr_bucket_brigade* bb) {
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(r->connection->bucket_alloc));
    const apr_status_t rv = ap_pass_brigade(r->output_filters, bb);
    if (rv != APR_SUCCESS && rv != AP_FILTER_ERROR) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, rv, r, "sending a precompressed body failed");
        return r->connection->aborted ? OK : HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

// DECLINED when there is no fresh, acceptable sidecar.
int try_sidecar(request_rec* r, const mc::Config& cfg, mc::Coding coding) {
    const std::string_view suffix = mc::sidecar_suffix(coding);
    if (suffix.empty()) return DECLINED;
    const char* path = apr_pstrcat(r->pool, r->filename, std::string(suffix).c_str(), nullptr);
    apr_finfo_t side;
    // Without FollowSymLinks a symlinked sidecar is not followed (apr_stat with APR_FINFO_LINK
    // reports the link itself, which is not a regular file).
    const bool follow = (ap_allow_options(r) & (OPT_SYM_LINKS | OPT_SYM_OWNER)) != 0;
    const apr_int32_t wanted = APR_FINFO_MIN | (follow ? 0 : APR_FINFO_LINK);
    if (apr_stat(&side, path, wanted, r->pool) != APR_SUCCESS || side.filetype != APR_REG ||
        side.mtime < r->finfo.mtime) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "no fresh sidecar %s", path);
        return DECLINED;
    }
    apr_file_t* fd = nullptr;
    if (apr_file_open(&fd, path, APR_READ | APR_BINARY | APR_SENDFILE_ENABLED, 0, r->pool) !=
        APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, MC_LOGNO(00030) "cannot open sidecar %s",
                      path);
        return DECLINED;
    }
    if (coding == mc::Coding::kZstd && !zstd_window_ok(fd)) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      MC_LOGNO(00031) "not serving %s: its zstd window is over 8 MiB (RFC 9659)",
                      path);
        apr_file_close(fd);
        return DECLINED;
    }
    if (const int cond = set_validators_and_headers(r, cfg, coding, side.size, "sidecar");
        cond != OK) {
        apr_file_close(fd);
        return cond;
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "sending sidecar %s", path);
    apr_bucket_brigade* bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    apr_brigade_insert_file(bb, fd, 0, side.size, r->pool);
    return send_brigade(r, bb);
}

// DECLINED on a miss, after marking the request so the live response fills the entry.
int try_cache(request_rec* r, const mc::Config& cfg, mc::Coding coding, RequestState* st) {
    if (r->finfo.size > 8 * cfg.cache_max_entry_value()) return DECLINED;  // would not fit
    const std::string key = cache_key(r, coding);
    CachedBody hit;
    if (!cache_lookup(r, key, coding, hit)) {
        st->cache_key = apr_pstrmemdup(r->pool, key.data(), key.size());
        st->cache_coding = coding;
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "cache miss");
        return DECLINED;
    }
    if (hit.level < cfg.cache_level_for(coding)) cache_request_upgrade(r, key, coding);
    const int cond =
        set_validators_and_headers(r, cfg, coding, static_cast<apr_off_t>(hit.size), "cache");
    if (cond != OK) return cond;
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "cache hit (level %d, %" APR_SIZE_T_FMT " bytes)",
                  hit.level, hit.size);
    apr_bucket_brigade* bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(
        bb, apr_bucket_pool_create(hit.data, hit.size, r->pool, r->connection->bucket_alloc));
    return send_brigade(r, bb);
}

int serve(request_rec* r) {
    const mc::Config& cfg = dir_config(r);
    if ((!cfg.static_on() && !cfg.cache_on()) || !is_static_file(r)) return DECLINED;
    RequestState* st = request_state(r, false);
    if (st == nullptr || st->codings.empty()) return DECLINED;  // we would not compress it

    const mc::ResponseView view = view_of(r, content_encoding_of(r), r->finfo.size);
    const mc::Decision d = mc::decide(view, cfg, st->codings);
    if (d.coding == mc::Coding::kIdentity) return DECLINED;
    if (cfg.static_on()) {
        if (const int rv = try_sidecar(r, cfg, d.coding); rv != DECLINED) return rv;
    }
    if (cfg.cache_on()) return try_cache(r, cfg, d.coding, st);
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
