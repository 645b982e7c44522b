// SPDX-License-Identifier: Apache-2.0
// The modules we replace: refuse to run beside mod_deflate or mod_brotli.
#include "mc_conflicts.h"

#include <http_config.h>
#include <http_log.h>

#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

int refuse_conflicting_modules(apr_pool_t* /*pconf*/, apr_pool_t* /*plog*/, apr_pool_t* /*ptemp*/,
                               server_rec* s) noexcept {
    struct Conflict {
        const char* source;
        const char* name;
        const char* filter;
        const char* a2dismod;
    };
    static constexpr Conflict kConflicts[] = {
        {"mod_deflate.c", "mod_deflate", "DEFLATE", "deflate"},
        {"mod_brotli.c", "mod_brotli", "BROTLI_COMPRESS", "brotli"},
    };
    int rv = OK;
    for (const Conflict& c : kConflicts) {
        if (ap_find_linked_module(c.source) == nullptr) continue;
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     MC_LOGNO(00010) "%s is loaded together with mod_multicompress; both register "
                     "the %s filter and httpd would silently keep only one. mod_multicompress "
                     "replaces it: remove its LoadModule line (on Debian: a2dismod %s).",
                     c.name, c.filter, c.a2dismod);
        rv = HTTP_INTERNAL_SERVER_ERROR;
    }
    return rv;
}

}  // namespace mc::httpd
