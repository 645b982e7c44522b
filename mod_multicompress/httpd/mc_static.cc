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
#include <mutex>
#include <string>
#include <unordered_set>

#include "mc/zstd_frame.h"
#include "mc/params.h"
#include "mc_cache.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_digest.h"
#include "mc_log.h"
#include "mc_response.h"
#include "mc_saving.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Whether httpd's default handler would send a file's bytes: no other handler claimed it
// (AddHandler, SetHandler, ...). httpd names the handler after the content type when nothing
// else claimed the request.
bool default_handler_would_send(const request_rec* r) {
    const char* h = r->handler;
    return h == nullptr || std::strcmp(h, "default-handler") == 0 ||
           (r->content_type != nullptr && std::strcmp(h, r->content_type) == 0);
}

// Whether the default handler would serve this request as a plain file.
bool is_static_file(const request_rec* r) {
    if (r->main != nullptr || r->method_number != M_GET || r->finfo.filetype != APR_REG)
        return false;
    if (r->path_info != nullptr && *r->path_info != '\0') return false;
    return default_handler_would_send(r);
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

// Warnings about a file (a sidecar the server cannot open, or one it will not send) are logged
// once per child for each version of the file (device, inode, size, mtime, ctime): a busy server
// would otherwise log the same line for every request of the page. Bounded: when the set is
// full it starts over, so at worst a file is reported again.
class OncePerFile {
public:
    bool first_time(const char* path, const apr_finfo_t& fi) {
        std::string key = std::string(path) + '\0' + std::to_string(fi.device) + ':' +
                          std::to_string(fi.inode) + ':' + std::to_string(fi.size) + ':' +
                          std::to_string(fi.mtime) + ':' + std::to_string(fi.ctime);
        const std::lock_guard<std::mutex> lock(mu_);
        if (seen_.size() >= kMax && seen_.count(key) == 0) seen_.clear();
        return seen_.insert(std::move(key)).second;
    }

private:
    static constexpr std::size_t kMax = 1024;
    std::mutex mu_;
    std::unordered_set<std::string> seen_;
};

OncePerFile& warned_files() {
    static OncePerFile once;  // per child: each process has its own copy
    return once;
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
    if (cond == OK) {
        mc::metrics::ResponseFacts facts;
        facts.coding = coding;
        facts.source = std::strcmp(source, "sidecar") == 0 ? mc::metrics::Source::kSidecar
                                                           : mc::metrics::Source::kCache;
        facts.bytes_in = static_cast<std::uint64_t>(r->finfo.size);
        facts.bytes_out = r->header_only ? 0 : static_cast<std::uint64_t>(length);
        set_response_facts(r, facts);
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

// The sidecar lookup is a probe: a refusal is an answer, not an event. httpd logs its refusals
// ("Symbolic link not allowed", "client denied by server configuration") at error level, which
// for a probe would be one line for each request of the page; so during the lookup the
// subrequest logs only what is worse than an error (its outcome is our trace line). The
// subrequest starts with the parent's r->log (the directory walk logs with it), and the location
// walk replaces it by the section's, so post_perdir_config sets it again.
thread_local const request_rec* t_probing = nullptr;  // the main request during its lookup
thread_local ap_logconf t_quiet{};

class QuietProbe {
public:
    explicit QuietProbe(request_rec* r) : r_(r), saved_(r->log) {
        const ap_logconf* cur = r->log != nullptr ? r->log : &r->server->log;
        t_quiet.module_levels = nullptr;  // the same level for every module
        t_quiet.level = cur->level < APLOG_CRIT ? cur->level : APLOG_CRIT;
        t_probing = r;
        r->log = &t_quiet;
    }
    ~QuietProbe() {
        r_->log = saved_;
        t_probing = nullptr;
    }
    QuietProbe(const QuietProbe&) = delete;
    QuietProbe& operator=(const QuietProbe&) = delete;

private:
    request_rec* r_;
    const ap_logconf* saved_;
};

// What a lookup of the sidecar as httpd would serve it at its own URL found.
struct Sidecar {
    const char* path = nullptr;
    apr_finfo_t finfo{};
};

// The sidecar is sent only when httpd itself would send that file, at its URL (the file's URL
// plus the suffix), to this client: a subrequest lookup (as mod_negotiation does for each
// variant) runs the directory, file and location walks (symlink Options, <Directory>, <Files>,
// <FilesMatch>, <Location>, .htaccess), the access, authentication and authorization checks,
// the type checker and the fixups. False when it would not (or there is no fresh sidecar).
bool lookup_sidecar(request_rec* r, std::string_view suffix, Sidecar& out) {
    const char* path = apr_pstrcat(r->pool, r->filename, std::string(suffix).c_str(), nullptr);
    // Most files have no sidecar: an lstat says so without the cost of a subrequest.
    apr_finfo_t pre;
    if (apr_stat(&pre, path, APR_FINFO_MIN | APR_FINFO_LINK, r->pool) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "no sidecar %s", path);
        return false;
    }
    const char* slash = std::strrchr(path, '/');
    const char* name = slash != nullptr ? slash + 1 : path;
    request_rec* sub = nullptr;
    {
        const QuietProbe quiet(r);
        sub = ap_sub_req_lookup_file(name, r, nullptr);
    }
    const bool ok = sub->status == HTTP_OK && sub->finfo.filetype == APR_REG &&
                    sub->filename != nullptr && std::strcmp(sub->filename, path) == 0 &&
                    (sub->path_info == nullptr || *sub->path_info == '\0') &&
                    default_handler_would_send(sub);
    if (!ok) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                      "not sending sidecar %s: httpd would not send it at its own URL "
                      "(status %d, handler %s)",
                      path, sub->status, sub->handler != nullptr ? sub->handler : "-");
        ap_destroy_sub_req(sub);
        return false;
    }
    out.path = path;
    out.finfo = sub->finfo;  // the target's, when a symlink was allowed
    out.finfo.fname = path;
    out.finfo.name = nullptr;
    out.finfo.pool = r->pool;
    ap_destroy_sub_req(sub);
    if (out.finfo.mtime < r->finfo.mtime) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "stale sidecar %s", path);
        return false;
    }
    return true;
}

