// SPDX-License-Identifier: Apache-2.0
// The parsers and the error fallback every directive handler uses (mc_directive_args.h).
#include "mc_directive_args.h"

#include <apr_strings.h>

#include <string>

#include "mc/headers.h"

namespace mc::httpd::directive {

const char* fail(cmd_parms* cmd, const char* why, const char* arg) {
    return apr_psprintf(cmd->pool, "%s: %s (got '%s')", cmd->cmd->name, why, arg);
}

const char* size(cmd_parms* cmd, const char* arg, std::int64_t lo, std::int64_t hi,
                 std::int64_t& out) {
    if (mc::parse_size(arg, lo, hi, out).is_ok()) return nullptr;
    return fail(cmd,
                apr_psprintf(cmd->pool,
                             "expects a size from %" APR_INT64_T_FMT " to %" APR_INT64_T_FMT
                             " bytes, digits with an optional K, M or G",
                             static_cast<apr_int64_t>(lo), static_cast<apr_int64_t>(hi)),
                arg);
}

const char* whole(cmd_parms* cmd, const char* arg, std::int64_t lo, std::int64_t hi,
                  std::int64_t& out) {
    if (mc::parse_int(arg, lo, hi, out).is_ok()) return nullptr;
    return fail(
        cmd,
        apr_psprintf(cmd->pool,
                     "expects a whole number from %" APR_INT64_T_FMT " to %" APR_INT64_T_FMT,
                     static_cast<apr_int64_t>(lo), static_cast<apr_int64_t>(hi)),
        arg);
}

const char* per_encoding(cmd_parms* cmd, void* mconfig, const char* enc, const char* value,
                         EncodingSetter set, mc::Range (*range_of)(mc::Coding), const char* what) {
    mc::Coding c{};
    if (mc::Status st = mc::parse_encoding(enc, c); !st.is_ok()) return fail(cmd, st, enc);
    if (set(config(mconfig), enc, value).is_ok()) return nullptr;
    const mc::Range r = range_of(c);
    return fail(cmd,
                apr_psprintf(cmd->pool, "%s for %s must be a whole number from %d to %d", what, enc,
                             r.min, r.max),
                value);
}

const char* keyword(cmd_parms* cmd, const char* arg, std::initializer_list<const char*> words,
                    int& out) {
    int i = 0;
    std::string all;
    for (const char* w : words) {
        if (mc::iequals(arg, w)) {
            out = i;
            return nullptr;
        }
        all += all.empty() ? "" : (i + 1 == static_cast<int>(words.size()) ? " or " : ", ");
        all += w;
        ++i;
    }
    return fail(cmd, apr_pstrcat(cmd->pool, "expects ", all.c_str(), nullptr), arg);
}

}  // namespace mc::httpd::directive
