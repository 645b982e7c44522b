// SPDX-License-Identifier: Apache-2.0
// The per-directory configuration: create/merge (a section inherits what it does not set) and
// its value for a request.
#pragma once

#include <httpd.h>
#include <http_config.h>

#include "mc/config.h"
#include "mc_module.h"

namespace mc::httpd {

void* create_dir_config(apr_pool_t* p, char* dir) noexcept;
void* merge_dir_config(apr_pool_t* p, void* base, void* add) noexcept;

/// The merged configuration for `r`.
inline const mc::Config& dir_config(const request_rec* r) {
    return *static_cast<const mc::Config*>(
        ap_get_module_config(r->per_dir_config, &multicompress_module));
}

}  // namespace mc::httpd
