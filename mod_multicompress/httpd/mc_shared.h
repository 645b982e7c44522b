// SPDX-License-Identifier: Apache-2.0
// What may be shared between clients (docs/contract.md "What compress-once and dictionaries
// refuse"): whether a response is the file itself for everyone, and whose it is (the virtual
// host that serves it).
#pragma once

#include <httpd.h>

#include <string>
#include <string_view>

namespace mc::httpd {

/// Whether httpd's default handler would send `r`'s file as it is: a GET of a regular file, no
/// path info, no other handler (AddHandler, SetHandler, ...).
bool default_handler_would_send(const request_rec* r);

/// Whether every filter on `r`'s output chain before the protocol filters leaves the body as the
/// handler made it: ours (but INFLATE), mod_headers', mod_cache's, mod_buffer's, mod_session's,
/// a mod_filter harness whose provider for `r` is ours or none. Any other filter of type
/// resource or content set (INCLUDES, SUBSTITUTE, SED, EXT_FILTER, one a module adds at
/// insert_filter, one we do not know) may change them.
bool chain_keeps_body(request_rec* r);

/// Whether the response to `r` is its file, the same for every client: the default handler
/// sends it and nothing between the handler and us changes the bytes. Only then are sidecars,
/// cache entries and a file's own version (for dictionaries) about this response.
bool response_is_the_file(request_rec* r);

/// The virtual host that serves `r`, as configured: "scheme://ServerName:port" (the port of
/// ServerName, else of the <VirtualHost> address, else the one the connection came in on). A
/// fleet of servers behind one name (the same ServerName, with its port) shares it; the Host
/// header alone never changes it.
/// In r->pool.
std::string_view server_identity(const request_rec* r);

}  // namespace mc::httpd
