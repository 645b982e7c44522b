// SPDX-License-Identifier: Apache-2.0
// Finding a sidecar (FILE.zst / FILE.br / FILE.gz) that may be sent instead of compressing FILE:
// httpd's own answer for its URL, freshness, permissions, and a window the client decodes.
#include "mc_sidecar.h"

#include <apr_file_io.h>
#include <apr_mmap.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <http_ssl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "mc/dcz_delta.h"
#include "mc/dictionary.h"
#include "mc/params.h"
#include "mc/zstd_frame.h"
#include "mc_brigade.h"
#include "mc_file_memo.h"
#include "mc_hit_tier.h"
#include "mc_keys.h"
#include "mc_log.h"
#include "mc_shared.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Warnings are logged once per version of a file.
class OncePerFile {
public:
    bool first_time(const char* path, const apr_finfo_t& fi) {
        return !seen_.find(path, fi) && seen_.remember(path, fi, true);
    }

private:
    PerFileVersion<bool> seen_;
};

OncePerFile& warned_files() {
    static OncePerFile once;  // per child: each process has its own copy
    return once;
}

// Whether every zstd frame of a version of a sidecar (after its first `skip` bytes) was found
// within a window: a version is read once per child, not on every request.
PerFileVersion<bool>& checked_frames() {
    static PerFileVersion<bool> verdicts;
    return verdicts;
}

// Sidecars this child has sent, by the sidecar's path and the version of FILE (not of the
// sidecar): for those the lstat that spares a file without a sidecar the cost of a subrequest is
// skipped, and the subrequest's own stat is the check (a sidecar gone or stale since is
// forgotten, and looked for with the lstat again).
PerFileVersion<bool>& sent_sidecars() {
    static PerFileVersion<bool> sent;
    return sent;
}

// Whether `path` (FILE plus a suffix) is worth the subrequest that checks it: this child has sent
// it for this version of FILE, or an lstat finds it. Most files have no sidecar, and the lstat
// spares them a subrequest.
enum class Presence : std::uint8_t { kAbsent, kSent, kFound };
Presence presence(request_rec* r, const char* path) {
    if (sent_sidecars().find(path, r->finfo)) return Presence::kSent;
    apr_finfo_t fi;
    return apr_stat(&fi, path, APR_FINFO_MIN | APR_FINFO_LINK, r->pool) == APR_SUCCESS
               ? Presence::kFound
               : Presence::kAbsent;
}

// RFC 9659: never send a zstd frame that needs more than the client's window (8 MiB for zstd;
// dcz: its dictionary's bound): every frame of the file, not only the first (`zstd --long` and
// concatenated files). The file is mapped and only its frame and block headers are read.
// The part of a frames_ok verdict's key after the path: |skip|window, the numbers as they are in
// memory (no printf on every hit).
using FramesKey = std::array<char, 1 + sizeof(apr_off_t) + sizeof(std::uint64_t)>;
FramesKey frames_key(apr_off_t skip, std::uint64_t max_window) {
    FramesKey what{'|'};
    std::memcpy(what.data() + 1, &skip, sizeof skip);
    std::memcpy(what.data() + 1 + sizeof skip, &max_window, sizeof max_window);
    return what;
}

bool frames_ok(request_rec* r, apr_file_t* fd, const apr_finfo_t& fi, const char* path,
               apr_off_t skip, std::uint64_t max_window) {
    const FramesKey what = frames_key(skip, max_window);
    const std::string_view key(what.data(), what.size());
    if (const auto known = checked_frames().find(path, fi, key)) return *known;
    apr_mmap_t* mm = nullptr;
    if (fi.size <= skip || apr_mmap_create(&mm, fd, 0, static_cast<apr_size_t>(fi.size),
                                           APR_MMAP_READ, r->pool) != APR_SUCCESS) {
        return false;  // not remembered: an error of this moment
    }
    const mc::Status st = mc::check_zstd_frames(
        {static_cast<const std::byte*>(mm->mm) + skip, static_cast<std::size_t>(fi.size - skip)},
        max_window);
    apr_mmap_delete(mm);
    return checked_frames().remember(path, fi, st.is_ok(), key);
}

// The sidecar lookup is a probe: a refusal is an answer, not an event. httpd logs its refusals
// ("Symbolic link not allowed", "client denied by server configuration") at error level, which
// for a probe would be one line for each request of the page; so during the lookup the
// subrequest logs only what is worse than an error (its outcome is our trace line). The
// subrequest starts with the parent's r->log, and each location walk may replace it by the
// section's (before translate_name and before post_perdir_config), so both hooks set it again:
// the directory walk (symlinks) runs after translate_name, the access checks after
// post_perdir_config.
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

