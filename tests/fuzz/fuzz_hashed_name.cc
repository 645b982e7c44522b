// SPDX-License-Identifier: Apache-2.0
// Fuzz target: content-hashed file names (mc/hashed_name.h) and delta sidecar names
// (mc/dcz_delta.h) from any URL path.
//
// Input: the path. Invariants: no crash; a delta sidecar name taken apart puts back together and
// its source is not itself empty; a parsed name's parts put back together are the path,
// the separator is '.' or '-', the hash looks like one and the extension holds no separator but
// '.'; for a path that starts with '/' the family's pattern passes check_dictionary_pattern and
// matches the path; parsing is a function of the path (a copy parses the same); a sibling with
// another hash of the same shape is a member of the same family.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "mc/dcz_delta.h"
#include "mc/dictionary.h"
#include "mc/hashed_name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path(reinterpret_cast<const char*>(data), size);
    if (const auto delta = mc::parse_delta_sidecar_name(path)) {
        MC_FUZZ_CHECK(delta->hex.size() == mc::kDeltaSidecarHexDigits);
        MC_FUZZ_CHECK(!delta->source.empty() && delta->source.back() != '/');
        MC_FUZZ_CHECK(std::string(delta->source) + std::string(mc::kDeltaSidecarInfix) +
                          std::string(delta->hex) ==
                      path);
    }
    const std::optional<mc::HashedName> h = mc::parse_hashed_name(path);
    (void)mc::looks_like_content_hash(path);
    if (!h) return 0;

    MC_FUZZ_CHECK(h->separator == '.' || h->separator == '-');
    MC_FUZZ_CHECK(!h->stem.empty() && !h->ext.empty());
    MC_FUZZ_CHECK(mc::looks_like_content_hash(h->hash));
    MC_FUZZ_CHECK(h->id() == h->hash);
    MC_FUZZ_CHECK(h->ext.find_first_of("/-") == std::string_view::npos);
    MC_FUZZ_CHECK(h->hash.find_first_of("/.") == std::string_view::npos);
    MC_FUZZ_CHECK(h->stem.find('/') == std::string_view::npos);
    const std::string joined = std::string(h->dir) + std::string(h->stem) + h->separator +
                               std::string(h->hash) + "." + std::string(h->ext);
    MC_FUZZ_CHECK(joined == path);
    MC_FUZZ_CHECK(h->same_family(*h));

    const std::string pattern = h->match_pattern();
    if (!path.empty() && path.front() == '/') {
        MC_FUZZ_CHECK(mc::check_dictionary_pattern(pattern).is_ok());
        MC_FUZZ_CHECK(mc::pattern_matches(pattern, path));
    }

    const std::string copy = path;
    const std::optional<mc::HashedName> again = mc::parse_hashed_name(copy);
    MC_FUZZ_CHECK(again && again->hash == h->hash && again->stem == h->stem &&
                  again->ext == h->ext && again->separator == h->separator);

    // Another version: the same name with a hash of the same shape (each character replaced by
    // another of its class). It parses to the same family, with the new hash.
    std::string other = path;
    const std::size_t at = h->dir.size() + h->stem.size() + 1;
    for (std::size_t i = 0; i < h->hash.size(); ++i) {
        char& c = other[at + i];
        if (c >= '0' && c <= '8') {
            ++c;
        } else if (c == '9') {
            c = '0';
        } else if (c == 'a' || c == 'A') {
            ++c;  // 'b'/'B' keeps a hex hash hex
        }
    }
    if (const auto o = mc::parse_hashed_name(other); o && o->hash.size() == h->hash.size() &&
                                                     o->dir.size() == h->dir.size() &&
                                                     o->stem.size() == h->stem.size()) {
        MC_FUZZ_CHECK(o->same_family(*h));
        MC_FUZZ_CHECK(o->match_pattern() == pattern);
    }
    return 0;
}
