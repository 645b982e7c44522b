// SPDX-License-Identifier: Apache-2.0
// RFC 9651 Dictionary parsing, written from its section 4.2 algorithms (each function names the
// section it follows).
#include "mc/structured_field.h"

#include <algorithm>
#include <cstdint>

namespace mc::sf {
namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_lcalpha(char c) {
    return c >= 'a' && c <= 'z';
}
bool is_alpha(char c) {
    return is_lcalpha(c) || (c >= 'A' && c <= 'Z');
}
// RFC 9110 §5.6.2 tchar.
bool is_tchar(char c) {
    if (is_alpha(c) || is_digit(c)) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
int b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (is_digit(c)) return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1fu;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0fu;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07u;
        } else {
            return false;
        }
        for (std::size_t k = 1; k <= n; ++k) {
            if (i + k >= s.size()) return false;
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3fu);
        }
        constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
        if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += n + 1;
    }
    return true;
}

class Parser {
public:
    explicit Parser(std::string_view in) : in_(in) {}

    // §4.2: the field as a whole.
    Result<std::vector<Member>> field() {
        discard_sp();
        std::vector<Member> out;
        if (!dictionary(out)) return Status{Code::kInvalidArgument, error_};
        discard_sp();
        if (!in_.empty()) return Status{Code::kInvalidArgument, "characters after the dictionary"};
        return out;
    }

private:
    bool fail(const char* why) {
        error_ = why;
        return false;
    }
    [[nodiscard]] bool at(char c) const { return !in_.empty() && in_.front() == c; }
    char take() {
        const char c = in_.front();
        in_.remove_prefix(1);
        return c;
    }
    void discard_sp() {
        while (at(' ')) in_.remove_prefix(1);
    }
    void discard_ows() {
        while (at(' ') || at('\t')) in_.remove_prefix(1);
    }

    // §4.2.2
    bool dictionary(std::vector<Member>& out) {
        while (!in_.empty()) {
            Member m;
            if (!key(m.key)) return false;
            if (at('=')) {
                take();
                if (!item_or_list(m)) return false;
            } else {
                m.kind = Kind::kBoolean;
                m.bytes = "1";
                if (!parameters()) return false;
            }
            const auto same = std::find_if(out.begin(), out.end(),
                                           [&](const Member& old) { return old.key == m.key; });
            if (same != out.end()) {
                *same = std::move(m);
            } else {
                out.push_back(std::move(m));
            }
            discard_ows();
            if (in_.empty()) return true;
            if (take() != ',') return fail("members not separated by a comma");
            discard_ows();
            if (in_.empty()) return fail("a comma at the end");
        }
        return true;
    }

    // §4.2.1.1
    bool item_or_list(Member& m) {
        if (at('(')) {
            m.kind = Kind::kInnerList;
            return inner_list();
        }
        return bare_item(m.kind, m.bytes) && parameters();
    }

    // §4.2.1.2
    bool inner_list() {
        take();  // '('
        while (!in_.empty()) {
            discard_sp();
            if (at(')')) {
                take();
                return parameters();
            }
            Kind kind{};
            std::string ignored;
            if (!bare_item(kind, ignored) || !parameters()) return false;
            if (!at(' ') && !at(')')) return fail("inner list items not separated by a space");
        }
        return fail("an inner list without its ')'");
    }

    // §4.2.3.1
    bool bare_item(Kind& kind, std::string& out) {
        if (in_.empty()) return fail("a missing value");
        const char c = in_.front();
        if (c == '-' || is_digit(c)) return number(kind, out);
        if (c == '"') {
            kind = Kind::kString;
            return string(out);
        }
        if (c == '*' || is_alpha(c)) {
            kind = Kind::kToken;
            return token(out);
        }
        if (c == ':') {
            kind = Kind::kByteSequence;
            return byte_sequence(out);
        }
        if (c == '?') {
            kind = Kind::kBoolean;
            return boolean(out);
        }
        if (c == '@') {
            kind = Kind::kDate;
            take();
            Kind number_kind{};
            return number(number_kind, out) &&
                   (number_kind == Kind::kInteger || fail("a date that is not an integer"));
        }
        if (c == '%') {
            kind = Kind::kDisplayString;
            return display_string(out);
        }
        return fail("a value of no known type");
    }

    // §4.2.3.2
    bool parameters() {
        while (at(';')) {
            take();
            discard_sp();
            std::string name;
            if (!key(name)) return false;
            if (at('=')) {
                take();
                Kind kind{};
                std::string ignored;
                if (!bare_item(kind, ignored)) return false;
            }
        }
        return true;
    }

