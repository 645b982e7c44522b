// SPDX-License-Identifier: Apache-2.0
// The filter table and mod_filter's provider list: which filter records offer which codings.
#include "mc_filter_names.h"

#include <ap_expr.h>
#include <apr_strings.h>
#include <http_log.h>

#include <array>
#include <cstring>

#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

constexpr mc::CodingSet kAll{mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli,
                             mc::Coding::kZstd, mc::Coding::kDcz};

struct CompressFilter {
    const char* name;
    mc::CodingSet codings;
};

// One row per filter name; the engine is the same for all.
constexpr std::array<CompressFilter, 4> kFilters{{
    {"DEFLATE", {mc::Coding::kGzip, mc::Coding::kDeflate}},
    {"BROTLI_COMPRESS", {mc::Coding::kBrotli}},
    {"ZSTD", {mc::Coding::kZstd, mc::Coding::kDcz}},  // dcz is zstd with a dictionary
    {"MULTICOMPRESS", kAll},
}};

// Set once in register_hooks, read-only afterwards.
Engine g_engine = nullptr;
std::array<const ap_filter_rec_t*, kFilters.size()> g_frecs{};

template <std::size_t I>
apr_status_t out_filter(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    return g_engine(f, bb, kFilters[I].codings);
}

constexpr std::array<ap_out_filter_func, kFilters.size()> kFuncs{&out_filter<0>, &out_filter<1>,
                                                                 &out_filter<2>, &out_filter<3>};

// mod_filter's provider record (AddOutputFilterByType and FilterProvider in httpd 2.4 attach
// filters through mod_filter's harness). It is private to modules/filters/mod_filter.c; this
// mirrors its 2.4 layout, check_mod_filter_layout() verifies it at startup, and we only act on a
// provider whose frec is one of our own filter records.
struct ModFilterProvider {
    ap_expr_info_t* expr;
    const char** types;
    ap_filter_rec_t* frec;
    ModFilterProvider* next;
};

// A harness has a handful of providers; a longer list is not the layout we know.
constexpr int kMaxProviders = 256;

const ModFilterProvider* providers_of(const ap_filter_rec_t* harness) {
    return reinterpret_cast<const ModFilterProvider*>(harness->providers);
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

void register_compress_filters(Engine engine) {
    g_engine = engine;
    for (std::size_t i = 0; i < kFilters.size(); ++i) {
        g_frecs[i] =
            ap_register_output_filter(kFilters[i].name, kFuncs[i], nullptr, AP_FTYPE_CONTENT_SET);
    }
}

mc::CodingSet codings_of(const ap_filter_rec_t* frec) {
    if (frec == nullptr) return {};
    const ap_out_filter_func fn = frec->filter_func.out_func;
    for (std::size_t i = 0; i < kFilters.size(); ++i) {
        if (fn == kFuncs[i]) return kFilters[i].codings;
    }
    return {};
}

mc::CodingSet codings_via_harness(request_rec* r, const ap_filter_rec_t* harness) {
    int n = 0;
    for (const auto* p = providers_of(harness); p != nullptr && n < kMaxProviders;
         p = p->next, ++n) {
        if (provider_matches(r, p)) return codings_of(p->frec);  // the first match wins
    }
    return {};
}

mc::CodingSet codings_in_harness(const ap_filter_rec_t* harness) {
    mc::CodingSet all;
    int n = 0;
    for (const auto* p = providers_of(harness); p != nullptr && n < kMaxProviders;
         p = p->next, ++n) {
        all = all | codings_of(p->frec);
    }
    return all;
}

bool harness_has_ours(const ap_filter_rec_t* harness) {
    return !codings_in_harness(harness).empty();
}

bool harness_keeps_body(request_rec* r, const ap_filter_rec_t* harness) {
    int n = 0;
    for (const auto* p = providers_of(harness); p != nullptr && n < kMaxProviders;
         p = p->next, ++n) {
        if (!codings_of(p->frec).empty()) {
            if (provider_matches(r, p)) return true;  // the first match wins: ours
        } else if (p->expr != nullptr || provider_matches(r, p)) {
            return false;
        }
    }
    return n < kMaxProviders;  // none matches: mod_filter passes the body on
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

const char* check_mod_filter_layout(apr_pool_t* p) {
    // AddOutputFilterByType NAME makes a harness "BYTYPE:NAME" whose providers name NAME's
    // record (mod_filter.c, add_filter). Every provider must be a registered filter record and
    // the list must end; the one for our NAME must be our record.
    for (std::size_t i = 0; i < kFilters.size(); ++i) {
        const char* harness_name = apr_pstrcat(p, "BYTYPE:", kFilters[i].name, nullptr);
        const ap_filter_rec_t* harness = ap_get_output_filter_handle(harness_name);
        if (harness == nullptr || harness->providers == nullptr) continue;
        bool ours = false;
        int n = 0;
        for (const auto* q = providers_of(harness); q != nullptr; q = q->next) {
            if (++n > kMaxProviders || q->frec == nullptr || q->frec->name == nullptr ||
                ap_get_output_filter_handle(q->frec->name) != q->frec) {
                return apr_psprintf(p,
                                    "mod_filter's provider list of %s is not the httpd 2.4 "
                                    "layout this module reads; refusing to start",
                                    harness_name);
            }
            ours = ours || q->frec == g_frecs[i];
        }
        if (!ours) {
            return apr_psprintf(p,
                                "mod_filter's harness %s does not name this module's %s "
                                "filter; refusing to start",
                                harness_name, kFilters[i].name);
        }
    }
    return nullptr;
}

int filter_names_post_config(apr_pool_t* /*pconf*/, apr_pool_t* /*plog*/, apr_pool_t* ptemp,
                             server_rec* s) noexcept {
    try {
        if (const char* err = check_mod_filter_layout(ptemp)) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, MC_LOGNO(00220) "%s", err);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    } catch (...) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

}  // namespace mc::httpd
