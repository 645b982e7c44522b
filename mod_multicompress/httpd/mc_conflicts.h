// SPDX-License-Identifier: Apache-2.0
// The modules we replace: refuse to run beside mod_deflate or mod_brotli.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// check_config hook: refuses to start (also under `apache2 -t`) beside mod_deflate or
/// mod_brotli, which register the same filter names (httpd would silently keep only one).
int refuse_conflicting_modules(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                               server_rec* s) noexcept;

}  // namespace mc::httpd
