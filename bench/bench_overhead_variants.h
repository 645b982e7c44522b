// SPDX-License-Identifier: Apache-2.0
// bench_overhead's variants (bench_overhead_variants.cc): the ways a server can drive libbrotlienc
// and zlib for one whole response, each a Run, and the decoders that check their output.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace bench_overhead {

/// One way of compressing a body: returns the output (kept only for the check) and its size.
using Run = std::function<std::size_t(const std::string& in, std::string* keep)>;

struct Variant {
    std::string name;
    Run run;
};

/// Prints "bench_overhead: WHAT" and exits with status 1.
[[noreturn]] void die(const std::string& what);

/// The br-Q variants, in report order (the first is the one the others are compared with).
std::vector<Variant> brotli_variants(int q);
/// The gzip-LEVEL variants, in report order.
std::vector<Variant> gzip_variants(int level);

/// The decoded body, or "<undecodable>"; `expect` is the body's length.
std::string brotli_decode(const std::string& c, std::size_t expect);
std::string gzip_decode(const std::string& c, std::size_t expect);

}  // namespace bench_overhead
