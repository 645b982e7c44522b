// SPDX-License-Identifier: Apache-2.0
// Directives and per-directory configuration (create/merge) of the module.
#pragma once

#include <httpd.h>
#include <http_config.h>

#include "mc/config.h"

extern "C" {
extern module AP_MODULE_DECLARE_DATA multicompress_module;
}

namespace mc::httpd {

/// The directive table (cmds[] of the module struct).
extern const command_rec kCommands[];

void* create_dir_config(apr_pool_t* p, char* dir) noexcept;
void* merge_dir_config(apr_pool_t* p, void* base, void* add) noexcept;

/// The merged configuration for `r`.
inline const mc::Config& dir_config(const request_rec* r) {
    return *static_cast<const mc::Config*>(
        ap_get_module_config(r->per_dir_config, &multicompress_module));
}

}  // namespace mc::httpd
