// SPDX-License-Identifier: Apache-2.0
// Where dictionaries are kept: per child in a bounded mc::DictionaryCache (bytes and prepared
// zstd tables), and in MultiCompressCacheStore (the bytes in chunks by hash, a head per origin
// the dictionary was offered on, both verified when read back).
#pragma once

#include <httpd.h>

#include <memory>
#include <string>
#include <string_view>

#include "mc/dictionary.h"
#include "mc/dictionary_cache.h"

namespace mc::httpd {

using SharedDictionary = std::shared_ptr<const mc::DictionaryBytes>;

/// This child's dictionaries.
mc::DictionaryCache& child_dictionaries();
/// Sets the child's dictionary-memory gauge (mc_counters) to what child_dictionaries() holds.
void note_dictionary_memory();

/// Stores `d` for `origin` (chunks, then the head), each entry for 30 days.
void store_dictionary(server_rec* s, const mc::DictionaryBytes& d, std::string_view origin,
                      apr_pool_t* pool);
/// The dictionary `h` if the store says it was offered on `origin`: its head, then (unless `have`
/// holds the bytes already) its chunks, checked against the hash. A bad entry is logged, counted
/// and removed; nullptr for it and for a miss.
SharedDictionary fetch_dictionary(request_rec* r, const mc::DictionaryHash& h,
                                  std::string_view origin, const SharedDictionary& have);

}  // namespace mc::httpd
