// SPDX-License-Identifier: Apache-2.0
// Fuzz target: what a request or the store gives the dictionary code (RFC 9842).
//
// Input: a mode byte, then the data. Mode 0: Available-Dictionary and Dictionary-ID values;
// mode 1: a dictionary head as read from the store (the hash it must be for is taken from the
// input, so well-formed heads are reached); mode 2: a pattern, a NUL, a path.
//
// Invariants: no crash; a parsed Available-Dictionary formats back to a value that parses to the
// same hash; a parsed Dictionary-ID is at most 1024 characters; a decoded head re-encodes to the
// same bytes and is for the expected hash; a pattern that passes the check matches itself with
// each `*` taken as empty, and "*" matches every path.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "mc/dictionary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t mode = data[0] % 3;
    const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    if (mode == 0) {
        if (const auto h = mc::parse_available_dictionary(in)) {
            const auto again = mc::parse_available_dictionary(mc::format_available_dictionary(*h));
            MC_FUZZ_CHECK(again && *again == *h);
            MC_FUZZ_CHECK(mc::hash_hex(*h).size() == 64);
        }
        if (const auto id = mc::parse_dictionary_id(in)) MC_FUZZ_CHECK(id->size() <= 1024);
    } else if (mode == 1) {
        mc::DictionaryHash expected{};
        if (in.size() >= 4 + expected.size()) std::memcpy(expected.data(), in.data() + 4, 32);
        const auto bytes = std::as_bytes(std::span(in.data(), in.size()));
        if (const auto head = mc::decode_dictionary_head(bytes, expected)) {
            MC_FUZZ_CHECK(head->hash == expected);
            MC_FUZZ_CHECK(head->size > 0 && head->size <= mc::kMaxDictionarySize);
            MC_FUZZ_CHECK(mc::encode_dictionary_head(*head) == in);
        }
    } else {
        const std::size_t nul = in.find('\0');
        const std::string_view pattern = in.substr(0, nul);
        const std::string_view path = nul == std::string_view::npos ? "" : in.substr(nul + 1);
        (void)mc::pattern_matches(pattern.substr(0, 256), path.substr(0, 1024));
        if (mc::check_dictionary_pattern(pattern).is_ok() && pattern.size() <= 256) {
            std::string literal;
            for (const char c : pattern) {
                if (c != '*') literal += c;
            }
            MC_FUZZ_CHECK(mc::pattern_matches(pattern, literal));
            MC_FUZZ_CHECK(mc::pattern_matches("*", path));
            const std::string header =
                mc::format_use_as_dictionary({pattern, "script style", "id"});
            MC_FUZZ_CHECK(header.starts_with("match=\""));
        }
    }
    return 0;
}
