// SPDX-License-Identifier: Apache-2.0
// Compression dictionaries (RFC 9842, docs/contract.md "Dictionaries"): the directives, learning
// the responses MultiCompressUseAsDictionary offers, the store (MultiCompressCacheStore, by
// SHA-256, in chunks) under a bounded per-child cache of prepared dictionaries, and which
// dictionary a request may use.
#pragma once

#include <httpd.h>
#include <http_config.h>

#include <memory>
#include <string>

#include "mc/coding.h"
#include "mc/dictionary.h"

namespace mc::httpd {

/// MultiCompressUseAsDictionary PATTERN [dest=DEST]... [id=ID] | Off
const char* set_use_as_dictionary(cmd_parms* cmd, void* mconfig, int argc,
                                  char* const argv[]) noexcept;
/// MultiCompressDictionaryMaxSize N
const char* set_dictionary_max_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;

/// Whether some configured pattern covers the URL of `r` (its Vary then names
/// Available-Dictionary).
bool dictionary_may_apply(const request_rec* r);

/// The dictionary `r` names (Available-Dictionary) that this server holds and may use for it:
/// dcz enabled here and accepted by name, the RFC's cross-origin rules, the host it was offered
/// on. Looked up once per request (the child's cache, then the store); nullptr when none.
const mc::DictionaryBytes* request_dictionary(request_rec* r);
/// The shared bytes of request_dictionary(r) (the cache worker keeps them for an upgrade).
std::shared_ptr<const mc::DictionaryBytes> request_dictionary_shared(request_rec* r);
/// For `coding` dcz: the first hex digits of request_dictionary(r)'s hash, which the dcz ETag
/// carries; "" for every other coding or without a dictionary.
std::string dcz_etag_tag(request_rec* r, mc::Coding coding);
/// `dict` prepared for zstd at `level`, from the child's cache (made on first use).
std::shared_ptr<const mc::PreparedDictionary> prepared_dictionary(
    const std::shared_ptr<const mc::DictionaryBytes>& dict, int level);

/// insert_filter: the learning filter on responses MultiCompressUseAsDictionary offers.
void insert_dictionary_filter(request_rec* r) noexcept;
void register_dictionary_filter();

}  // namespace mc::httpd
