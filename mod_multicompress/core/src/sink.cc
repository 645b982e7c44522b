// SPDX-License-Identifier: Apache-2.0
// Sink helpers.
#include "mc/sink.h"

#include <algorithm>
#include <cstring>

namespace mc {

Status Sink::append(std::span<const std::byte> data) {
    while (!data.empty()) {
        const std::span<std::byte> space = reserve();
        const std::size_t n = std::min(space.size(), data.size());
        std::memcpy(space.data(), data.data(), n);
        if (Status st = commit(n); !st.is_ok()) return st;
        data = data.subspan(n);
    }
    return Status::ok();
}

}  // namespace mc
