// SPDX-License-Identifier: Apache-2.0
// The one lookup of the dictionary a request names: the child's cache, then the store.
#include "mc_dictionary_lookup.h"

#include <http_log.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "mc/accept_encoding.h"
#include "mc/headers.h"
#include "mc/last_parse.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_response.h"
#include "mc_shared.h"
#include "mc_site_dictionary.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

bool enabled(const mc::Config& cfg, mc::Coding c) {
    const auto codings = cfg.encodings();
    return std::find(codings.begin(), codings.end(), c) != codings.end();
}

// RFC 9842 §7 (security): browsers use no dictionary for cross-origin no-cors requests, whose
// responses are opaque to the page; neither does the server.
bool cross_origin_excluded(const request_rec* r) {
    const char* mode = apr_table_get(r->headers_in, "Sec-Fetch-Mode");
    const char* site = apr_table_get(r->headers_in, "Sec-Fetch-Site");
    if (mode == nullptr || site == nullptr || !mc::iequals(mc::trim_ows(mode), "no-cors"))
        return false;
    const std::string_view s = mc::trim_ows(site);
    return !mc::iequals(s, "same-origin") && !mc::iequals(s, "none");
}

SharedDictionary find_dictionary(request_rec* r, RequestState* st) {
    if (r->main != nullptr) return nullptr;
    const mc::Config& cfg = dir_config(r);
    if (!enabled(cfg, mc::Coding::kDcz)) return nullptr;
    const char* named = all_fields(r->pool, r->headers_in, "Available-Dictionary");
    const char* ae = apr_table_get(r->headers_in, "Accept-Encoding");
    if (named == nullptr || ae == nullptr) return nullptr;
    parse_accept(*st, ae);
    if (st->accept.explicit_weight(mc::Coding::kDcz) <= 0) return nullptr;
    // A browser names the same dictionary on every request of a page: each thread keeps its last.
    thread_local mc::LastParse<128, std::optional<mc::DictionaryHash>> t_last;
    const std::optional<mc::DictionaryHash> hash =
        t_last.of(named, [](std::string_view v) { return mc::parse_available_dictionary(v); });
    if (!hash) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "malformed Available-Dictionary ignored");
        count(mc::metrics::Event::kDictionaryUnknown);
        return nullptr;
    }
    if (cross_origin_excluded(r)) return nullptr;
    st->named = *hash;
    // A site dictionary of this virtual host is always held.
    if (SharedDictionary site = site_dictionary(r, *hash)) return site;
    const std::string_view origin = dictionary_origin(r);
    mc::DictionaryCache& cache = child_dictionaries();
    SharedDictionary d = cache.find(*hash, origin);
    if (!d && !cache.missed_lately(*hash, origin, r->request_time)) {
        // Not offered on this origin by this child: the fleet's store may say it was.
        d = fetch_dictionary(r, *hash, origin, cache.find(*hash));
        if (d) {
            cache.put(d, origin);
            note_dictionary_memory();
        } else {
            cache.note_miss(*hash, origin, r->request_time);
        }
    }
    if (!d) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "dictionary %s not held for %s",
                      mc::hash_hex(*hash).c_str(), std::string(origin).c_str());
        count(mc::metrics::Event::kDictionaryUnknown);
    }
    return d;
}

}  // namespace

std::string_view dictionary_origin(request_rec* r) {
    // Asked by the lookup and again by the learning filter of the same response.
    RequestState* st = request_state(r, true);
    if (st->origin.empty()) st->origin = server_identity(r);
    return st->origin;
}

void look_up_dictionary(request_rec* r, RequestState* st) {
    st->dictionary = find_dictionary(r, st);
}

std::shared_ptr<const mc::PreparedDictionary> prepared_dictionary(const SharedDictionary& dict,
                                                                  int level) {
    auto prepared = child_dictionaries().prepared(dict, level);
    note_dictionary_memory();
    return prepared;
}

}  // namespace mc::httpd