// DECLINED when there is no fresh, acceptable sidecar.
int try_sidecar(request_rec* r, const mc::Config& cfg, mc::Coding coding) {
    const std::string_view suffix = mc::sidecar_suffix(coding);
    if (suffix.empty()) return DECLINED;
    Sidecar side;
    if (!lookup_sidecar(r, suffix, side)) return DECLINED;
    const char* path = side.path;
    apr_file_t* fd = nullptr;
    // The default handler's open: file permissions (it would answer 403).
    if (const apr_status_t rv =
            apr_file_open(&fd, path, APR_READ | APR_BINARY | APR_SENDFILE_ENABLED, 0, r->pool);
        rv != APR_SUCCESS) {
        if (warned_files().first_time(path, side.finfo)) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, rv, r,
                          MC_LOGNO(00030) "cannot open sidecar %s (compressing live; logged "
                                          "once per file)",
                          path);
        }
        return DECLINED;
    }
    if (coding == mc::Coding::kZstd && !zstd_window_ok(fd)) {
        if (warned_files().first_time(path, side.finfo)) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                          MC_LOGNO(00031) "not serving %s: its zstd window is over 8 MiB (RFC "
                                          "9659; logged once per file)",
                          path);
        }
        apr_file_close(fd);
        return DECLINED;
    }
    keep_digests_of_file(r);
    if (const int cond = set_validators_and_headers(r, cfg, coding, side.finfo.size, "sidecar");
        cond != OK) {
        apr_file_close(fd);
        return send_precondition(r, cond);
    }
    put_digests(r, fd, side.finfo.size);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "sending sidecar %s", path);
    apr_bucket_brigade* bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    apr_brigade_insert_file(bb, fd, 0, side.finfo.size, r->pool);
    return send_brigade(r, bb);
}

// Whether the default handler could open FILE (it answers 403 when file permissions deny it):
// a cached body is never sent for a file the server may no longer read.
bool file_readable(request_rec* r) {
    apr_file_t* fd = nullptr;
    if (apr_file_open(&fd, r->filename, APR_READ | APR_BINARY, 0, r->pool) != APR_SUCCESS)
        return false;
    apr_file_close(fd);
    return true;
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
    // The handler's plan: the coding it looks a sidecar or entry up for. The filter decides for
    // the live response from its final headers and fills the entry only for this coding.
    const mc::Decision d = mc::decide(view, cfg, st->codings);
    if (d.coding == mc::Coding::kIdentity) return DECLINED;
    st->plan.coding = d.coding;
    if (cfg.static_on()) {
        if (const int rv = try_sidecar(r, cfg, d.coding); rv != DECLINED) return rv;
    }
    // A body remembered not to shrink goes out unchanged: no store read for it.
    if (cfg.cache_on() && !remembered_no_saving(r, cfg)) return try_cache(r, cfg, d.coding, st);
    return DECLINED;
}

}  // namespace

int quiet_sidecar_probe(request_rec* r) noexcept {
    if (r->main != nullptr && r->main == t_probing) r->log = &t_quiet;
    return DECLINED;
}

int serve_precompressed(request_rec* r) noexcept {
    try {
        return serve(r);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00032) "static handler failed");
    }
    return DECLINED;
}

}  // namespace mc::httpd
