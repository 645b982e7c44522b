// SPDX-License-Identifier: Apache-2.0
// Compression dictionaries (RFC 9842), their configuration: MultiCompressUseAsDictionary and
// MultiCompressDictionaryMaxSize (handlers in mc_directives.h), and the patterns every section
// offers, for the Vary of the URLs they cover.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// Whether some configured pattern covers the URL of `r` (its Vary then names
/// Available-Dictionary).
bool dictionary_may_apply(const request_rec* r);

}  // namespace mc::httpd
