// SPDX-License-Identifier: Apache-2.0
// The counters as a Prometheus scrape target and as a section of /server-status.
#include "mc_metrics.h"

#include <apr_optional_hooks.h>
#include <ap_mpm.h>
#include <http_log.h>
#include <http_main.h>
#include <http_protocol.h>
#include <mod_status.h>
#include <scoreboard.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "mc/metrics.h"
#include "mc_budget.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

// The CPU seconds of the server's children as mod_status adds them up for its "CPU Usage" line:
// per child the latest times() its workers recorded (ExtendedStatus, On when mod_status is
// loaded), summed. 0 when the scoreboard has none.
double server_cpu_seconds() {
#ifdef HAVE_TIMES
    int daemons = 0;
    int threads = 0;
    const long tick = sysconf(_SC_CLK_TCK);
    if (ap_scoreboard_image == nullptr || tick <= 0 ||
        ap_mpm_query(AP_MPMQ_HARD_LIMIT_DAEMONS, &daemons) != APR_SUCCESS ||
        ap_mpm_query(AP_MPMQ_HARD_LIMIT_THREADS, &threads) != APR_SUCCESS) {
        return 0;
    }
    clock_t sum = 0;
    for (int i = 0; i < daemons; ++i) {
        if (ap_get_scoreboard_process(i)->pid == 0) continue;
        clock_t latest = 0;
        for (int j = 0; j < threads; ++j) {
            const tms& t = ap_get_scoreboard_worker_from_indexes(i, j)->times;
            latest = std::max(latest, t.tms_utime + t.tms_stime + t.tms_cutime + t.tms_cstime);
        }
        sum += latest;
    }
    return static_cast<double>(sum) / static_cast<double>(tick);
#else
    return 0;
#endif
}

namespace {

// The children's gauges (dictionary memory, their tiers of verified cache entries): `?auto`
// lines, or lines inside the section's last </div>.
void add_gauges(std::string& text, bool short_form) {
    const std::uint64_t dictionaries = dictionary_memory();
    const std::uint64_t tier = cache_local_bytes();
    if (short_form) {
        text += metrics::render_dictionary_memory_auto(dictionaries);
        text += metrics::render_cache_local_auto(tier);
        return;
    }
    const std::size_t end = text.rfind("</div>");
    text.insert(end == std::string::npos ? text.size() : end,
                metrics::render_dictionary_memory_html(dictionaries) +
                    metrics::render_cache_local_html(tier));
}

}  // namespace

int status_section(request_rec* r, int flags) noexcept {
    try {
        const metrics::Totals t = counters_total();
        std::string text;
        if ((flags & AP_STATUS_SHORT) != 0) {
            text = metrics::render_status_auto(t);
        } else {
            const auto* main_cfg = static_cast<const mc::Config*>(
                ap_get_module_config(ap_server_conf->lookup_defaults, &multicompress_module));
            const metrics::CpuView cpu{budget_share(),
                                       main_cfg != nullptr ? main_cfg->cpu_budget_share() : 0.0,
                                       server_cpu_seconds()};
            text = metrics::render_status_html(t, cpu);
        }
        add_gauges(text, (flags & AP_STATUS_SHORT) != 0);
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
            metrics::render_budget_gauges(budget_share(), static_cast<int>(budget_current_step())) +
            metrics::render_dictionary_gauge(dictionary_memory()) +
            metrics::render_cache_local_gauge(cache_local_bytes());
        ap_rwrite(text.data(), static_cast<int>(text.size()), r);
        return OK;
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00203) "metrics handler failed");
    }
    return HTTP_INTERNAL_SERVER_ERROR;
}

}  // namespace mc::httpd
