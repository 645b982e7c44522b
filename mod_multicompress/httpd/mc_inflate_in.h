// SPDX-License-Identifier: Apache-2.0
// Request bodies: the DEFLATE input filter and the handler hook that decodes their start before
// the handler runs.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// Registers DEFLATE as an input filter (SetInputFilter DEFLATE).
void register_inflate_input_filter();

/// handler hook, first of all: a CGI's environment and mod_proxy_http's request headers are made
/// from r->headers_in when the handler starts, so up to 1 MiB of a body DEFLATE decodes is
/// decoded here first and the headers made to describe it; a bad body gets httpd's own 400 or
/// 413 from here. DECLINED otherwise.
int prebuffer_request_body(request_rec* r) noexcept;

}  // namespace mc::httpd
