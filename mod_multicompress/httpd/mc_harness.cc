// SPDX-License-Identifier: Apache-2.0
// mod_filter's provider list, mirrored and checked: which of our codings a harness dispatches to.
#include "mc_harness.h"

#include <ap_expr.h>
#include <ap_mmn.h>
#include <http_config.h>
#include <http_log.h>

#include <atomic>
#include <cstring>

#include "mc_filter_names.h"
#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// mod_filter's provider record (struct ap_filter_provider_t in modules/filters/mod_filter.c,
// httpd 2.4), private to it: AddOutputFilterByType ("BYTYPE:NAME" harnesses) and
// FilterDeclare/FilterProvider (harnesses of any name) both make these. This is the only mirror
// of it; it is read only through checked_providers().
struct ModFilterProvider {
    ap_expr_info_t* expr;
    const char** types;
    ap_filter_rec_t* frec;
    ModFilterProvider* next;
};

// A harness has a handful of providers; a longer list is not the layout we know.
constexpr int kMaxProviders = 256;

std::atomic<bool> g_layout_warned{false};

// The harness's provider list if it is the layout above: a bounded list whose records each name a
// registered filter (mod_filter's add_filter looks every provider up with
// ap_get_output_filter_handle) and dispatch by exactly one of an expression or a list of types.
// nullptr with `ok` false otherwise (logged once per process): the harness is then unknown.
const ModFilterProvider* checked_providers(request_rec* r, const ap_filter_rec_t* harness,
                                           bool& ok) {
    const auto* first = reinterpret_cast<const ModFilterProvider*>(harness->providers);
    int n = 0;
    ok = true;
    for (const auto* p = first; p != nullptr && ok; p = p->next) {
        // Our own records are known by address: no lookup by name on every response.
        ok =
            ++n <= kMaxProviders && p->frec != nullptr &&
            (is_compress_filter_record(p->frec) ||
             (p->frec->name != nullptr && ap_get_output_filter_handle(p->frec->name) == p->frec)) &&
            (p->expr == nullptr) != (p->types == nullptr);
    }
    if (ok) return first;
    if (!g_layout_warned.exchange(true)) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      MC_LOGNO(00221) "mod_filter's provider list of %s is not the httpd 2.4 "
                                      "layout this module reads: responses through it are not "
                                      "compressed by us through it, nor compressed once",
                      harness->name != nullptr ? harness->name : "(unnamed)");
    }
    return nullptr;
}

// Whether mod_filter would dispatch `r` to provider `p` (its filter_lookup, done early).
bool provider_matches(request_rec* r, const ModFilterProvider* p) {
    if (p->expr != nullptr) {
        const char* err = nullptr;
        return ap_expr_exec(r, p->expr, &err) > 0 && err == nullptr;
    }
    if (p->types == nullptr || r->content_type == nullptr) return false;
    const std::size_t len = std::strcspn(r->content_type, "; \t");
    for (const char** type = p->types; *type != nullptr; ++type) {
        if (std::strncmp(*type, r->content_type, len) == 0 && (*type)[len] == '\0') return true;
    }
    return false;
}

}  // namespace

mc::CodingSet codings_via_harness(request_rec* r, const ap_filter_rec_t* harness) {
    bool ok = false;
    for (const auto* p = checked_providers(r, harness, ok); p != nullptr; p = p->next) {
        if (provider_matches(r, p)) return codings_of(p->frec);  // the first match wins
    }
    return {};
}

mc::CodingSet codings_in_harness(request_rec* r, const ap_filter_rec_t* harness) {
    mc::CodingSet all;
    bool ok = false;
    for (const auto* p = checked_providers(r, harness, ok); p != nullptr; p = p->next) {
        all = all | codings_of(p->frec);
    }
    return all;
}

bool harness_has_ours(request_rec* r, const ap_filter_rec_t* harness) {
    return !codings_in_harness(r, harness).empty();
}

bool harness_keeps_body(request_rec* r, const ap_filter_rec_t* harness) {
    bool ok = false;
    for (const auto* p = checked_providers(r, harness, ok); p != nullptr; p = p->next) {
        if (!codings_of(p->frec).empty()) {
            if (provider_matches(r, p)) return true;  // the first match wins: ours
        } else if (p->expr != nullptr || provider_matches(r, p)) {
            return false;
        }
    }
    return ok;  // none matches: mod_filter passes the body on (unknown layout: it may not)
}

mc::CodingSet codings_on(request_rec* r, const ap_filter_t* g) {
    const mc::CodingSet direct = codings_of(g->frec);
    if (!direct.empty()) return direct;
    // mod_filter's harness only dispatches 200 responses.
    if (g->frec->providers == nullptr || r->status != HTTP_OK) return {};
    return codings_via_harness(r, g->frec);
}

mc::CodingSet absorb_sibling_filters(ap_filter_t* f, mc::CodingSet own) {
    mc::CodingSet all = own;
    for (ap_filter_t* g = f->next; g != nullptr && g->r == f->r;) {
        ap_filter_t* const next = g->next;
        const mc::CodingSet theirs = codings_on(f->r, g);
        if (!theirs.empty()) {
            all = all | theirs;
            ap_remove_output_filter(g);
        }
        g = next;
    }
    return all;
}

int harness_post_config(apr_pool_t* /*pconf*/, apr_pool_t* /*plog*/, apr_pool_t* /*ptemp*/,
                        server_rec* s) noexcept {
    g_layout_warned = false;
    const module* m = ap_find_linked_module("mod_filter.c");
    if (m == nullptr || m->version == MODULE_MAGIC_NUMBER_MAJOR) return OK;
    ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                 MC_LOGNO(00220) "mod_filter was built for module ABI %d, not httpd 2.4's %d "
                                 "whose provider layout this module reads; refusing to start",
                 m->version, MODULE_MAGIC_NUMBER_MAJOR);
    return HTTP_INTERNAL_SERVER_ERROR;
}

}  // namespace mc::httpd
