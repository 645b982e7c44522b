// SPDX-License-Identifier: Apache-2.0
// Where encoders write: a sink that lends its own memory, so output is never copied twice.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "mc/alloc.h"
#include "mc/status.h"

namespace mc {

/// An output sink. The encoder asks for writable space with `reserve()`, lets the library write
/// into it, then reports how much it used with `commit()`. The space stays valid until commit.
class Sink {
public:
    virtual ~Sink() = default;
    /// Writable memory, never empty.
    virtual std::span<std::byte> reserve() = 0;
    /// Marks the first `used` bytes of the last reserve() as output. `used` may be 0.
    virtual Status commit(std::size_t used) = 0;

    /// Copies `data` in (for callers that have bytes already).
    Status append(std::span<const std::byte> data);
};

/// A sink that collects everything into a string type `Str` (std::string or mc::MemString).
template <class Str>
class BasicStringSink final : public Sink {
public:
    explicit BasicStringSink(std::size_t chunk = 16384) : chunk_(chunk) {}
    std::span<std::byte> reserve() override {
        reserved_at_ = out_.size();
        out_.resize(reserved_at_ + chunk_);
        return {reinterpret_cast<std::byte*>(out_.data() + reserved_at_), chunk_};
    }
    Status commit(std::size_t used) override {
        out_.resize(reserved_at_ + std::min(used, chunk_));
        return Status::ok();
    }
    [[nodiscard]] const Str& data() const { return out_; }
    Str take() { return std::move(out_); }
    void clear() { out_.clear(); }

private:
    Str out_;
    std::size_t chunk_;
    std::size_t reserved_at_ = 0;
};

/// Everything into a std::string (tests, tools).
using StringSink = BasicStringSink<std::string>;
/// Everything into an mc::MemString: for output of body size kept in the server (the cache).
using MemStringSink = BasicStringSink<MemString>;

}  // namespace mc
