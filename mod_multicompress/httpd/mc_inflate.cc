// SPDX-License-Identifier: Apache-2.0
// What the decoding filters share: their limits and the decoding of one bucket (mc_inflate.h).
#include "mc_inflate.h"

#include <http_core.h>
#include <http_log.h>

#include "mc_config.h"
#include "mc_counters.h"
#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

mc::InflateLimits limits_for(const request_rec* r, bool request_body) {
    const mc::Config& cfg = dir_config(r);
    mc::InflateLimits l;
    if (request_body) {
        // Unset (or DeflateInflateLimitRequestBody 0, as mod_deflate) means LimitRequestBody;
        // MultiCompressInflateLimit 0 is unlimited; LimitRequestBody 0 is unlimited too.
        l.max_output = cfg.inflate_limit >= 0 ? cfg.inflate_limit
                                              : static_cast<std::int64_t>(ap_get_limit_req_body(r));
        // What a stalled upload may pin (docs/contract.md): the decoder's window.
        l.max_window = static_cast<std::uint64_t>(cfg.inflate_window_value());
    }
    l.ratio = cfg.inflate_ratio >= 0 ? cfg.inflate_ratio : mc::kDefaultInflateRatio;
    l.burst = cfg.inflate_burst >= 0 ? cfg.inflate_burst : mc::kDefaultInflateBurst;
    return l;
}

apr_status_t decode_bucket(request_rec* r, InflateCtx* ctx, apr_bucket* e, const char* what) {
    const char* data = nullptr;
    apr_size_t len = 0;
    apr_status_t rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
    if (rv != APR_SUCCESS) return rv;
    const mc::Status st =
        ctx->decoder->write({reinterpret_cast<const std::byte*>(data), len}, ctx->sink);
    if (st.is_ok()) return APR_SUCCESS;
    if (st.code() == mc::Code::kWindowTooLarge && ctx->raw != nullptr) {
        count(mc::metrics::Event::kInflateTooLarge);
        ap_log_rerror(
            APLOG_MARK, APLOG_ERR, 0, r,
            MC_LOGNO(00026) "%s: the %s stream needs a %" APR_UINT64_T_FMT
                            "-byte window, over MultiCompressInflateWindow (%" APR_INT64_T_FMT
                            " bytes): 413; MultiCompressInflateWindow raises it",
            what, mc::coding_token(ctx->coding).data(),
            static_cast<apr_uint64_t>(ctx->decoder->window()),
            static_cast<apr_int64_t>(dir_config(r).inflate_window_value()));
        ctx->decoder.reset();
        return APR_ENOSPC;
    }
    const bool limit = st.code() == mc::Code::kLimitExceeded;
    if (ctx->raw != nullptr) {  // a request body (the INFLATE output filter has no raw)
        count(limit ? mc::metrics::Event::kInflateTooLarge
                    : mc::metrics::Event::kInflateBadRequest);
    }
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                  MC_LOGNO(00020) "%s: %s after %" APR_UINT64_T_FMT " bytes in, %" APR_UINT64_T_FMT
                                  " bytes out",
                  what, st.reason(), static_cast<apr_uint64_t>(ctx->decoder->total_in()),
                  static_cast<apr_uint64_t>(ctx->decoder->total_out()));
    ctx->decoder.reset();
    return limit ? APR_ENOSPC : APR_EGENERAL;
}

}  // namespace mc::httpd
