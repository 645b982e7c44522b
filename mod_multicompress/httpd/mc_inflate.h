// SPDX-License-Identifier: Apache-2.0
// mod_deflate's other two filters: the DEFLATE input filter (decodes gzip, deflate, br and zstd
// request bodies within the inflate limits) and the INFLATE output filter.
#pragma once

namespace mc::httpd {

/// Registers the DEFLATE input filter and the INFLATE output filter.
void register_inflate_filters();

}  // namespace mc::httpd
