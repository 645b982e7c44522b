// SPDX-License-Identifier: Apache-2.0
// What a request brings to the decision, gathered once at insert_filter: our filters on the
// response (directly or through mod_filter), the dictionary it names, If-None-Match as the
// handler must see it, and the 304 filter.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// insert_filter hook (really last: after mod_filter, SetOutputFilter and mod_mime have added
/// theirs): fills the request's state (mc_request_state.h) when one of our filters is on the
/// response.
void prepare_request(request_rec* r) noexcept;

}  // namespace mc::httpd
