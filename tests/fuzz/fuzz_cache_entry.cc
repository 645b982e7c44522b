// SPDX-License-Identifier: Apache-2.0
// Fuzz target: cache entries as read back from a shared store (mc::parse_entry), and the
// entries mc::encode_entry makes.
//
// Two parts per input. (1) The whole input is a value found under a fixed key, parsed with and
// without a secret. (2) The data provider builds an entry (identity, level, body, secret or not)
// and damages it: cut short, bytes appended, a byte flipped, another identity expected, or
// another secret.
//
// Invariants: no crash or sanitizer report; an accepted value's body lies inside the value, and
// encoding that body again for the same identity and level gives exactly the value (one entry
// per content: nothing else is accepted); an intact entry parses to exactly its body and level;
// a cut is kTruncated, appended bytes kLengthMismatch, a flipped byte is refused (with the
// secret anywhere; without it anywhere before the MAC trailer), another identity is
// kIdentityMismatch and another secret kBadMac.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "mc/cache_entry.h"
#include "mc/coding.h"

namespace {

constexpr std::string_view kKey = "mc2-0123456789abcdef0123456789abcdef01234567";
constexpr std::string_view kSecret = "fuzz fleet secret";

mc::EntryIdentity fixed_identity(mc::Coding c) {
    mc::EntryIdentity id;
    id.key = kKey;
    id.size = 4096;
    id.mtime = 1'700'000'000'000'000;
    id.inode = 42;
    id.coding = c;
    return id;
}

void check_found_value(std::string_view value) {
    for (mc::Coding c : mc::kAllCompressing) {
        const mc::EntryIdentity id = fixed_identity(c);
        for (std::string_view secret : {std::string_view{}, kSecret}) {
            const mc::ParsedEntry p = mc::parse_entry(value, id, secret);
            if (!p.ok()) continue;
            MC_FUZZ_CHECK(p.body.data() >= value.data());
            MC_FUZZ_CHECK(p.body.data() + p.body.size() <= value.data() + value.size());
            if (!secret.empty() || !p.has_mac) {
                MC_FUZZ_CHECK(mc::encode_entry(id, p.level, p.body, secret) == value);
            }
        }
    }
}

void check_made_entry(FuzzedDataProvider& fdp) {
    const mc::Coding coding = fdp.PickValueInArray(mc::kAllCompressing);
    const std::string key =
        fdp.ConsumeBool() ? std::string(kKey) : fdp.ConsumeRandomLengthString(300);
    mc::EntryIdentity id;
    id.key = key;
    id.size = fdp.ConsumeIntegral<std::int64_t>();
    id.mtime = fdp.ConsumeIntegral<std::int64_t>();
    id.inode = fdp.ConsumeIntegral<std::uint64_t>();
    id.coding = coding;
    const int level = fdp.ConsumeIntegralInRange(-1, 256);
    const std::string secret =
        fdp.ConsumeBool() ? std::string() : fdp.ConsumeRandomLengthString(64);
    enum class Damage { kNone, kCut, kAppend, kFlip, kIdentity, kOtherSecret };
    const Damage damage =
        fdp.PickValueInArray({Damage::kNone, Damage::kCut, Damage::kAppend, Damage::kFlip,
                              Damage::kIdentity, Damage::kOtherSecret});
    const std::size_t where = fdp.ConsumeIntegral<std::size_t>();
    const auto mask = fdp.ConsumeIntegralInRange<std::uint8_t>(1, 255);
    const std::string body = fdp.ConsumeRemainingBytesAsString();

    std::string e = mc::encode_entry(id, level, body, secret);
    const bool valid = !key.empty() && key.size() <= mc::kEntryMaxKey && level >= 0 && level <= 255;
    MC_FUZZ_CHECK(e.empty() == !valid);
    if (!valid) return;
    MC_FUZZ_CHECK(e.size() == body.size() + mc::entry_overhead(key.size(), !secret.empty()));

    const mc::ParsedEntry intact = mc::parse_entry(e, id, secret);
    MC_FUZZ_CHECK(intact.ok());
    MC_FUZZ_CHECK(intact.body == body);
    MC_FUZZ_CHECK(intact.level == level);
    MC_FUZZ_CHECK(intact.has_mac == !secret.empty());

    switch (damage) {
        case Damage::kNone: break;
        case Damage::kCut: {
            const std::string_view cut = std::string_view(e).substr(0, where % e.size());
            MC_FUZZ_CHECK(mc::parse_entry(cut, id, secret).error == mc::EntryError::kTruncated);
            break;
        }
        case Damage::kAppend: {
            e.append(1 + where % 64, static_cast<char>(mask));
            MC_FUZZ_CHECK(mc::parse_entry(e, id, secret).error == mc::EntryError::kLengthMismatch);
            break;
        }
        case Damage::kFlip: {
            const std::size_t at = where % e.size();
            e[at] = static_cast<char>(e[at] ^ static_cast<char>(mask));
            const bool in_mac = at >= e.size() - (secret.empty() ? 0 : mc::kEntryMacSize);
            MC_FUZZ_CHECK(!mc::parse_entry(e, id, secret).ok());
            if (!in_mac) MC_FUZZ_CHECK(!mc::parse_entry(e, id).ok());
            break;
        }
        case Damage::kIdentity: {
            mc::EntryIdentity other = id;
            switch (where % 5) {
                case 0: other.size ^= mask; break;
                case 1: other.mtime ^= mask; break;
                case 2: other.inode ^= mask; break;
                case 3:
                    other.coding =
                        coding == mc::Coding::kGzip ? mc::Coding::kZstd : mc::Coding::kGzip;
                    break;
                default: {
                    std::string k = key;
                    k[where % k.size()] = static_cast<char>(k[where % k.size()] ^ mask);
                    other.key = k;
                    MC_FUZZ_CHECK(mc::parse_entry(e, other, secret).error ==
                                  mc::EntryError::kIdentityMismatch);
                    return;
                }
            }
            MC_FUZZ_CHECK(mc::parse_entry(e, other, secret).error ==
                          mc::EntryError::kIdentityMismatch);
            break;
        }
        case Damage::kOtherSecret: {
            const std::string other = secret + "x";
            MC_FUZZ_CHECK(mc::parse_entry(e, id, other).error == mc::EntryError::kBadMac);
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    check_found_value(std::string_view(reinterpret_cast<const char*>(data), size));
    FuzzedDataProvider fdp(data, size);
    check_made_entry(fdp);
    return 0;
}
