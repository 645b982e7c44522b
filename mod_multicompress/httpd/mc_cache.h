// SPDX-License-Identifier: Apache-2.0
// MultiCompressCache's policy: a live response fills the entry the handler missed, and a weaker
// entry than MultiCompressCacheLevel asks the child's worker for a stronger copy. The entries
// themselves are mc_cache_entries, the worker mc_cache_worker, the store mc_socache.
#pragma once

#include <httpd.h>

#include <string>
#include <string_view>

#include "mc/coding.h"

namespace mc::httpd {

/// Stores a body made at `level` (the live response) and asks for a stronger copy when
/// MultiCompressCacheLevel is higher.
void cache_store(request_rec* r, const std::string& key, mc::Coding coding, int level,
                 std::string_view body);
/// Asks the background worker to replace the entry with one made at the cache level.
void cache_request_upgrade(request_rec* r, const std::string& key, mc::Coding coding);

}  // namespace mc::httpd
