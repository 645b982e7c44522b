// SPDX-License-Identifier: Apache-2.0
// Where the per-request state lives: r->request_config, in r->pool.
#include "mc_request_state.h"

#include <http_config.h>

#include <new>

#include "mc_config.h"

namespace mc::httpd {

RequestState* request_state(request_rec* r, bool create) {
    auto* st =
        static_cast<RequestState*>(ap_get_module_config(r->request_config, &multicompress_module));
    if (st == nullptr && create) {
        st = new (apr_pcalloc(r->pool, sizeof(RequestState))) RequestState();
        ap_set_module_config(r->request_config, &multicompress_module, st);
    }
    return st;
}

}  // namespace mc::httpd