// The access phases of server/request.c (ap_process_request_internal) for a subrequest whose
// merged per-dir configuration is its parent's, which httpd skips for it.
int check_access_again(request_rec* sub) {
    sub->user = nullptr;
    sub->ap_auth_type = nullptr;
    const int first = ap_run_access_checker(sub);
    if (ap_satisfies(sub) == SATISFY_ANY) {
        if (first == OK) return OK;
    } else if (first != OK) {
        return first;
    }
    int rv = ap_run_access_checker_ex(sub);
    if (rv == DECLINED || (rv == OK && ap_run_force_authn(sub) == OK)) {
        if ((rv = ap_run_check_user_id(sub)) != OK) return rv;
        if (sub->user == nullptr) return HTTP_INTERNAL_SERVER_ERROR;
        return ap_run_auth_checker(sub);
    }
    return rv;
}

// The sidecar is sent only when httpd itself would send that file, at its URL (the file's URL
// plus the suffix), to this client: a subrequest lookup (as mod_negotiation does for each
// variant) runs the directory, file and location walks (symlink Options, <Directory>, <Files>,
// <FilesMatch>, <Location>, .htaccess), the access, authentication and authorization checks,
// the type checker and the fixups; translate_name first (the lookup is of the sidecar's URL).
// False when it would not (or there is no fresh sidecar).
// `path` is FILE + `sfx`; `exists`: the caller's presence() said so already (and set
// out.sent_before).
bool lookup_sidecar(request_rec* r, const char* sfx, const char* path, Sidecar& out, bool exists) {
    if (!exists) {
        const Presence there = presence(r, path);
        if (there == Presence::kAbsent) {
            ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "no sidecar %s", path);
            return false;
        }
        out.sent_before = there == Presence::kSent;
    }
    // The sidecar's own URL, as a client would ask for it: translate_name (mod_rewrite, Alias,
    // AliasMatch, UserDir) must map it to exactly this file.
    const char* uri = apr_pstrcat(r->pool, ap_escape_uri(r->pool, r->uri), sfx, nullptr);
    request_rec* sub = nullptr;
    int access = OK;
    {
        const QuietProbe quiet(r);
        sub = ap_sub_req_lookup_uri(uri, r, nullptr);
        // httpd skipped authentication and authorization if the sidecar's merged per-dir
        // configuration is the page's own object; its rules may still read the URL or the
        // file name (Require expr), which differ here.
        if (sub->status == HTTP_OK && sub->per_dir_config == r->per_dir_config) {
            access = check_access_again(sub);
        }
    }
    const bool ok = sub->status == HTTP_OK && access == OK && sub->finfo.filetype == APR_REG &&
                    sub->filename != nullptr && std::strcmp(sub->filename, path) == 0 &&
                    default_handler_would_send(sub);
    if (!ok) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                      "not sending sidecar %s: httpd would not send it at its own URL %s "
                      "(status %d, access %d, file %s, handler %s)",
                      path, uri, sub->status, access,
                      sub->filename != nullptr ? sub->filename : "-",
                      sub->handler != nullptr ? sub->handler : "-");
        ap_destroy_sub_req(sub);
        sent_sidecars().forget(path, r->finfo);
        return false;
    }
    out.path = path;
    out.finfo = sub->finfo;  // the target's, when a symlink was allowed
    out.finfo.fname = path;
    out.finfo.name = nullptr;
    out.finfo.pool = r->pool;
    out.open_flags = default_handler_open_flags(sub);  // sendfile as EnableSendfile says there
    ap_destroy_sub_req(sub);
    if (out.finfo.mtime < r->finfo.mtime) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "stale sidecar %s", path);
        // Older only by the fraction of a second its mtime lost: a tool that copies the file's
        // mtime in whole seconds (brotli 1.0.9's -k) made it; said once per version of the file.
        if (out.finfo.mtime % APR_USEC_PER_SEC == 0 &&
            apr_time_sec(out.finfo.mtime) == apr_time_sec(r->finfo.mtime) &&
            warned_files().first_time(path, out.finfo)) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                          MC_LOGNO(00332) "sidecar %s is older than %s by less than a second "
                                          "(its mtime in whole seconds): compressing live; if it "
                                          "was made from this version, touch -r the file onto it",
                          path, r->filename);
        }
        sent_sidecars().forget(path, r->finfo);
        return false;
    }
    return true;
}

