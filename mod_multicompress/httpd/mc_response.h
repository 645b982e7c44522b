// SPDX-License-Identifier: Apache-2.0
// Reading and writing a response's headers for the filters and the static handler: the
// ResponseView the core decides on, Vary, Content-Encoding, ETag.
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include <string>
#include <string_view>

#include "mc/coding.h"
#include "mc/config.h"
#include "mc/policy.h"
#include "mc_request_state.h"

namespace mc::httpd {

/// Whether the comma-separated header `header` holds `token` in any of its fields in `t`.
bool table_has_token(const apr_table_t* t, const char* header, const char* token);
/// Every field `name` of `t`, joined with ", " in `p` (apr_table_getm); nullptr when there is
/// none, found without a walk of the table.
const char* all_fields(apr_pool_t* p, const apr_table_t* t, const char* name);
/// Every field `name` of the response, headers_out's then err_headers_out's (both are sent),
/// joined with ", " (RFC 9651 §4.2) in r->pool; nullptr when there is none.
const char* response_fields(request_rec* r, const char* name);
/// Whether the comma-separated header `header` holds `token`, in headers_out or err_headers_out.
bool has_token(const request_rec* r, const char* header, const char* token);
/// Vary: Accept-Encoding, merged into what is there (headers_out or err_headers_out), never twice;
/// also Available-Dictionary where a dictionary may apply (RFC 9842 §6.2).
void merge_vary(request_rec* r);
/// Every place httpd keeps a response's content coding, joined with ", ".
std::string content_encoding_of(const request_rec* r);
/// Removes from `t` the headers that describe a body's bytes as they are (its length, checksums
/// and digests), which a new content coding (or its removal) makes wrong.
void unset_byte_headers(apr_table_t* t);
/// For `coding` dcz: the first hex digits of the request's dictionary's hash, which the dcz ETag
/// carries (in r->pool); "" for every other coding or without a dictionary.
std::string_view dcz_etag_tag(const request_rec* r, mc::Coding coding);
/// Applies MultiCompressAlterETag to the response's ETag, once per response (a later call does
/// nothing). kIdentity escapes a tag that ends in one of our suffixes (see mc::alter_etag).
void alter_etag(request_rec* r, mc::Coding coding, mc::ETagMode mode);
/// Content-Encoding set; Content-Length and digests removed; ETag altered.
void set_compressed_headers(request_rec* r, mc::Coding coding, const mc::Config& cfg);
/// The response's Content-Length header, or -1 when it has none or it is not a length.
apr_off_t content_length_of(const request_rec* r);
/// The view mc::decide() reads. `whole_length` is the body length when known from the body
/// itself (else -1: Content-Length is used).
mc::ResponseView view_of(request_rec* r, const std::string& content_encoding,
                         apr_off_t whole_length);
/// Records where the response came from ("sidecar", "cache", "live", "identity") in the
/// MULTICOMPRESS_SOURCE environment variable and the `source` note, if configured.
void set_source(request_rec* r, const mc::Config& cfg, const char* source);

}  // namespace mc::httpd
