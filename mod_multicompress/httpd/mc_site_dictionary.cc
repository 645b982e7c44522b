// SPDX-License-Identifier: Apache-2.0
// Site dictionaries: read at startup, served at their URL, announced by Link, held for dcz.
#include "mc_site_dictionary.h"

#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_main.h>
#include <http_protocol.h>
#include <http_request.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "mc/headers.h"
#include "mc_directive_args.h"
#include "mc_directives.h"
#include "mc_log.h"
#include "mc_socache.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

struct SiteDictionary {
    std::string url;
    std::shared_ptr<const mc::DictionaryBytes> bytes;
    std::string match;
    std::string use_as_dictionary;  ///< the header value
    std::string link;               ///< the Link header value
    std::string etag;
    apr_time_t mtime = 0;
};

// Per virtual host, as the configuration declares them (a host without its own uses the main
// server's). Written while the configuration is read (single-threaded), read-only afterwards;
// a child keeps the generation it was forked with.
std::unordered_map<const server_rec*, std::vector<SiteDictionary>> g_sites;
bool g_sites_fresh = false;

apr_status_t forget_sites(void*) noexcept {
    g_sites.clear();
    g_sites_fresh = false;
    return APR_SUCCESS;
}

const std::vector<SiteDictionary>* sites_of(const server_rec* s) {
    auto it = g_sites.find(s);
    if (it == g_sites.end() && ap_server_conf != nullptr) it = g_sites.find(ap_server_conf);
    return it == g_sites.end() ? nullptr : &it->second;
}

// The dictionary file, read as root while the configuration is read. An error message or nullptr.
const char* read_dictionary(apr_pool_t* p, const char* path, std::string& out, apr_time_t& mtime) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return apr_psprintf(p, "cannot open %s: %s", path, std::strerror(errno));
    struct stat st {};
    const char* err = nullptr;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        err = apr_psprintf(p, "%s is not a regular file", path);
    } else if (st.st_size <= 0) {
        err = apr_psprintf(p, "%s is empty", path);
    } else if (static_cast<std::uint64_t>(st.st_size) > mc::kMaxDictionarySize) {
        err = apr_psprintf(p, "%s is larger than a dictionary may be (%" APR_SIZE_T_FMT " bytes)",
                           path, mc::kMaxDictionarySize);
    } else {
        out.resize(static_cast<std::size_t>(st.st_size));
        std::size_t got = 0;
        while (got < out.size()) {
            const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
            if (n <= 0) {
                err = apr_psprintf(p, "cannot read %s: %s", path,
                                   n < 0 ? std::strerror(errno) : "it shrank while read");
                break;
            }
            got += static_cast<std::size_t>(n);
        }
        mtime = apr_time_from_sec(st.st_mtime);
    }
    ::close(fd);
    return err;
}

}  // namespace

const char* set_site_dictionary(cmd_parms* cmd, void* /*mconfig*/, int argc,
                                char* const argv[]) noexcept {
    return directive::guarded(cmd, [&]() -> const char* {
        using directive::fail;
        if (argc < 3) return fail(cmd, "expects URL-PATH FILE match=PATTERN", argc ? argv[0] : "");
        SiteDictionary site;
        site.url = argv[0];
        if (site.url.empty() || site.url[0] != '/')
            return fail(cmd, "URL-PATH must start with /", argv[0]);
        std::string dests;
        std::string id;
        for (int i = 2; i < argc; ++i) {
            const std::string_view a = argv[i];
            mc::Status st = mc::Status::ok();
            if (a.starts_with("match=")) {
                site.match = directive::option_value(a, "match=");
                st = mc::check_dictionary_pattern(site.match);
            } else if (a.starts_with("dest=")) {
                const std::string_view d = directive::option_value(a, "dest=");
                st = mc::check_dictionary_dest(d);
                if (!dests.empty()) dests += ' ';
                dests += d;
            } else if (a.starts_with("id=") && id.empty()) {
                id = directive::option_value(a, "id=");
                st = mc::check_dictionary_id(id);
            } else {
                return fail(cmd, "expects match=PATTERN, dest=DESTINATION or one id=ID", argv[i]);
            }
            if (!st.is_ok()) return fail(cmd, st, argv[i]);
        }
        if (site.match.empty()) return fail(cmd, "needs match=PATTERN", argv[1]);
        const char* path = ap_server_root_relative(cmd->temp_pool, argv[1]);
        if (path == nullptr) return fail(cmd, "bad path", argv[1]);
        auto bytes = std::make_shared<mc::DictionaryBytes>();
        if (const char* err = read_dictionary(cmd->temp_pool, path, bytes->bytes, site.mtime)) {
            return fail(cmd, err, argv[1]);
        }
        bytes->hash = mc::sha256(std::as_bytes(std::span(bytes->bytes)));
        site.bytes = std::move(bytes);
        site.use_as_dictionary =
            mc::format_use_as_dictionary(mc::DictionaryOffer{site.match, dests, id});
        site.link = "<" + site.url + ">; rel=\"compression-dictionary\"";
        site.etag = "\"mcd-" + mc::hash_hex(site.bytes->hash, 16) + "\"";
        if (!g_sites_fresh) {
            // A restart reads the configuration again: start over with it.
            g_sites.clear();
            apr_pool_cleanup_register(cmd->pool, nullptr, forget_sites, apr_pool_cleanup_null);
            g_sites_fresh = true;
        }
        g_sites[cmd->server].push_back(std::move(site));
        note_cache_wanted(cmd);  // dictionaries a request names may also come from the store
        return nullptr;
    });
}

