// SPDX-License-Identifier: Apache-2.0
// Where encoders write: a sink that lends its own memory, so output is never copied twice.
#pragma once

#include <cstddef>
#include <span>
#include <string>

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

/// A sink that collects everything into a string (tests, tools, the cache).
class StringSink final : public Sink {
public:
    explicit StringSink(std::size_t chunk = 16384) : chunk_(chunk) {}
    std::span<std::byte> reserve() override;
    Status commit(std::size_t used) override;
    [[nodiscard]] const std::string& data() const { return out_; }
    std::string take() { return std::move(out_); }
    void clear() { out_.clear(); }

private:
    std::string out_;
    std::size_t chunk_;
    std::size_t reserved_at_ = 0;
};

/// StringSink over mc::MemString: for output of body size kept in the server (the cache).
class MemStringSink final : public Sink {
public:
    explicit MemStringSink(std::size_t chunk = 16384) : chunk_(chunk) {}
    std::span<std::byte> reserve() override;
    Status commit(std::size_t used) override;
    [[nodiscard]] const MemString& data() const { return out_; }

private:
    MemString out_;
    std::size_t chunk_;
    std::size_t reserved_at_ = 0;
};

}  // namespace mc
