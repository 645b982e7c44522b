// SPDX-License-Identifier: Apache-2.0
// The child's tier of cache entries already verified (MultiCompressCacheLocal): a hit found there
// is sent from the child's memory with a reference, without a copy out of the store under its
// lock or a checksum of the body. Only entries at their final level enter it, each after
// parse_entry accepted it; and sidecars the module read whole, under the version of the file
// (mc_sidecar.h), so a later hit opens nothing. It is bounded by bytes (least recently used
// evicted), counted in the status counters, and freed with the child.
#pragma once

#include <httpd.h>
#include <apr_buckets.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mc/hit_tier.h"

namespace mc::httpd {

// MultiCompressCacheLocal SIZE|Off (main server) is declared in mc_directives.h.
/// pre_config: the directive's default for the configuration about to be read.
int hit_tier_pre_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp) noexcept;
/// child_init: the child's tier unless it is off (freed with `pchild`: a graceful restart's new
/// children start empty).
void hit_tier_child_init(apr_pool_t* pchild, server_rec* s) noexcept;

/// Whether this child's tier would keep a body of `bytes` bytes: it has one
/// (MultiCompressCacheLocal is not Off) and the body alone fits it.
bool tier_takes(std::size_t bytes);
/// The body kept for `key` when it was made at `min_level` or above and checked against a window
/// no larger than `max_window` (0: a coding without windows), with a reference held until
/// r->pool is cleared; nullptr when the tier has no such body (or is off).
mc::TierBody* tier_find(request_rec* r, std::string_view key, int min_level,
                        std::uint64_t max_window);
/// After parse_entry accepted `body` from the store at `level`: keeps a copy when that level is
/// final (`min_level` or above), checked against `max_window`; returns it with a reference held
/// until r->pool is cleared, or nullptr when not kept (a level still to be upgraded, the tier off,
/// larger than the tier, out of memory).
mc::TierBody* tier_keep(request_rec* r, std::string_view key, int level, int min_level,
                        std::uint64_t max_window, std::string_view body);
/// A heap bucket over `body`'s bytes (no copy) that holds a reference of its own until the last
/// bucket over them is destroyed, wherever the response's buckets go (set aside by the core,
/// handed to mod_http2's connection thread).
apr_bucket* tier_bucket(mc::TierBody* body, apr_bucket_alloc_t* list);

}  // namespace mc::httpd
