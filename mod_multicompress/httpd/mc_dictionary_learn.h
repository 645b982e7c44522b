// SPDX-License-Identifier: Apache-2.0
// Learning dictionaries (RFC 9842): the filter that offers a response MultiCompressUseAsDictionary
// covers (Use-As-Dictionary) and keeps its bytes, when they are the same for every client.
#pragma once

#include <httpd.h>

namespace mc::httpd {

/// insert_filter: the learning filter on responses MultiCompressUseAsDictionary offers.
void insert_dictionary_filter(request_rec* r) noexcept;
/// Registers MULTICOMPRESS_DICTIONARY (before every compressing filter, after content filters).
void register_dictionary_filter();

}  // namespace mc::httpd
