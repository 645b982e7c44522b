// SPDX-License-Identifier: Apache-2.0
// Reading and writing a response's headers for the filters and the static handler: the
// ResponseView the core decides on, Vary, Content-Encoding, ETag, and per-request state.
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include <array>
#include <cstddef>
#include <string>

#include "mc/coding.h"
#include "mc/config.h"
#include "mc/policy.h"

namespace mc::httpd {

/// Per-request state kept in r->request_config.
struct RequestState {
    static constexpr std::size_t kMaxHarnesses = 4;
    mc::CodingSet codings;  ///< our filters on the response, as seen at insert_filter
    /// mod_filter harnesses with one of our filters as a provider, for a 304 (see
    /// remember_filters in mc_filter.cc).
    std::array<const ap_filter_rec_t*, kMaxHarnesses> harnesses{};
    std::size_t n_harnesses = 0;
    bool not_modified_done = false;  ///< the 304's Vary and ETag are set
    bool etag_done = false;          ///< the ETag is altered for this response (alter_etag)
    /// If-None-Match before we stripped our suffixes from it, for the 304's ETag.
    const char* if_none_match = nullptr;
    const char* cache_key = nullptr;  ///< set on a cache miss: the live response fills the entry
    mc::Coding cache_coding = mc::Coding::kIdentity;
};

RequestState* request_state(request_rec* r, bool create);

/// Whether the comma-separated header `header` holds `token`, in headers_out or err_headers_out.
bool has_token(const request_rec* r, const char* header, const char* token);
/// Vary: Accept-Encoding, merged into what is there (headers_out or err_headers_out), never twice.
void merge_vary(request_rec* r);
/// Every place httpd keeps a response's content coding, joined with ", ".
std::string content_encoding_of(const request_rec* r);
/// Applies MultiCompressAlterETag to the response's ETag, once per response (a later call does
/// nothing). kIdentity escapes a tag that ends in one of our suffixes (see mc::alter_etag).
void alter_etag(request_rec* r, mc::Coding coding, mc::ETagMode mode);
/// Content-Encoding set; Content-Length and digests removed; ETag altered.
void set_compressed_headers(request_rec* r, mc::Coding coding, const mc::Config& cfg);
/// The view mc::decide() reads. `whole_length` is the body length when known from the body
/// itself (else -1: Content-Length is used).
mc::ResponseView view_of(const request_rec* r, const std::string& content_encoding,
                         apr_off_t whole_length);
/// Records where the response came from ("sidecar", "cache", "live", "identity") in the
/// MULTICOMPRESS_SOURCE environment variable and the `source` note, if configured.
void set_source(request_rec* r, const mc::Config& cfg, const char* source);

}  // namespace mc::httpd
