// SPDX-License-Identifier: Apache-2.0
// Content-hashed file names: which name part is a bundler's hash, and the family's match pattern.
#include "mc/hashed_name.h"

#include <cstring>

namespace mc {

namespace {

constexpr std::size_t kMinHash = 8;
constexpr std::size_t kMaxHash = 64;
constexpr std::size_t kRollupHash = 8;  // Rollup's (Vite's) default length
constexpr std::size_t kMaxExtPart = 16;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}
bool is_upper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool is_alnum(char c) {
    return is_digit(c) || is_lower(c) || is_upper(c);
}

// 0 digit, 1 lower, 2 upper, 3 '_' or '-'.
int char_class(char c) {
    if (is_digit(c)) return 0;
    if (is_lower(c)) return 1;
    if (is_upper(c)) return 2;
    return 3;
}

// Characters a match pattern can carry (check_dictionary_pattern): printable ASCII except a
// space and the URLPattern syntax this server does not evaluate, and '*' (the wildcard itself).
bool pattern_safe(std::string_view path) {
    for (const char c : path) {
        if (c <= 0x20 || c >= 0x7f || std::strchr("*:(){}+?#\\\"", c) != nullptr) return false;
    }
    return true;
}

// "js", "min.js", "js.map": dot-separated parts of letters and digits, the last with a letter.
bool valid_ext(std::string_view ext) {
    if (ext.empty()) return false;
    std::size_t part = 0;
    bool letter = false;
    for (const char c : ext) {
        if (c == '.') {
            if (part == 0) return false;
            part = 0;
            letter = false;
            continue;
        }
        if (!is_alnum(c) || ++part > kMaxExtPart) return false;
        letter = letter || !is_digit(c);
    }
    return part != 0 && letter;
}

// A candidate split of `name`: the hash is name[hash_begin, hash_end), the separator the
// character before it, the extension what follows name[hash_end] ('.').
struct Split {
    std::size_t hash_begin = 0;
    std::size_t hash_end = 0;
};

bool stem_ok(std::string_view name, std::size_t hash_begin) {
    // A non-empty stem that does not itself end in a separator ("a..HASH.js", "a--HASH.js").
    if (hash_begin < 2) return false;
    const char last = name[hash_begin - 2];
    return last != '.' && last != '-';
}

// `name.HASH.ext`: the dot-separated part nearest the extension that looks like a hash.
std::optional<Split> dot_form(std::string_view name) {
    std::optional<Split> best;
    std::size_t begin = name.find('.');
    while (begin != std::string_view::npos) {
        const std::size_t start = begin + 1;
        const std::size_t end = name.find('.', start);
        if (end == std::string_view::npos) break;
        if (stem_ok(name, start) && valid_ext(name.substr(end + 1)) &&
            looks_like_content_hash(name.substr(start, end - start))) {
            best = Split{start, end};
        }
        begin = end;
    }
    return best;
}

// `name-HASH.ext`: the hash runs from a '-' to a '.', with no '.' inside. A Rollup hash may hold
// '-' itself, so several '-' can start one: the shortest that looks like a hash wins (a stem
// holds words joined by '-' more often than a hash holds a '-').
std::optional<Split> dash_form(std::string_view name) {
    std::optional<Split> best;
    for (std::size_t end = name.find('.'); end != std::string_view::npos;
         end = name.find('.', end + 1)) {
        if (!valid_ext(name.substr(end + 1))) continue;
        const std::size_t dot = name.rfind('.', end - 1);  // end > 0: names never start with '.'
        std::size_t dash = name.find('-', dot == std::string_view::npos ? 0 : dot + 1);
        std::optional<Split> here;
        for (; dash != std::string_view::npos && dash + 1 < end; dash = name.find('-', dash + 1)) {
            const std::size_t start = dash + 1;
            if (stem_ok(name, start) && looks_like_content_hash(name.substr(start, end - start))) {
                here = Split{start, end};
            }
        }
        if (here) best = here;
    }
    return best;
}

}  // namespace

bool looks_like_content_hash(std::string_view s) {
    if (s.size() < kMinHash || s.size() > kMaxHash) return false;
    bool digit = false, lower = false, upper = false, dash = false, other = false;
    bool hex_lower = true, hex_upper = true, base32 = true;
    for (const char c : s) {
        if (!is_alnum(c) && c != '_' && c != '-') return false;
        digit = digit || is_digit(c);
        lower = lower || is_lower(c);
        upper = upper || is_upper(c);
        dash = dash || c == '-';
        other = other || c == '_' || c == '-';
        hex_lower = hex_lower && (is_digit(c) || (c >= 'a' && c <= 'f'));
        hex_upper = hex_upper && (is_digit(c) || (c >= 'A' && c <= 'F'));
        base32 = base32 && (is_upper(c) || (c >= '2' && c <= '7'));
    }
    if (dash && s.size() != kRollupHash) return false;
    const bool letter = lower || upper;
    if ((hex_lower || hex_upper || base32) && digit && letter) return true;
    std::size_t changes = 0;
    for (std::size_t i = 1; i < s.size(); ++i) {
        if (char_class(s[i]) != char_class(s[i - 1])) ++changes;
    }
    const std::size_t pairs = s.size() - 1;
    if (!digit && !other) return lower && upper && changes * 2 >= pairs;
    const int classes = int{digit} + int{lower} + int{upper} + int{other};
    return classes >= 2 && changes * 5 >= pairs * 2;
}

std::optional<HashedName> parse_hashed_name(std::string_view path) {
    if (!pattern_safe(path)) return std::nullopt;
    const std::size_t slash = path.rfind('/');
    const std::size_t name_begin = slash == std::string_view::npos ? 0 : slash + 1;
    const std::string_view name = path.substr(name_begin);
    if (name.empty() || name.size() > kMaxHashedNameLength || name.front() == '.') {
        return std::nullopt;
    }
    std::optional<Split> split = dot_form(name);
    // The nearer the extension, the likelier a hash; at the same place, the '.' form (its hash is
    // the whole part, where the '-' form would take only its end).
    if (const std::optional<Split> d = dash_form(name);
        d && (!split || d->hash_end > split->hash_end)) {
        split = d;
    }
    if (!split) return std::nullopt;
    HashedName h;
    h.dir = path.substr(0, name_begin);
    h.stem = name.substr(0, split->hash_begin - 1);
    h.separator = name[split->hash_begin - 1];
    h.hash = name.substr(split->hash_begin, split->hash_end - split->hash_begin);
    h.ext = name.substr(split->hash_end + 1);
    return h;
}

std::string HashedName::match_pattern() const {
    std::string out;
    out.reserve(dir.size() + stem.size() + ext.size() + 3);
    out.append(dir);
    out.append(stem);
    out += separator;
    out += "*.";
    out.append(ext);
    return out;
}

}  // namespace mc
