// SPDX-License-Identifier: Apache-2.0
// Accept-Encoding parsing (RFC 9110 §12.5.3, weights §12.4.2).
#include "mc/accept_encoding.h"

#include <algorithm>

namespace mc {

namespace {

bool is_tchar(char c) {
    // RFC 9110 §5.6.2 token characters.
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    switch (c) {
        case '!':
        case '#':
        case '$':
        case '%':
        case '&':
        case '\'':
        case '*':
        case '+':
        case '-':
        case '.':
        case '^':
        case '_':
        case '`':
        case '|':
        case '~': return true;
        default: return false;
    }
}

bool is_token(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

// Returns the weight of one list member, kQUnset if the member must be ignored.
// `params` is everything after the first ';'.
int member_weight(std::string_view params) {
    int q = kQMax;
    while (!params.empty()) {
        const auto semi = params.find(';');
        std::string_view param = trim_ows(params.substr(0, semi));
        params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
        if (param.empty()) continue;
        const auto eq = param.find('=');
        if (eq == std::string_view::npos) {
            // "q" without a value is an invalid q (as "q=" is): the entry is dropped.
            if (!is_token(param) || iequals(param, "q")) return kQUnset;
            continue;  // a bare parameter: not ours, ignored
        }
        const std::string_view name = trim_ows(param.substr(0, eq));
        const std::string_view value = trim_ows(param.substr(eq + 1));
        if (iequals(name, "q")) {
            q = parse_qvalue(value);
            if (q == kQUnset) return kQUnset;
        } else if (!is_token(name)) {
            return kQUnset;
        }
    }
    return q;
}

}  // namespace

int parse_qvalue(std::string_view s) {
    // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
    if (s.empty() || s.size() > 5) return kQUnset;
    const char lead = s[0];
    if (lead != '0' && lead != '1') return kQUnset;
    int value = lead == '1' ? kQMax : 0;
    if (s.size() == 1) return value;
    if (s[1] != '.') return kQUnset;
    int scale = 100;
    for (std::size_t i = 2; i < s.size(); ++i) {
        const char d = s[i];
        if (d < '0' || d > '9') return kQUnset;
        if (lead == '1' && d != '0') return kQUnset;
        value += (d - '0') * scale;
        scale /= 10;
    }
    return value;
}

AcceptEncoding AcceptEncoding::parse(std::string_view header, bool present) {
    AcceptEncoding ae;
    ae.present_ = present;
    while (!header.empty()) {
        const auto comma = header.find(',');
        const std::string_view member = header.substr(0, comma);
        header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);

        const auto semi = member.find(';');
        const std::string_view name = trim_ows(member.substr(0, semi));
        if (!is_token(name)) continue;  // empty members ("a,,b") and garbage are ignored
        const int q = member_weight(semi == std::string_view::npos ? std::string_view{}
                                                                   : member.substr(semi + 1));
        if (q == kQUnset) continue;

        int* slot = nullptr;
        if (name == "*") {
            slot = &ae.star_;
        } else if (const auto c = parse_coding(name)) {
            slot = &ae.q_[index(*c)];
        } else {
            continue;  // a coding we do not implement
        }
        // Listed twice: the lowest weight wins, so q=0 anywhere means "never".
        *slot = *slot == kQUnset ? q : std::min(*slot, q);
    }
    return ae;
}

int AcceptEncoding::weight(Coding c) const {
    const int explicit_q = q_[index(c)];
    if (explicit_q != kQUnset) return explicit_q;
    if (c == Coding::kIdentity) {
        // RFC 9110 §12.5.3: identity is acceptable unless excluded by "identity;q=0" or by
        // "*;q=0" with no explicit identity entry.
        return star_ == 0 ? 0 : kQMax;
    }
    return star_ == kQUnset ? 0 : star_;
}

}  // namespace mc
