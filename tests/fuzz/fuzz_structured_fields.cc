// SPDX-License-Identifier: Apache-2.0
// Fuzz target: header values parsed as lists and Dictionaries (RFC 9651): Content-Digest /
// Repr-Digest (RFC 9530) and a request body's Content-Encoding.
//
// Input: the header value (every byte).
//
// Invariants: no crash; a parsed Dictionary has unique keys of the RFC's key syntax; the digest
// field parses exactly when the Dictionary does and every sha-256 / sha-512 member is a byte
// sequence of its digest's size, with the others counted; formatting a parsed digest field and
// parsing it again gives the same members; base64 (sf::base64) of the input round-trips through
// a byte sequence; outer_request_coding names a coding we decode with a rest free of "identity"
// and empty members, or refuses a token that is not one, and a trailing ", identity" or ", ", or a
// leading "identity, ", changes nothing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "mc/coding.h"
#include "mc/digest_fields.h"
#include "mc/request_coding.h"
#include "mc/structured_field.h"

namespace {

bool is_key(std::string_view k) {
    if (k.empty() || !((k[0] >= 'a' && k[0] <= 'z') || k[0] == '*')) return false;
    for (const char c : k) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              std::string_view("_-.*").find(c) != std::string_view::npos)) {
            return false;
        }
    }
    return true;
}

void check_digest_field(std::string_view value) {
    const auto dict = mc::sf::parse_dictionary(value);
    const auto field = mc::parse_digest_field(value);
    if (!dict.is_ok()) {
        MC_FUZZ_CHECK(!field.is_ok());
        return;
    }
    bool known_ok = true;
    std::size_t known = 0;
    for (std::size_t i = 0; i < dict.value().size(); ++i) {
        const mc::sf::Member& m = dict.value()[i];
        MC_FUZZ_CHECK(is_key(m.key));
        for (std::size_t j = 0; j < i; ++j) MC_FUZZ_CHECK(dict.value()[j].key != m.key);
        if (const auto a = mc::parse_digest_algorithm(m.key)) {
            ++known;
            known_ok = known_ok && m.kind == mc::sf::Kind::kByteSequence &&
                       m.bytes.size() == mc::digest_size(*a);
        }
    }
    MC_FUZZ_CHECK(field.is_ok() == known_ok);
    if (!field.is_ok()) return;
    const mc::DigestField& f = field.value();
    MC_FUZZ_CHECK(f.members.size() == known);
    MC_FUZZ_CHECK(f.members.size() + f.unknown == dict.value().size());
    mc::DigestValues values;
    for (const auto& m : f.members) values[static_cast<std::size_t>(m.algorithm)] = m.value;
    MC_FUZZ_CHECK(mc::digest_field_matches(f, values));
    const std::string again = mc::format_digest_field(f, values);
    const auto reparsed = mc::parse_digest_field(again);
    MC_FUZZ_CHECK(reparsed.is_ok());
    MC_FUZZ_CHECK(reparsed.value().unknown == 0);
    MC_FUZZ_CHECK(reparsed.value().members.size() == f.members.size());
    for (std::size_t i = 0; i < f.members.size(); ++i) {
        MC_FUZZ_CHECK(reparsed.value().members[i].algorithm == f.members[i].algorithm);
        MC_FUZZ_CHECK(reparsed.value().members[i].value == f.members[i].value);
    }
}

void check_base64(std::string_view bytes) {
    const auto d = mc::sf::parse_dictionary("a=:" + mc::sf::base64(bytes) + ":");
    MC_FUZZ_CHECK(d.is_ok() && d.value().size() == 1);
    MC_FUZZ_CHECK(d.value()[0].kind == mc::sf::Kind::kByteSequence);
    MC_FUZZ_CHECK(d.value()[0].bytes == bytes);
}

bool same(const mc::RequestCoding& a, const mc::RequestCoding& b) {
    return a.kind == b.kind && a.coding == b.coding && a.rest == b.rest && a.token == b.token;
}

void check_request_coding(std::string_view ce) {
    using Kind = mc::RequestCoding::Kind;
    const mc::RequestCoding rc = mc::outer_request_coding(ce);
    if (rc.kind == Kind::kDecode) {
        MC_FUZZ_CHECK(rc.coding == mc::Coding::kGzip || rc.coding == mc::Coding::kDeflate ||
                      rc.coding == mc::Coding::kBrotli || rc.coding == mc::Coding::kZstd);
        std::string_view rest = rc.rest;
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            const std::string_view item = mc::trim_ows(rest.substr(0, comma));
            MC_FUZZ_CHECK(!item.empty() && !mc::iequals(item, "identity"));
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        }
    } else if (rc.kind == Kind::kUnsupported) {
        MC_FUZZ_CHECK(!rc.token.empty() && !mc::iequals(rc.token, "identity"));
        const auto c = mc::parse_coding(rc.token);
        MC_FUZZ_CHECK(!c || *c == mc::Coding::kDcz);
    }
    const std::string s(ce);
    MC_FUZZ_CHECK(same(rc, mc::outer_request_coding(s + ", identity")));
    MC_FUZZ_CHECK(same(rc, mc::outer_request_coding(s + ", ")));
    MC_FUZZ_CHECK(same(rc, mc::outer_request_coding("identity, " + s)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    check_digest_field(in);
    check_base64(in);
    check_request_coding(in);
    return 0;
}
