// SPDX-License-Identifier: Apache-2.0
// What may be shared between clients: the response is the file, and whose it is.
#include "mc_shared.h"

#include <apr_strings.h>
#include <http_log.h>
#include <http_protocol.h>
#include <util_filter.h>

#include <array>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "mc/headers.h"
#include "mc_filter_names.h"
#include "mc_harness.h"
#include "mc_keys.h"
#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Filters known to leave the body alone (names as httpd keeps them, lowercase): our internal
// ones, mod_headers (headers only), mod_cache (it saves or serves a whole response), mod_buffer
// (it only joins buckets), mod_session (a header), and httpd's own ap_rwrite buffer.
constexpr std::array<std::string_view, 15> kKeepsBody{
    "multicompress_304",
    "multicompress_dictionary",
    "multicompress_probe_sink",
    "fixup_headers_out",
    "fixup_headers_err",
    "cache",
    "cache_save",
    "cache_save_subreq",
    "cache_out",
    "cache_out_subreq",
    "cache_remove_url",
    "cache_invalidate",
    "buffer",
    "mod_session_out",
    "old_write",
};

bool known_to_keep_body(const ap_filter_rec_t* frec) {
    if (frec->name == nullptr) return false;
    const std::string_view name = frec->name;
    for (const std::string_view k : kKeepsBody) {
        if (name == k) return true;
    }
    return false;
}

// The last server identity a thread made, and what it was made of.
struct IdentityMemo {
    std::array<char, 16> scheme{};
    std::array<char, 256> name{};
    std::array<char, 16 + 256 + 16> id{};
    std::size_t scheme_len = 0, name_len = 0, id_len = 0;
    apr_port_t port = 0;
    bool valid = false;

    [[nodiscard]] bool holds(std::string_view sch, std::string_view nm, apr_port_t p) const {
        return valid && p == port && std::string_view(scheme.data(), scheme_len) == sch &&
               std::string_view(name.data(), name_len) == nm;
    }
    void keep(std::string_view sch, std::string_view nm, apr_port_t p, std::string_view made) {
        valid = sch.size() <= scheme.size() && nm.size() <= name.size() && made.size() <= id.size();
        if (!valid) return;  // longer than kept: made each time
        scheme_len = sch.copy(scheme.data(), scheme.size());
        name_len = nm.copy(name.data(), name.size());
        id_len = made.copy(id.data(), id.size());
        port = p;
    }
};
static_assert(std::is_trivially_destructible_v<IdentityMemo>);

}  // namespace

bool default_handler_would_send(const request_rec* r) {
    if (r->method_number != M_GET || r->finfo.filetype != APR_REG) return false;
    if (r->path_info != nullptr && *r->path_info != '\0') return false;
    // httpd names the handler after the content type when nothing else claimed the request.
    const char* h = r->handler;
    return h == nullptr || std::strcmp(h, "default-handler") == 0 ||
           (r->content_type != nullptr && std::strcmp(h, r->content_type) == 0);
}

bool chain_keeps_body(request_rec* r) {
    for (ap_filter_t* f = r->output_filters; f != nullptr; f = f->next) {
        const ap_filter_rec_t* frec = f->frec;
        if (frec->ftype >= AP_FTYPE_PROTOCOL) break;  // after every content filter
        if (!codings_of(frec).empty() || known_to_keep_body(frec)) continue;
        if (frec->providers != nullptr && harness_keeps_body(r, frec)) continue;
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                      "not compressing once: the %s filter may change the body",
                      frec->name != nullptr ? frec->name : "(unnamed)");
        return false;
    }
    return true;
}

bool response_is_the_file(request_rec* r) {
    return r->main == nullptr && default_handler_would_send(r) && chain_keeps_body(r);
}

std::string_view server_identity(const request_rec* r) {
    const server_rec* s = r->server;
    apr_port_t port = s->port;
    if (port == 0 && s->addrs != nullptr) port = s->addrs->host_port;
    if (port == 0 && r->connection->local_addr != nullptr) port = r->connection->local_addr->port;
    const std::string_view name = s->server_hostname != nullptr ? s->server_hostname : "";
    const std::string_view scheme = ap_http_scheme(r);
    // Made on every response that offers or names a dictionary or is a cache hit, mostly for
    // the same server: each thread keeps its last one (plain arrays: a thread_local with a
    // destructor would keep the module loaded across a restart).
    thread_local IdentityMemo t_last{};
    // Copied into r->pool: a pool allocation, where a std::string of a usual identity (longer
    // than its inline buffer) would be a malloc and a free.
    const auto in_pool = [r](std::string_view id) -> std::string_view {
        return {apr_pstrmemdup(r->pool, id.data(), id.size()), id.size()};
    };
    if (t_last.holds(scheme, name, port)) return in_pool({t_last.id.data(), t_last.id_len});
    std::string id;
    id.reserve(scheme.size() + name.size() + 9);
    id.append(scheme).append("://");
    id.append(mc::lowercase(name));
    append_decimal(id, ':', port);
    t_last.keep(scheme, name, port, id);
    return in_pool(id);
}

}  // namespace mc::httpd
