// SPDX-License-Identifier: Apache-2.0
// Whether a response may be compressed, and with what: the first-call decision of the filter.
#pragma once

#include <cstdint>
#include <string_view>

#include "mc/accept_encoding.h"
#include "mc/budget.h"
#include "mc/coding.h"
#include "mc/config.h"
#include "mc/metrics.h"

namespace mc {

/// What the adapter reads from request_rec before deciding. Views point into request memory.
struct ResponseView {
    int status = 200;
    bool header_only = false;
    std::string_view content_encoding;  ///< every place httpd keeps it, joined
    std::string_view content_type;
    bool has_content_range = false;
    bool request_has_range = false;
    std::string_view request_cache_control;
    std::string_view response_cache_control;
    std::int64_t body_length = -1;  ///< Content-Length, or the length when EOS came at once
    std::string_view accept_encoding;
    bool accept_encoding_present = false;
    /// `accept_encoding` parsed already (for this request, by the adapter), or null.
    const AcceptEncoding* accept_parsed = nullptr;
    // Environment opt-outs (mod_deflate / mod_brotli / ours).
    bool env_no_gzip = false;  ///< no compression at all, as in mod_deflate
    bool env_no_brotli = false;
    bool env_no_zstd = false;
    bool env_no_multicompress = false;
    bool env_gzip_only_text_html = false;
    bool env_force_gzip = false;
    /// The request is cross-site (`Sec-Fetch-Site: cross-site`) and carries credentials
    /// (`Cookie` or `Authorization`): the requests a BREACH attacker has to induce.
    bool cross_site_with_credentials = false;
    /// The request names (Available-Dictionary) a dictionary the server holds and may use for
    /// it (RFC 9842): only then is dcz a choice.
    bool dictionary_available = false;
};

/// The verdict: the coding to use (kIdentity: leave the response alone) and why.
struct Decision {
    Coding coding = Coding::kIdentity;
    const char* reason = "";
    /// For kIdentity: the reason's class, for the counters.
    metrics::Why why = metrics::Why::kOther;
    /// MultiCompressCPUBudget's step taken for this response: the adapter lowers the level
    /// with mc::budget_level (the coding is already the step's).
    BudgetStep budget = BudgetStep::kNone;
    /// Whether the response depends on Accept-Encoding (then Vary must say so).
    bool vary = true;
};

/// Decides for one response. `filter_codings` is the union of the codings of our filters on
/// this response (DEFLATE: gzip+deflate, BROTLI_COMPRESS: br, ZSTD: zstd, MULTICOMPRESS: all).
/// `step` is MultiCompressCPUBudget's current step for new live responses (kNone when the
/// budget is Off or not exceeded): kCheapest switches to the cheapest coding the client
/// accepts, kIdentity sends the response unchanged.
Decision decide(const ResponseView& view, const Config& cfg, CodingSet filter_codings,
                BudgetStep step = BudgetStep::kNone);

/// True when a Content-Type is text/html (ignoring parameters and case).
bool is_text_html(std::string_view content_type);

}  // namespace mc
