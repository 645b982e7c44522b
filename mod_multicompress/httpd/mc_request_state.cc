// SPDX-License-Identifier: Apache-2.0
// Where the per-request state lives: r->request_config, in r->pool (destroyed with it).
#include "mc_request_state.h"

#include <http_config.h>

#include <string_view>

#include "mc/last_parse.h"
#include "mc_module.h"
#include "mc_pool.h"

namespace mc::httpd {

void parse_accept(RequestState& st, const char* ae) {
    if (st.accept_header == ae) return;
    thread_local mc::LastParse<256, mc::AcceptEncoding> t_last;
    st.accept = t_last.of(ae, [](std::string_view v) { return mc::AcceptEncoding::parse(v); });
    st.accept_header = ae;
}

RequestState* request_state(request_rec* r, bool create) {
    auto* st =
        static_cast<RequestState*>(ap_get_module_config(r->request_config, &multicompress_module));
    if (st == nullptr && create) {
        st = pool_new<RequestState>(r->pool);
        ap_set_module_config(r->request_config, &multicompress_module, st);
    }
    return st;
}

const RequestState* request_state(const request_rec* r) {
    return static_cast<const RequestState*>(
        ap_get_module_config(r->request_config, &multicompress_module));
}

bool sent_encoded(const request_rec* r) {
    const RequestState* st = request_state(r);
    return st != nullptr && st->sent_encoded && r->status == HTTP_OK;
}

}  // namespace mc::httpd