// The child's tier key of the version of the sidecar its lookup found: a NUL (a cache entry's key
// never starts with one), the path and its NUL, then device, inode, size, mtime and ctime as they
// are in memory. A rewrite of the file changes its ctime, a chmod too.
std::string_view tier_key(request_rec* r, const Sidecar& side) {
    const std::size_t n = std::strlen(side.path);
    const apr_finfo_t& fi = side.finfo;
    const std::size_t size = 2 + n + sizeof fi.device + sizeof fi.inode + sizeof fi.size +
                             sizeof fi.mtime + sizeof fi.ctime;
    auto* key = static_cast<char*>(apr_palloc(r->pool, size));
    char* out = key;
    *out++ = '\0';
    out = std::copy_n(side.path, n + 1, out);
    out = put_raw(out, fi.device);
    out = put_raw(out, fi.inode);
    out = put_raw(out, fi.size);
    out = put_raw(out, fi.mtime);
    put_raw(out, fi.ctime);
    return {key, size};
}

// The sidecar lookup_sidecar found, opened as the default handler would open it (file
// permissions: it would answer 403). False otherwise (an unreadable one warned about once).
bool open_sidecar(request_rec* r, Sidecar& side) {
    apr_file_t* fd = nullptr;
    // Opened as the default handler opens it at its own URL: sendfile as EnableSendfile says.
    if (const apr_status_t rv = apr_file_open(&fd, side.path, side.open_flags, 0, r->pool);
        rv != APR_SUCCESS) {
        if (warned_files().first_time(side.path, side.finfo)) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, rv, r,
                          MC_LOGNO(00030) "cannot open sidecar %s (compressing live; logged "
                                          "once per file)",
                          side.path);
        }
        return false;
    }
    side.fd = fd;
    return true;
}

// After lookup_sidecar: the bytes this child kept for this version of the sidecar when its checks
// for this request are known to pass (`checked`), else the file opened (open_sidecar).
bool kept_or_open(request_rec* r, Sidecar& side, bool checked) {
    if (checked && side.finfo.size > 0 &&
        sidecar_read(r, side.finfo.size) != SidecarRead::kAsFile &&
        (side.kept = tier_find(r, tier_key(r, side), 0, 0)) != nullptr) {
        return true;
    }
    return open_sidecar(r, side);
}

// Whether the client's bytes go through TLS: on this connection, or on the one an HTTP/2 stream
// runs over.
bool over_tls(conn_rec* c) {
    return ap_ssl_conn_is_ssl(c) != 0 ||
           (c->master != nullptr && ap_ssl_conn_is_ssl(c->master) != 0);
}

// Refuses a sidecar found: closes it, warns once per version of the file.
bool refuse(request_rec* r, Sidecar& side, const char* why) {
    if (warned_files().first_time(side.path, side.finfo)) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      MC_LOGNO(00031) "not serving %s: %s (logged once per file)", side.path, why);
    }
    if (side.fd != nullptr) apr_file_close(side.fd);
    side.fd = nullptr;
    return false;
}

// FILE's delta sidecar against `named`, if there (presence).
DeltaSidecarPath find_delta_path(request_rec* r, const mc::DictionaryHash& named) {
    // FILE + ".dcz-HEX16", made in one allocation: the suffix is the path's tail.
    const auto suffix = mc::delta_sidecar_suffix_chars(named);
    const std::size_t n = std::strlen(r->filename);
    auto* path = static_cast<char*>(apr_palloc(r->pool, n + suffix.size() + 1));
    std::memcpy(path, r->filename, n);
    std::memcpy(path + n, suffix.data(), suffix.size());
    path[n + suffix.size()] = '\0';
    const Presence there = presence(r, path);
    if (there == Presence::kAbsent) return {};
    DeltaSidecarPath out;
    out.sent_before = there == Presence::kSent;
    out.path = path;
    out.suffix = path + n;
    return out;
}

}  // namespace

bool find_sidecar(request_rec* r, mc::Coding coding, Sidecar& side) {
    const std::string_view suffix = mc::sidecar_suffix(coding);
    if (suffix.empty()) return false;
    const char* sfx = apr_pstrmemdup(r->pool, suffix.data(), suffix.size());
    if (!lookup_sidecar(r, sfx, apr_pstrcat(r->pool, r->filename, sfx, nullptr), side, false)) {
        return false;
    }
    // Every frame of a zstd one is checked once per version of it (frames_ok).
    constexpr std::uint64_t kWindow = std::uint64_t{1} << mc::kZstdMaxWindowLog;
    constexpr const char* kTooLarge = "its zstd window is over 8 MiB (RFC 9659)";
    std::optional<bool> checked = true;
    if (coding == mc::Coding::kZstd) {
        const FramesKey what = frames_key(0, kWindow);
        checked = checked_frames().find(side.path, side.finfo, {what.data(), what.size()});
    }
    if (checked == false) return refuse(r, side, kTooLarge);
    if (!kept_or_open(r, side, checked.has_value())) return false;
    if (!checked && !frames_ok(r, side.fd, side.finfo, side.path, 0, kWindow)) {
        return refuse(r, side, kTooLarge);
    }
    if (!side.sent_before) sent_sidecars().remember(side.path, r->finfo, true);
    return true;
}

