// SPDX-License-Identifier: Apache-2.0
// Reading a response's buckets: small files read rather than mapped, whether a brigade holds the
// whole body, and a read that first passes on what came before a stall in its source.
#pragma once

#include <httpd.h>
#include <apr_buckets.h>

namespace mc::httpd {

/// apr_bucket_read, reading a small FILE bucket instead of mapping it.
apr_status_t read_bucket(apr_bucket* e, const char** data, apr_size_t* len, apr_read_type_e block);

/// Length of the body if the brigade holds all of it (EOS present, every length known), else -1.
/// `plain` tells whether it holds only data and the EOS (no FLUSH or other metadata).
apr_off_t whole_body_length(apr_bucket_brigade* bb, bool& plain);

/// Reads bucket `e`. When its source has nothing yet (a CGI or backend that stalls), first runs
/// `stalled()` (which passes on what came before, with a FLUSH, so the client sees it now and
/// leaves `e` as it is), then waits for the data.
template <class F>
apr_status_t read_or_flush(apr_bucket* e, const char** data, apr_size_t* len, F&& stalled) {
    apr_status_t rv = read_bucket(e, data, len, APR_NONBLOCK_READ);
    if (rv != APR_EAGAIN) return rv;
    if ((rv = stalled()) != APR_SUCCESS) return rv;
    return apr_bucket_read(e, data, len, APR_BLOCK_READ);
}

}  // namespace mc::httpd
