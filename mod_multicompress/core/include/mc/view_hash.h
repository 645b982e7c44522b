// SPDX-License-Identifier: Apache-2.0
// A transparent hash for maps keyed by std::string: a lookup by a std::string_view (built on the
// stack or in a pool) hashes the same bytes without making a std::string first.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace mc {

/// std::hash of the bytes, for std::unordered_map<std::string, V, ViewHash, std::equal_to<>>.
/// Not noexcept: libstdc++ then keeps each node's hash (as for std::hash<std::string>) instead
/// of hashing node keys again while it walks a bucket.
struct ViewHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace mc
