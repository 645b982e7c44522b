// SPDX-License-Identifier: Apache-2.0
// Keys of the per-child memos (savings, file versions, a file's dictionary hash) and the origin
// string: built on every response, so without printf and without temporaries.
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

/// Writes `n` as its bytes in memory at `out` (fixed width, so a key of a variable-length path
/// followed by such numbers stays unambiguous); returns the end.
template <class N>
char* put_raw(char* out, N n) {
    std::memcpy(out, &n, sizeof n);
    return out + sizeof n;
}

/// Appends `n` as put_raw writes it.
template <class N>
void append_raw(std::string& key, N n) {
    char raw[sizeof n];
    put_raw(raw, n);
    key.append(raw, sizeof n);
}

}  // namespace mc::httpd
