// SPDX-License-Identifier: Apache-2.0
// The module's counters in a shared segment: one block per child process, a few lanes per
// block for its threads, summed when read; lock-free on the request path, kept across graceful
// restarts (docs/contract.md "Observing it").
#pragma once

#include <httpd.h>

#include <cstdint>

#include "mc/metrics.h"

namespace mc::httpd {

/// post_config: maps the segment once per server (in the process pool, so a graceful restart
/// keeps it and its counts).
int counters_post_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                         server_rec* s) noexcept;
/// child_init: claims this child's block (a free one, or one whose process has exited: its
/// counts stay and this child adds to them).
void counters_child_init(apr_pool_t* pchild, server_rec* s) noexcept;

/// Adds `n` to counter word `word` (mc::metrics::*_word) of this thread's lane. A no-op outside
/// a child process.
void count(std::size_t word, std::uint64_t n = 1) noexcept;
inline void count(mc::metrics::Event e, std::uint64_t n = 1) noexcept {
    count(mc::metrics::event_word(e), n);
}

/// What the response of `r` adds to the counters, recorded when the request is logged (once per
/// request, whichever step set it last: a sidecar hit is not also counted as the identity
/// response the filter then sees).
void set_response_facts(request_rec* r, const mc::metrics::ResponseFacts& facts);
/// Whether facts were set for `r` already.
bool has_response_facts(const request_rec* r);
/// log_transaction hook: counts the final request's facts.
int count_response(request_rec* r) noexcept;

/// The memory this child holds in dictionaries and their prepared zstd tables (a gauge it sets).
void set_dictionary_memory(std::uint64_t bytes) noexcept;
/// That memory summed over the server's running children.
std::uint64_t dictionary_memory() noexcept;

/// Live compression's CPU time so far, summed over the server (the CPU budget's input: only
/// these words are read).
std::uint64_t counters_cpu_ns() noexcept;

/// The counters summed over every child, thread and generation of the server.
mc::metrics::Totals counters_total() noexcept;

/// CPU time of the calling thread, in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
std::uint64_t thread_cpu_ns() noexcept;

/// The bytes this child's tier of verified cache entries holds (a gauge it sets).
void set_cache_local_bytes(std::uint64_t bytes) noexcept;
/// Those bytes summed over the server's running children.
std::uint64_t cache_local_bytes() noexcept;

}  // namespace mc::httpd
