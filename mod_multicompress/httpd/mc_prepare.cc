// SPDX-License-Identifier: Apache-2.0
// The insert_filter hook that prepares a request's state before anything decides.
#include "mc_prepare.h"

#include <http_log.h>
#include <util_filter.h>

#include <array>

#include "mc_dictionary_lookup.h"
#include "mc_harness.h"
#include "mc_log.h"
#include "mc_not_modified.h"
#include "mc_request_state.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

void prepare_request(request_rec* r) noexcept {
    // The default handler sends its 304 through the chain, but mod_filter's harness (which runs
    // AddOutputFilterByType) passes non-200 responses by untouched. So remember which of our
    // codings are on this response and add a small filter that only fixes up a 304's headers.
    try {
        if (r->main != nullptr) return;
        mc::CodingSet on_response;
        std::array<const ap_filter_rec_t*, RequestState::kMaxHarnesses> harnesses{};
        std::size_t n_harnesses = 0;
        for (ap_filter_t* f = r->output_filters; f != nullptr; f = f->next) {
            if (f->r != r) continue;
            on_response = on_response | codings_on(r, f);
            // A handler may set the content type only later (CGI): keep the harnesses to
            // evaluate their providers when a 304 goes out.
            if (f->frec->providers != nullptr && n_harnesses < harnesses.size() &&
                harness_has_ours(r, f->frec)) {
                harnesses[n_harnesses++] = f->frec;
            }
        }
        if (on_response.empty() && n_harnesses == 0) return;
        RequestState* st = request_state(r, true);
        st->codings = on_response;
        st->harnesses = harnesses;
        st->n_harnesses = n_harnesses;
        // Before any decision (the If-None-Match rewrite below is the first): the dictionary the
        // request names, once; everything after reads st->dictionary.
        look_up_dictionary(r, st);
        add_not_modified_filter(r);
        mc::CodingSet possible = on_response;
        for (std::size_t i = 0; i < n_harnesses; ++i) {
            possible = possible | codings_in_harness(r, harnesses[i]);
        }
        rewrite_if_none_match(r, st, possible);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00007) "insert_filter failed");
    }
}

}  // namespace mc::httpd
