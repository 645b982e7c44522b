// SPDX-License-Identifier: Apache-2.0
// Reading the counters: the multicompress-metrics handler (Prometheus) and mod_status's section.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// Handler for `SetHandler multicompress-metrics`.
int metrics_handler(request_rec* r) noexcept;
/// mod_status's optional status_hook: the module's section of /server-status (and ?auto).
int status_section(request_rec* r, int flags) noexcept;

}  // namespace mc::httpd
