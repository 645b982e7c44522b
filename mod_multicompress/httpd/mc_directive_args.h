// SPDX-License-Identifier: Apache-2.0
// How every directive handler is written: noexcept, its body run through guarded() (the one
// fallback for an exception), errors from fail() naming the directive (httpd adds the file and
// line), and one parser per kind of value (size, whole number, ENC N, keyword).
#pragma once

#include <httpd.h>
#include <http_config.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "mc/config.h"
#include "mc/params.h"
#include "mc/status.h"

namespace mc::httpd::directive {

/// The section's mc::Config (the handler's `mconfig`).
inline mc::Config& config(void* mconfig) {
    return *static_cast<mc::Config*>(mconfig);
}

/// "Directive: why (got 'arg')".
const char* fail(cmd_parms* cmd, const char* why, const char* arg);
inline const char* fail(cmd_parms* cmd, mc::Status st, const char* arg) {
    return fail(cmd, st.reason(), arg);
}

/// Runs `body` (returning an error message or nullptr); an exception becomes "internal error".
template <class F>
const char* guarded(cmd_parms* cmd, F&& body) noexcept {
    try {
        return std::forward<F>(body)();
    } catch (...) {
        return fail(cmd, "internal error while parsing", "");
    }
}

/// A size: digits with an optional K, M or G (binary), from `lo` to `hi` bytes.
const char* size(cmd_parms* cmd, const char* arg, std::int64_t lo, std::int64_t hi,
                 std::int64_t& out);
/// A whole number from `lo` to `hi`.
const char* whole(cmd_parms* cmd, const char* arg, std::int64_t lo, std::int64_t hi,
                  std::int64_t& out);
template <class T>
const char* whole_into(cmd_parms* cmd, const char* arg, std::int64_t lo, std::int64_t hi, T& out) {
    std::int64_t v = 0;
    if (const char* err = whole(cmd, arg, lo, hi, v)) return err;
    out = static_cast<T>(v);
    return nullptr;
}
/// "ENC N": a configuration encoding, then a number `set` accepts in `range_of(ENC)`; `what`
/// names the number in the message ("level", "log2 window").
using EncodingSetter = mc::Status (*)(mc::Config&, std::string_view, std::string_view);
const char* per_encoding(cmd_parms* cmd, void* mconfig, const char* enc, const char* value,
                         EncodingSetter set, mc::Range (*range_of)(mc::Coding), const char* what);
/// The value of a `NAME=VALUE` argument (`prefix` is "NAME="), without one pair of double quotes
/// around it: httpd keeps the quotes of `match="/*"` inside the word, and an administrator
/// writes them as in the header the value ends up in.
inline std::string_view option_value(std::string_view arg, std::string_view prefix) {
    std::string_view v = arg.substr(prefix.size());
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
}
/// One of `words` (case-insensitive): its index in `out`.
const char* keyword(cmd_parms* cmd, const char* arg, std::initializer_list<const char*> words,
                    int& out);

/// C++ sees cmd_func as `const char* (*)()`: the cast every C++ httpd module makes (through
/// void(*)(), the generic function pointer type GCC accepts without a warning).
template <class F>
cmd_func fn(F* f) {
    return reinterpret_cast<cmd_func>(reinterpret_cast<void (*)()>(f));
}

/// Where the module's directives may appear: server, <VirtualHost>, sections, and .htaccess
/// with AllowOverride FileInfo.
inline constexpr int kEverywhere = RSRC_CONF | ACCESS_CONF | OR_FILEINFO;

}  // namespace mc::httpd::directive
