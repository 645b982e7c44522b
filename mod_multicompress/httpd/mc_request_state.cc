// SPDX-License-Identifier: Apache-2.0
// Where the per-request state lives: r->request_config, in r->pool (destroyed with it).
#include "mc_request_state.h"

#include <http_config.h>

#include <array>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "mc_module.h"
#include "mc_pool.h"

namespace mc::httpd {
namespace {

// The last Accept-Encoding value a thread parsed, and its parse (plain arrays and a trivially
// destructible parse: a thread_local with a destructor would pin the module across a restart).
struct AcceptMemo {
    std::array<char, 256> text{};
    std::size_t len = 0;
    mc::AcceptEncoding parsed;
    bool valid = false;
};
static_assert(std::is_trivially_destructible_v<AcceptMemo>);

}  // namespace

void parse_accept(RequestState& st, const char* ae) {
    if (st.accept_header == ae) return;
    thread_local AcceptMemo t_last{};
    const std::string_view value(ae);
    if (!t_last.valid || std::string_view(t_last.text.data(), t_last.len) != value) {
        t_last.parsed = mc::AcceptEncoding::parse(value);
        t_last.valid = value.size() <= t_last.text.size();
        t_last.len = value.copy(t_last.text.data(), t_last.text.size());
    }
    st.accept = t_last.parsed;
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
