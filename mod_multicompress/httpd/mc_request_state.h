// SPDX-License-Identifier: Apache-2.0
// The per-request state (r->request_config): what the request brings to the decision (our
// filters on the response, the dictionary it names), the handler's plan, and the one decision.
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "mc/accept_encoding.h"
#include "mc/coding.h"
#include "mc/dictionary.h"
#include "mc/metrics.h"
#include "mc/policy.h"

namespace mc::httpd {

/// What the static handler (mc_static.cc) decided before the body exists: the coding it looked
/// up a sidecar or cache entry for and, on a cache miss, the key the live response fills.
struct HandlerPlan {
    mc::Coding coding = mc::Coding::kIdentity;
    const char* cache_key = nullptr;  ///< set on a cache miss with a usable store (in r->pool)
};

/// The deploy-time delta sidecar of FILE against the dictionary a request names, where it is
/// (mc_sidecar.cc, delta_sidecar_there); path null when there is none.
struct DeltaSidecarPath {
    const char* path = nullptr;
    const char* suffix = nullptr;
    bool sent_before = false;  ///< this child sent it for this version of FILE (no lstat made)
};

/// Per-request state kept in r->request_config, made by the insert_filter hook that prepares the
/// request (mc_prepare.cc) and destroyed with r->pool.
struct RequestState {
    static constexpr std::size_t kMaxHarnesses = 4;
    mc::CodingSet codings;  ///< our filters on the response, as seen at insert_filter
    /// mod_filter harnesses with one of our filters as a provider, for a 304 (mc_not_modified).
    std::array<const ap_filter_rec_t*, kMaxHarnesses> harnesses{};
    std::size_t n_harnesses = 0;
    bool etag_done = false;  ///< the ETag is altered for this response (alter_etag)
    /// If-None-Match before we stripped our suffixes from it, for the 304's ETag.
    const char* if_none_match = nullptr;
    HandlerPlan plan;
    /// Our handler is sending a sidecar or cache body with status 200: already encoded, every
    /// header set (mc_static.cc), so the compression filters pass it on without deciding.
    bool sent_encoded = false;
    /// The dictionary the request names and the server holds and may use for it (RFC 9842),
    /// looked up once before any decision (mc_dictionary_lookup.cc); null when none. Everything
    /// after reads it here and does no I/O for it.
    std::shared_ptr<const mc::DictionaryBytes> dictionary;
    /// The dictionary the request names when dcz may answer it (enabled here, accepted by name,
    /// a well-formed Available-Dictionary, not a cross-origin no-cors request), held or not: a
    /// delta sidecar made against it needs no bytes of it (mc_sidecar.cc).
    std::optional<mc::DictionaryHash> named;
    /// Where the delta sidecar against `named` is, once looked for (delta_sidecar_there).
    std::optional<DeltaSidecarPath> delta;
    /// The origin a dictionary is used on or offered for (dictionary_origin), in r->pool.
    std::string_view origin;
    /// Accept-Encoding as parsed (parse_accept), and the header value it parsed: a decision on
    /// the same value (the same pointer in headers_in) reads it instead of parsing again.
    const char* accept_header = nullptr;
    mc::AcceptEncoding accept;
    /// The decision for this response, once made from its final headers: by the filter's first
    /// call, or for a 304 by whichever of the filter and the 304 filter gets there first. Every
    /// later step reads it; nothing decides again once `decided` is set.
    mc::Decision decision;
    bool decided = false;
    /// What the status counters count for this response (set_response_facts), in r->pool.
    mc::metrics::ResponseFacts* facts = nullptr;

    /// Records the final decision (once).
    void decide_once(const mc::Decision& d) {
        decision = d;
        decided = true;
    }
    /// Whether the live response is to fill the cache entry the handler missed: only when the
    /// final decision is the coding the handler looked the entry up for.
    [[nodiscard]] bool fills_cache() const {
        return decided && plan.cache_key != nullptr && plan.coding == decision.coding;
    }
};

/// The state of `r`, made on first use when `create` (else nullptr when none).
RequestState* request_state(request_rec* r, bool create);
/// The same, read-only, never made.
const RequestState* request_state(const request_rec* r);

/// Parses Accept-Encoding `ae` into `st` (accept, accept_header) unless it holds that value's
/// parse already. Each thread keeps its last parse: most requests send one of a few values.
void parse_accept(RequestState& st, const char* ae);

/// Whether our handler is sending `r` a sidecar or cache body with status 200 (sent_encoded).
bool sent_encoded(const request_rec* r);

}  // namespace mc::httpd
