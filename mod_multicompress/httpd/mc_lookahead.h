// SPDX-License-Identifier: Apache-2.0
// The no-transform look-ahead: a Cache-Control: no-transform that mod_headers adds after us.
#pragma once

#include <httpd.h>
#include <util_filter.h>

#include "mc/config.h"
#include "mc/policy.h"

namespace mc::httpd {

/// Registers the internal filter that ends the chain while probing.
void register_probe_sink();

/// The view, with a no-transform that a filter after `f` will add (MultiCompressNoTransform
/// Honor only; Ignore never looks).
void add_late_no_transform(ap_filter_t* f, const mc::Config& cfg, mc::ResponseView& view);

}  // namespace mc::httpd
