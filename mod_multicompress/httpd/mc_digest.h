// SPDX-License-Identifier: Apache-2.0
// Integrity fields of a compressed response (RFC 9530): the handler's Content-Digest and
// Repr-Digest describe the bytes it sent, so where the whole compressed body is known before the
// headers go out they are made again, with the same algorithms, for the bytes sent. Elsewhere
// (streamed bodies) set_compressed_headers drops them. Unencoded-Digest describes the bytes
// before any content coding and is never touched.
#pragma once

#include <httpd.h>
#include <apr_buckets.h>
#include <apr_file_io.h>

#include <string_view>

namespace mc::httpd {

/// Before set_compressed_headers, when the whole body is in `bb`: keeps the handler's
/// Content-Digest and Repr-Digest for put_digests, if each parses and matches the body (a digest
/// that does not describe the body is not made true by recomputing it). A malformed or
/// mismatching field is dropped with one log line; members with algorithms other than sha-256
/// and sha-512 are dropped.
void keep_digests_of_body(request_rec* r, apr_bucket_brigade* bb);
/// The same before a sidecar or cache entry of r->filename is sent: checked against that file.
void keep_digests_of_file(request_rec* r);

/// Sets the kept fields, made again over the compressed body: in memory, ...
void put_digests(request_rec* r, std::string_view body);
/// ... the data buckets of `bb`, ...
void put_digests(request_rec* r, apr_bucket_brigade* bb);
/// ... or the first `length` bytes of `fd` (read from its start; left at its start).
void put_digests(request_rec* r, apr_file_t* fd, apr_off_t length);

}  // namespace mc::httpd
