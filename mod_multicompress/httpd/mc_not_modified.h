// SPDX-License-Identifier: Apache-2.0
// Validators and 304s: the hooks that keep If-None-Match and a 304's Vary and ETag right.
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include "mc/coding.h"
#include "mc_request_state.h"

namespace mc::httpd {

/// Registers MULTICOMPRESS_304, the filter that fixes up a 304's headers.
void register_not_modified_filter();

/// A 304 carries the Vary and ETag that the 200 would (RFC 9110 15.4.5): decides as if it were
/// that 200 (the request's one decision, see RequestState) and changes only headers. Once per
/// request, whichever filter gets there first.
void not_modified_headers(ap_filter_t* f, mc::CodingSet codings);

/// Adds MULTICOMPRESS_304 to the response (it fixes up the headers of a 304 after mod_filter,
/// which passes non-200 responses by its providers, and mod_headers).
void add_not_modified_filter(request_rec* r);
/// If-None-Match as the handler or backend must see it (httpd bug 45023: it compares with its
/// own ETag, without our suffixes). `possible`: our codings on the response.
void rewrite_if_none_match(request_rec* r, RequestState* st, mc::CodingSet possible);
/// insert_error_filter hook: puts our filter back on a 304 from the default handler, so that it
/// carries the Vary and ETag the 200 would (httpd removes content filters before sending it).
void reinsert_for_304(request_rec* r) noexcept;

/// fixups hook: removes our ETag suffixes from If-None-Match so that httpd's conditional
/// evaluation sees the file's own ETag (httpd bug 45023).
int strip_conditional_suffixes(request_rec* r) noexcept;

}  // namespace mc::httpd
