// SPDX-License-Identifier: Apache-2.0
// Keys of the per-child memos (savings) and the origin string: built on every response, so
// without printf and without temporaries.
#pragma once

#include <charconv>
#include <cstring>
#include <iterator>
#include <string>

namespace mc::httpd {

/// Appends `sep`, then `n` in decimal.
template <class N>
void append_decimal(std::string& key, char sep, N n) {
    char digits[24];
    key += sep;
    key.append(digits, std::to_chars(std::begin(digits), std::end(digits), n).ptr);
}

/// Appends `n` as its bytes in memory (fixed width, so a key of a variable-length path followed
/// by such numbers stays unambiguous).
template <class N>
void append_raw(std::string& key, N n) {
    char raw[sizeof n];
    std::memcpy(raw, &n, sizeof n);
    key.append(raw, sizeof n);
}

}  // namespace mc::httpd
