// SPDX-License-Identifier: Apache-2.0
// A thread's last parse of a request header: most requests send one of a few values, so a thread
// that parsed one keeps it for the next request with the same value.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace mc {

/// The last value (up to N bytes) a thread parsed and what `parse` made of it. Plain arrays and a
/// trivially destructible result: a thread_local with a destructor would pin the module across a
/// graceful restart. A longer value is parsed every time.
template <std::size_t N, class V>
class LastParse {
public:
    static_assert(std::is_trivially_destructible_v<V>);

    /// What `parse(value)` returns, parsed again only when `value` is not the last one.
    template <class Parse>
    const V& of(std::string_view value, Parse parse) {
        if (!valid_ || std::string_view(text_.data(), len_) != value) {
            parsed_ = parse(value);
            valid_ = value.size() <= N;
            len_ = value.copy(text_.data(), N);
        }
        return parsed_;
    }

private:
    std::array<char, N> text_{};
    std::size_t len_ = 0;
    V parsed_{};
    bool valid_ = false;
};

}  // namespace mc
