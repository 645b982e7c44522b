// SPDX-License-Identifier: Apache-2.0
// The module's declaration (mod_multicompress.cc defines it), for the files that read its
// configuration or per-request state.
#pragma once

#include <httpd.h>
#include <http_config.h>

extern "C" {
extern module AP_MODULE_DECLARE_DATA multicompress_module;
}
