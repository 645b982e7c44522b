// SPDX-License-Identifier: Apache-2.0
// Sink helpers and the in-memory StringSink.
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

std::span<std::byte> StringSink::reserve() {
    reserved_at_ = out_.size();
    out_.resize(reserved_at_ + chunk_);
    return {reinterpret_cast<std::byte*>(out_.data() + reserved_at_), chunk_};
}

Status StringSink::commit(std::size_t used) {
    out_.resize(reserved_at_ + std::min(used, chunk_));
    return Status::ok();
}

std::span<std::byte> MemStringSink::reserve() {
    reserved_at_ = out_.size();
    out_.resize(reserved_at_ + chunk_);
    return {reinterpret_cast<std::byte*>(out_.data() + reserved_at_), chunk_};
}

Status MemStringSink::commit(std::size_t used) {
    out_.resize(reserved_at_ + std::min(used, chunk_));
    return Status::ok();
}

}  // namespace mc
