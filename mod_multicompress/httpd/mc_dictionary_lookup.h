// SPDX-License-Identifier: Apache-2.0
// The dictionary a request names (RFC 9842): looked up once per request, before any decision,
// into its state (RequestState::dictionary); and prepared dictionaries for the encoders.
#pragma once

#include <httpd.h>

#include <memory>
#include <string>
#include <string_view>

#include "mc/dictionary.h"
#include "mc_dictionary_store.h"
#include "mc_request_state.h"

namespace mc::httpd {

/// Looks up the dictionary `r` names (Available-Dictionary) that this server holds and may use
/// for it: dcz enabled here and accepted by name, RFC 9842's cross-origin rules, the virtual host
/// it was offered on; the child's cache, then the store. Keeps it in `st` (null when none). Once
/// per request: the insert_filter hook that prepares the request calls it.
void look_up_dictionary(request_rec* r, RequestState* st);

/// `dict` prepared for zstd at `level`, from the child's cache (made on first use; no I/O).
std::shared_ptr<const mc::PreparedDictionary> prepared_dictionary(const SharedDictionary& dict,
                                                                  int level);

/// Where a dictionary offered or named by `r` may be used: the virtual host (RFC 9842 §2.1.1 keeps
/// a dictionary to its origin), never the Host header alone. Made once per request (in r->pool).
std::string_view dictionary_origin(request_rec* r);

}  // namespace mc::httpd