std::shared_ptr<const mc::DictionaryBytes> site_dictionary(const request_rec* r,
                                                           const mc::DictionaryHash& h) {
    if (const auto* sites = sites_of(r->server)) {
        for (const SiteDictionary& s : *sites) {
            if (s.bytes->hash == h) return s.bytes;
        }
    }
    return nullptr;
}

bool site_dictionary_covers(const request_rec* r, std::string_view path) {
    if (const auto* sites = sites_of(r->server)) {
        for (const SiteDictionary& s : *sites) {
            if (mc::pattern_matches(s.match, path)) return true;
        }
    }
    return false;
}

int serve_site_dictionary(request_rec* r) noexcept {
    try {
        const auto* sites = sites_of(r->server);
        if (sites == nullptr || r->main != nullptr || r->method_number != M_GET) return DECLINED;
        for (const SiteDictionary& s : *sites) {
            if (s.url != r->uri) continue;
            ap_set_content_type(r, "text/plain");
            apr_table_setn(r->headers_out, "Use-As-Dictionary", s.use_as_dictionary.c_str());
            // Its bytes are named by its hash: a long lifetime (a new dictionary takes a new URL).
            apr_table_setn(r->headers_out, "Cache-Control", "public, max-age=31536000");
            apr_table_setn(r->headers_out, "ETag", s.etag.c_str());
            ap_update_mtime(r, s.mtime);
            ap_set_last_modified(r);
            const auto size = static_cast<apr_off_t>(s.bytes->bytes.size());
            ap_set_content_length(r, size);
            apr_bucket_brigade* bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
            // A failed precondition goes down the chain as the default handler sends it.
            if (const int cond = ap_meets_conditions(r); cond != OK) {
                r->status = cond;
            } else {
                // The bytes stay for the child's life (the generation it was forked with).
                APR_BRIGADE_INSERT_TAIL(
                    bb, apr_bucket_immortal_create(s.bytes->bytes.data(), s.bytes->bytes.size(),
                                                   r->connection->bucket_alloc));
            }
            APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(r->connection->bucket_alloc));
            const apr_status_t rv = ap_pass_brigade(r->output_filters, bb);
            return rv == APR_SUCCESS || r->connection->aborted ? OK : AP_FILTER_ERROR;
        }
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00280) "site dictionary failed");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return DECLINED;
}

int announce_site_dictionary(request_rec* r) noexcept {
    try {
        const auto* sites = sites_of(r->server);
        if (sites == nullptr || r->main != nullptr || r->method_number != M_GET) return DECLINED;
        const char* path = r->parsed_uri.path != nullptr ? r->parsed_uri.path : r->uri;
        if (path == nullptr) return DECLINED;
        for (const SiteDictionary& s : *sites) {
            // err_headers_out: kept whatever the handler (a CGI, a proxied backend) sends.
            if (s.url != r->uri && mc::pattern_matches(s.match, path)) {
                apr_table_addn(r->err_headers_out, "Link", s.link.c_str());
            }
        }
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00281) "fixups failed");
    }
    return DECLINED;
}

}  // namespace mc::httpd
