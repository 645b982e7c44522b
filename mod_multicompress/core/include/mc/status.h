// SPDX-License-Identifier: Apache-2.0
// mc::Status and mc::Result<T>: error values for the core (no exceptions on the streaming path).
#pragma once

#include <utility>
#include <variant>

namespace mc {

enum class Code {
    kOk,
    kInvalidArgument,
    kOutOfMemory,
    kLibraryError,
    kCorrupt,
    kLimitExceeded,
    kWindowTooLarge,  ///< a stream needs a larger window than the decoder may keep
    kCancelled,
};

/// A code plus a reason. The reason always points at a string with static storage duration
/// (a literal or a library's own static message such as ZSTD_getErrorName), so Status is trivially
/// copyable and never allocates.
class Status {
public:
    constexpr Status() = default;
    constexpr Status(Code code, const char* reason) : code_(code), reason_(reason) {}

    static constexpr Status ok() { return {}; }

    [[nodiscard]] constexpr bool is_ok() const { return code_ == Code::kOk; }
    [[nodiscard]] constexpr Code code() const { return code_; }
    [[nodiscard]] constexpr const char* reason() const { return reason_; }

private:
    Code code_ = Code::kOk;
    const char* reason_ = "ok";
};

/// Either a value or a non-ok Status.
template <class T>
class Result {
public:
    Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
    Result(Status status) : v_(status) {}      // NOLINT(google-explicit-constructor)

    [[nodiscard]] bool is_ok() const { return std::holds_alternative<T>(v_); }
    [[nodiscard]] Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }
    [[nodiscard]] T& value() & { return std::get<T>(v_); }
    [[nodiscard]] const T& value() const& { return std::get<T>(v_); }
    [[nodiscard]] T&& value() && { return std::get<T>(std::move(v_)); }

private:
    std::variant<T, Status> v_;
};

}  // namespace mc
