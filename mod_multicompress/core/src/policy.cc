// SPDX-License-Identifier: Apache-2.0
// The filter's first-call decision, free of httpd types so it can be table-tested.
#include "mc/policy.h"

#include "mc/headers.h"
#include "mc/negotiate.h"

namespace mc {

bool is_text_html(std::string_view content_type) {
    const auto semi = content_type.find(';');
    return iequals(trim_ows(content_type.substr(0, semi)), "text/html");
}

Decision decide(const ResponseView& v, const Config& cfg, CodingSet filter_codings,
                BudgetStep step) {
    Decision d;
    // Responses that carry no content to transform: no coding, but a cache must still know that
    // the 200 for the same URL varies (a 304 carries the same Vary as the 200, RFC 9110 §15.4.5).
    if (v.status < 200) {
        d.reason = "informational status";
        d.why = metrics::Why::kStatus;
        d.vary = false;
        return d;
    }
    if (v.status == 204 || v.status == 304) {
        d.reason = v.status == 204 ? "204 No Content" : "304 Not Modified";
        d.why = metrics::Why::kStatus;
        return d;
    }
    if (v.status == 206 || v.has_content_range) {
        d.reason = "partial content";
        d.why = metrics::Why::kRange;
        return d;
    }
    if (v.request_has_range) {
        d.reason = "Range request (served as identity so ranges stay valid)";
        d.why = metrics::Why::kRange;
        return d;
    }
    if (!is_identity_encoding(v.content_encoding)) {
        d.reason = "already content-encoded";
        d.why = metrics::Why::kAlreadyEncoded;
        return d;
    }
    if (cfg.honor_no_transform() && (list_has_token(v.request_cache_control, "no-transform") ||
                                     list_has_token(v.response_cache_control, "no-transform"))) {
        d.reason = "Cache-Control: no-transform";
        d.why = metrics::Why::kNoTransform;
        return d;
    }
    if (cfg.cross_site_identity() && v.cross_site_with_credentials) {
        d.reason = "credentialed cross-site request (MultiCompressCrossSite Identity)";
        d.why = metrics::Why::kCrossSite;
        return d;
    }
    if (v.env_no_gzip || v.env_no_multicompress) {
        d.reason = v.env_no_gzip ? "no-gzip is set" : "no-multicompress is set";
        d.why = metrics::Why::kEnv;
        return d;
    }
    if (v.env_gzip_only_text_html && !is_text_html(v.content_type)) {
        d.reason = "gzip-only-text/html is set and the type is not text/html";
        d.why = metrics::Why::kEnv;
        return d;
    }
    if (v.body_length >= 0 && v.body_length < cfg.min_length_value()) {
        d.reason = "body shorter than MultiCompressMinLength";
        d.why = metrics::Why::kTooSmall;
        return d;
    }

    CodingSet allowed = filter_codings;
    if (v.env_no_brotli) allowed.remove(Coding::kBrotli);
    if (v.env_no_zstd) {
        allowed.remove(Coding::kZstd);
        allowed.remove(Coding::kDcz);
    }

    const AcceptEncoding accept =
        v.accept_parsed != nullptr
            ? *v.accept_parsed
            : AcceptEncoding::parse(v.accept_encoding, v.accept_encoding_present);
    // dcz needs a dictionary the client holds, and the client's own word for it ("*" does not
    // name it: RFC 9842 §4 clients list dcz when they send Available-Dictionary).
    if (!v.dictionary_available || accept.explicit_weight(Coding::kDcz) <= 0) {
        allowed.remove(Coding::kDcz);
    }
    d.coding = negotiate(accept, cfg.encodings(), allowed);
    if (d.coding == Coding::kIdentity && v.env_force_gzip && allowed.has(Coding::kGzip)) {
        // mod_deflate's force-gzip: gzip even if the client did not ask for it.
        d.coding = Coding::kGzip;
        d.reason = "force-gzip is set";
        return d;
    }
    d.reason = d.coding == Coding::kIdentity ? "client accepts no enabled encoding" : "negotiated";
    d.why = metrics::Why::kNotAcceptable;
    if (d.coding != Coding::kIdentity && step != BudgetStep::kNone) {
        // docs/contract.md "Under load": a lower level, then the cheapest coding the client
        // accepts, then identity.
        d.budget = step;
        if (step == BudgetStep::kIdentity) {
            d.coding = Coding::kIdentity;
            d.reason = "over MultiCompressCPUBudget";
            d.why = metrics::Why::kBudget;
        } else if (step == BudgetStep::kCheapest) {
            CodingSet acceptable;
            for (const Coding c : cfg.encodings()) {
                if (allowed.has(c) && accept.weight(c) > 0) acceptable.add(c);
            }
            d.coding = cheapest_coding(acceptable);
            d.reason = "over MultiCompressCPUBudget: the cheapest coding accepted";
        } else {
            d.reason = "negotiated; level lowered (MultiCompressCPUBudget)";
        }
    }
    return d;
}

}  // namespace mc
