// SPDX-License-Identifier: Apache-2.0
// The INFLATE output filter: decodes a compressed response for the filters after it.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// Registers INFLATE (before content filters, as mod_deflate's).
void register_inflate_output_filter();

}  // namespace mc::httpd