    // §4.2.3.3
    bool key(std::string& out) {
        if (in_.empty() || !(is_lcalpha(in_.front()) || in_.front() == '*')) {
            return fail("a key that does not start with a lowercase letter or '*'");
        }
        while (!in_.empty()) {
            const char c = in_.front();
            if (!is_lcalpha(c) && !is_digit(c) && c != '_' && c != '-' && c != '.' && c != '*')
                break;
            out += take();
        }
        return true;
    }

    // §4.2.4
    bool number(Kind& kind, std::string& out) {
        kind = Kind::kInteger;
        if (at('-')) out += take();
        if (in_.empty() || !is_digit(in_.front())) return fail("a number without digits");
        std::size_t digits = 0;
        std::size_t dot = 0;
        while (!in_.empty()) {
            const char c = in_.front();
            if (is_digit(c)) {
                out += take();
                ++digits;
            } else if (kind == Kind::kInteger && c == '.') {
                if (digits > 12) return fail("a decimal with more than 12 integer digits");
                out += take();
                kind = Kind::kDecimal;
                dot = digits;
            } else {
                break;
            }
            if (kind == Kind::kInteger && digits > 15) return fail("an integer over 15 digits");
            if (kind == Kind::kDecimal && digits + 1 > 16) return fail("a decimal too long");
        }
        if (kind == Kind::kDecimal && (out.back() == '.' || digits - dot > 3)) {
            return fail("a decimal with no or more than 3 fraction digits");
        }
        return true;
    }

    // §4.2.5
    bool string(std::string& out) {
        take();  // '"'
        while (!in_.empty()) {
            const char c = take();
            if (c == '\\') {
                if (in_.empty() || (in_.front() != '"' && in_.front() != '\\')) {
                    return fail("a bad escape in a string");
                }
                out += take();
            } else if (c == '"') {
                return true;
            } else if (static_cast<unsigned char>(c) < 0x20 ||
                       static_cast<unsigned char>(c) > 0x7e) {
                return fail("a string with a character outside printable ASCII");
            } else {
                out += c;
            }
        }
        return fail("a string without its closing quote");
    }

    // §4.2.6
    bool token(std::string& out) {
        out += take();
        while (!in_.empty() && (is_tchar(in_.front()) || at(':') || at('/'))) out += take();
        return true;
    }

    // §4.2.7: padding may be left out; nothing but base64 characters.
    bool byte_sequence(std::string& out) {
        take();  // ':'
        const std::size_t end = in_.find(':');
        if (end == std::string_view::npos) return fail("a byte sequence without its closing ':'");
        std::string_view b64 = in_.substr(0, end);
        in_.remove_prefix(end + 1);
        while (!b64.empty() && b64.back() == '=' && b64.size() % 4 != 1) b64.remove_suffix(1);
        if (b64.size() % 4 == 1) return fail("a byte sequence that is not base64");
        std::uint32_t acc = 0;
        int bits = 0;
        for (const char c : b64) {
            const int v = b64_value(c);
            if (v < 0) return fail("a byte sequence that is not base64");
            acc = ((acc << 6) | static_cast<std::uint32_t>(v)) & 0xffffffu;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out += static_cast<char>((acc >> bits) & 0xffu);
            }
        }
        return true;
    }

    // §4.2.8
    bool boolean(std::string& out) {
        take();  // '?'
        if (at('0') || at('1')) {
            out += take();
            return true;
        }
        return fail("a boolean that is not ?0 or ?1");
    }

    // §4.2.10
    bool display_string(std::string& out) {
        take();  // '%'
        if (!at('"')) return fail("a display string without its quote");
        take();
        while (!in_.empty()) {
            const char c = take();
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u > 0x7e) return fail("a display string with a raw non-ASCII byte");
            if (c == '%') {
                int v = 0;
                for (int k = 0; k < 2; ++k) {
                    const char h = in_.empty() ? '\0' : take();
                    if (is_digit(h)) {
                        v = v * 16 + (h - '0');
                    } else if (h >= 'a' && h <= 'f') {
                        v = v * 16 + (h - 'a' + 10);
                    } else {
                        return fail("a display string with a bad percent-encoding");
                    }
                }
                out += static_cast<char>(v);
            } else if (c == '"') {
                return valid_utf8(out) || fail("a display string that is not UTF-8");
            } else {
                out += c;
            }
        }
        return fail("a display string without its closing quote");
    }

    std::string_view in_;
    const char* error_ = "not a dictionary";
};

}  // namespace

Result<std::vector<Member>> parse_dictionary(std::string_view value) {
    return Parser(value).field();
}

std::string base64(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t v =
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
            static_cast<unsigned char>(bytes[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out += kB64[(v >> s) & 63];
    }
    const std::size_t left = bytes.size() - i;
    if (left > 0) {
        std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
        if (left == 2)
            v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += left == 2 ? kB64[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

}  // namespace mc::sf
