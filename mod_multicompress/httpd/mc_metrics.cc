// SPDX-License-Identifier: Apache-2.0
// The counters as a Prometheus scrape target and as a section of /server-status.
#include "mc_metrics.h"

#include <apr_optional_hooks.h>
#include <http_log.h>
#include <http_protocol.h>
#include <mod_status.h>

#include <cstring>
#include <string>

#include "mc/metrics.h"
#include "mc_budget.h"
#include "mc_counters.h"
#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

int status_section(request_rec* r, int flags) noexcept {
    try {
        const metrics::Totals t = counters_total();
        const std::string text = (flags & AP_STATUS_SHORT) != 0 ? metrics::render_status_auto(t)
                                                                : metrics::render_status_html(t);
        ap_rwrite(text.data(), static_cast<int>(text.size()), r);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00202) "status section failed");
    }
    return OK;
}

int metrics_handler(request_rec* r) noexcept {
    if (r->handler == nullptr || std::strcmp(r->handler, "multicompress-metrics") != 0)
        return DECLINED;
    try {
        r->allowed |= (AP_METHOD_BIT << M_GET);
        if (r->method_number != M_GET) return HTTP_METHOD_NOT_ALLOWED;
        // The exposition format's own media type (Prometheus text format 0.0.4).
        ap_set_content_type(r, "text/plain; version=0.0.4; charset=utf-8");
        apr_table_setn(r->headers_out, "Cache-Control", "no-store");
        if (r->header_only) return OK;
        const std::string text =
            metrics::render_prometheus(counters_total()) +
            metrics::render_budget_gauges(budget_share(), static_cast<int>(budget_current_step()));
        ap_rwrite(text.data(), static_cast<int>(text.size()), r);
        return OK;
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00203) "metrics handler failed");
    }
    return HTTP_INTERNAL_SERVER_ERROR;
}

}  // namespace mc::httpd
