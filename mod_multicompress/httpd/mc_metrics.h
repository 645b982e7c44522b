// SPDX-License-Identifier: Apache-2.0
// Reading the counters: the multicompress-metrics handler (Prometheus) and mod_status's section.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// Handler for `SetHandler multicompress-metrics`.
int metrics_handler(request_rec* r) noexcept;
/// Registers the mod_status hook (an optional hook: nothing happens without mod_status).
void register_status_hook();

}  // namespace mc::httpd
