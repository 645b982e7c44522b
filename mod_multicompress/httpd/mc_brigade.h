// SPDX-License-Identifier: Apache-2.0
// Reading a response's buckets: files read rather than mapped, whether a brigade holds the whole
// body, and a read that first passes on what came before a stall in its source; a file sent as
// httpd's core sends one (sendfile as EnableSendfile says, never mapped).
#pragma once

#include <httpd.h>
#include <apr_buckets.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <span>

#include "mc/alloc.h"

namespace mc::httpd {

/// Most bytes of a file the module reads into memory in one read() rather than mapping it or
/// leaving it to the core (see mc_brigade.cc).
inline constexpr apr_size_t kReadWholeBytes = 256 * 1024;

/// apr_bucket_read; a FILE bucket of up to 256 KiB is read in one read(), never mapped (whatever
/// EnableMMAP says); a larger one as EnableMMAP says.
apr_status_t read_bucket(apr_bucket* e, const char** data, apr_size_t* len, apr_read_type_e block);

/// A FILE bucket over 256 KiB: read_bucket would map it (as EnableMMAP says), so where the
/// module reads such a file itself it uses read_file_into instead.
bool is_large_file(const apr_bucket* e);

/// Logs that the response's file could not be read.
void log_read_failure(request_rec* r, apr_status_t rv);

/// Copies `n` bytes of FILE bucket `e` from `from` on (at most to its end) into `dst` with
/// pread(): never mapped, the bucket left as it is. APR_EOF when the file is shorter than the
/// bucket.
apr_status_t read_file_into(const apr_bucket* e, apr_size_t from, char* dst, apr_size_t n);

/// Copies FILE bucket `e` in pieces of up to 256 KiB with read_file_into into one block of the
/// module's own (mc/alloc.h) and hands each to `use(piece, is_the_last_piece)`, which returns an
/// apr_status_t. Stops at the first status that is not APR_SUCCESS (a failed read is logged).
template <class F>
apr_status_t read_file_in_pieces(request_rec* r, const apr_bucket* e, F&& use) {
    constexpr apr_size_t kPiece = 256 * 1024;
    const std::unique_ptr<void, void (*)(void*)> block(mc::mem_alloc(kPiece), mc::mem_free);
    if (!block) throw std::bad_alloc();
    auto* buf = static_cast<char*>(block.get());
    for (apr_size_t done = 0; done < e->length;) {
        const apr_size_t n = std::min<apr_size_t>(kPiece, e->length - done);
        if (apr_status_t rv = read_file_into(e, done, buf, n); rv != APR_SUCCESS) {
            log_read_failure(r, rv);
            return rv;
        }
        done += n;
        const std::span<const std::byte> piece(reinterpret_cast<const std::byte*>(buf), n);
        if (apr_status_t rv = use(piece, done == e->length); rv != APR_SUCCESS) return rv;
    }
    return APR_SUCCESS;
}

/// apr_brigade_insert_file of the whole of `fd`, its buckets marked to be read as read_bucket
/// reads them (up to 256 KiB: one read(), never mapped) where a filter reads them (mod_ssl,
/// mod_http2, EnableSendfile Off); sendfile, when `fd` was opened for it, still applies. Returns
/// the last bucket inserted.
apr_bucket* insert_file_unmapped(apr_bucket_brigade* bb, apr_file_t* fd, apr_off_t length,
                                 apr_pool_t* pool);

/// Appends a FLUSH to `bb` (before the caller's EOS) when the body it ends, held whole in memory,
/// is smaller than httpd's THRESHOLD_MIN_WRITE (4096 bytes, server/core_filters.c). The core
/// output filter keeps a brigade that small and without a file bucket for later, and the event
/// MPM writes it only once the request is done (write completion), so a client cannot send its
/// next request on the connection before that; a file bucket (what the default handler sends)
/// and a FLUSH are written at once. Only small bodies: the socket's buffer takes them without
/// waiting, where a FLUSH after a large one would hold the worker until the client reads.
void flush_if_small(apr_bucket_brigade* bb, apr_size_t body_bytes);

/// The flags httpd's default handler opens a file with for `r` (APR_SENDFILE_ENABLED where
/// EnableSendfile is On for it).
apr_int32_t default_handler_open_flags(const request_rec* r);

/// Whether `e` is the last data bucket of the body (EOS follows it in `bb`).
bool ends_body(apr_bucket_brigade* bb, const apr_bucket* e);

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