const DeltaSidecarPath& delta_sidecar_there(request_rec* r, RequestState& st) {
    if (!st.delta) st.delta = find_delta_path(r, *st.named);
    return *st.delta;
}

bool find_delta_sidecar(request_rec* r, const mc::DictionaryHash& named,
                        const DeltaSidecarPath& there, std::size_t dictionary_size, Sidecar& side) {
    // delta_sidecar_there() found it: not looked for again.
    if (there.path == nullptr) return false;
    side.sent_before = there.sent_before;
    if (!lookup_sidecar(r, there.suffix, there.path, side, true)) return false;
    // A client keeps at most max(8 MiB, 1.25 x dictionary) of window; without the dictionary's
    // bytes the server only knows that 8 MiB is always accepted.
    const std::uint64_t window = dictionary_size > 0
                                     ? std::uint64_t{1} << mc::dcz_max_window_log(dictionary_size)
                                     : std::uint64_t{1} << mc::kZstdMaxWindowLog;
    // Both checks of a version of the sidecar are made once per child, as one verdict: for the
    // whole hash the request named (the file name holds 64 bits of it) and this window.
    std::array<char, 12 + std::tuple_size_v<mc::DictionaryHash> + sizeof window> what{};
    std::memcpy(what.data(), "|dcz-header|", 12);
    std::memcpy(what.data() + 12, named.data(), named.size());
    std::memcpy(what.data() + 12 + named.size(), &window, sizeof window);
    const std::string_view key(what.data(), what.size());
    std::optional<bool> sendable = checked_frames().find(side.path, side.finfo, key);
    if (sendable == false) return refuse(r, side, "its dcz header names another dictionary");
    if (!kept_or_open(r, side, sendable.has_value())) return false;
    if (!sendable) {
        // The name holds 64 bits of the hash; the dcz header holds all of it (RFC 9842 §4).
        std::array<std::byte, mc::kDczHeaderSize> head{};
        apr_size_t n = head.size();
        apr_off_t start = 0;
        const bool read = apr_file_read_full(side.fd, head.data(), n, &n) == APR_SUCCESS &&
                          apr_file_seek(side.fd, APR_SET, &start) == APR_SUCCESS;
        if (!read) return refuse(r, side, "its dcz header cannot be read");
        if (!mc::dcz_body_names(head, named)) {
            checked_frames().remember(side.path, side.finfo, false, key);
            return refuse(r, side, "its dcz header names another dictionary");
        }
        // Not remembered when false: the window is (frames_ok), a failure to map it is not.
        if (!frames_ok(r, side.fd, side.finfo, side.path,
                       static_cast<apr_off_t>(mc::kDczHeaderSize), window)) {
            return refuse(r, side, "its zstd frame needs a window its client may not keep");
        }
        sendable = checked_frames().remember(side.path, side.finfo, true, key);
        if (!*sendable) return refuse(r, side, "its dcz header names another dictionary");
    }
    if (!side.sent_before) sent_sidecars().remember(side.path, r->finfo, true);
    return true;
}

SidecarRead sidecar_read(const request_rec* r, apr_off_t size) {
    if (size > 0 && size < static_cast<apr_off_t>(APR_BUCKET_BUFF_SIZE)) return SidecarRead::kFirst;
    const bool whole = size <= static_cast<apr_off_t>(kReadWholeBytes) &&
                       (tier_takes(static_cast<std::size_t>(size)) || over_tls(r->connection));
    return whole ? SidecarRead::kForBody : SidecarRead::kAsFile;
}

void keep_sidecar(request_rec* r, const Sidecar& side, std::string_view bytes) {
    apr_finfo_t now;
    if (!tier_takes(bytes.size()) || side.fd == nullptr ||
        apr_file_info_get(&now, APR_FINFO_MIN | APR_FINFO_IDENT, side.fd) != APR_SUCCESS ||
        now.device != side.finfo.device || now.inode != side.finfo.inode ||
        now.size != side.finfo.size || now.mtime != side.finfo.mtime ||
        now.ctime != side.finfo.ctime || static_cast<apr_off_t>(bytes.size()) != now.size) {
        return;
    }
    tier_keep(r, tier_key(r, side), 0, 0, 0, bytes);
}

int quiet_sidecar_probe(request_rec* r) noexcept {
    if (r->main != nullptr && r->main == t_probing) r->log = &t_quiet;
    return DECLINED;
}

}  // namespace mc::httpd
