// SPDX-License-Identifier: Apache-2.0
// MultiCompressMinSaving: a body that would not shrink goes out unchanged. The first block of a
// body is probed cheaply before the first pass down the chain, and each child remembers what
// bodies saved (by file version for static files, by host, path and type for other responses),
// so the next request for a body that does not shrink is sent without reading or probing it.
#pragma once

#include <httpd.h>
#include <http_config.h>
#include <util_filter.h>

#include <cstdint>

#include "mc/coding.h"
#include "mc/config.h"
#include "mc/policy.h"

namespace mc::httpd {

/// The filter's first call, after mc::decide: turns a decision to compress into identity (why
/// kIncompressible) when this body is remembered, or probed from what `bb` holds of its start, to
/// save less than MultiCompressMinSaving. Reads at most the first 16 KiB of `bb`, without
/// blocking on a pipe or socket; passes nothing.
void check_saving(request_rec* r, apr_bucket_brigade* bb, const mc::Config& cfg, mc::Decision& d);

/// After a live body was compressed in one stream without a flush before its end: remembers
/// what it saved, for the next request (a flushed stream's size says as much about the flushes).
void remember_saving(request_rec* r, mc::Coding coding, std::uint64_t in, std::uint64_t out);

/// Whether this request's body is remembered as one that does not save enough to compress (the
/// static handler then does not look the cache up for it).
bool remembered_no_saving(request_rec* r, const mc::Config& cfg);

}  // namespace mc::httpd
