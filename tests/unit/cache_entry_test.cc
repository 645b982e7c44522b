// SPDX-License-Identifier: Apache-2.0
// mc::encode_entry / mc::parse_entry: a cache entry is used only when it is whole, intact and
// made for this key and file version; with a secret, only when its MAC is right.
#include "mc/cache_entry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mc/encoder.h"
#include "mc/sink.h"

namespace {

using mc::Coding;
using mc::EntryError;
using mc::EntryIdentity;

constexpr std::string_view kKey = "mc2-0123456789abcdef0123456789abcdef01234567";
constexpr std::string_view kSecret = "a fleet secret of some length!!";

EntryIdentity identity(Coding c = Coding::kBrotli) {
    EntryIdentity id;
    id.key = kKey;
    id.size = 85123;
    id.mtime = 1'700'000'000'123'456;
    id.inode = 0x1234'5678'9abc;
    id.coding = c;
    return id;
}

std::string body_of(std::size_t n) {
    std::string b;
    for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<char>((i * 131 + 7) & 0xff));
    return b;
}

void put_u32(std::string& s, std::size_t at, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Recomputes the CRC-32 of an entry without MAC after an edit: a forger's entry.
void fix_crc(std::string& e) {
    const std::size_t at = e.size() - mc::kEntryCrcSize;
    put_u32(e, at, mc::entry_crc32(std::string_view(e).substr(0, at)));
}

TEST(CacheEntry, RoundTripEveryCodingWithAndWithoutSecret) {
    for (Coding c : mc::kAllCompressing) {
        for (std::string_view secret : {std::string_view{}, kSecret}) {
            for (std::size_t n : {0, 1, 100, 70000}) {
                const std::string body = body_of(n);
                const std::string e = mc::encode_entry(identity(c), 11, body, secret);
                ASSERT_EQ(e.size(), body.size() + mc::entry_overhead(kKey.size(), !secret.empty()));
                const auto p = mc::parse_entry(e, identity(c), secret);
                ASSERT_TRUE(p.ok()) << mc::entry_error_name(p.error) << ": " << p.detail;
                EXPECT_EQ(p.body, body);
                EXPECT_EQ(p.level, 11);
                EXPECT_EQ(p.has_mac, !secret.empty());
                EXPECT_EQ(p.body.data(), e.data() + mc::kEntryHeaderSize + kKey.size());
            }
        }
    }
}

TEST(CacheEntry, EncodeRefusesWhatItCannotRepresent) {
    EntryIdentity id = identity();
    EXPECT_TRUE(mc::encode_entry(id, -1, "x").empty());
    EXPECT_TRUE(mc::encode_entry(id, 256, "x").empty());
    id.key = "";
    EXPECT_TRUE(mc::encode_entry(id, 5, "x").empty());
    const std::string long_key(256, 'k');
    id.key = long_key;
    EXPECT_TRUE(mc::encode_entry(id, 5, "x").empty());
    id.key = std::string_view(long_key).substr(0, 255);
    EXPECT_FALSE(mc::encode_entry(id, 5, "x").empty());
}

TEST(CacheEntry, TruncatedAtEveryByte) {
    for (std::string_view secret : {std::string_view{}, kSecret}) {
        const std::string e = mc::encode_entry(identity(), 4, body_of(300), secret);
        for (std::size_t n = 0; n < e.size(); ++n) {
            const auto p = mc::parse_entry(std::string_view(e).substr(0, n), identity(), secret);
            EXPECT_EQ(p.error, EntryError::kTruncated) << "cut at " << n << ": " << p.detail;
        }
        // Read without the secret the MAC trailer is not checked, but a cut is still a cut.
        for (std::size_t n = 0; n < e.size(); ++n) {
            EXPECT_FALSE(mc::parse_entry(std::string_view(e).substr(0, n), identity()).ok()) << n;
        }
    }
}

TEST(CacheEntry, TrailingBytesAreALengthMismatch) {
    std::string e = mc::encode_entry(identity(), 4, body_of(50));
    e.push_back('\0');
    EXPECT_EQ(mc::parse_entry(e, identity()).error, EntryError::kLengthMismatch);
    e.append(1000, 'x');
    EXPECT_EQ(mc::parse_entry(e, identity()).error, EntryError::kLengthMismatch);
}

// Which error a flipped byte at `at` must give, for an entry with a MAC read with the secret.
EntryError expected_for_flip(std::size_t at, std::size_t body_end, std::uint8_t mask) {
    if (at < 3) return EntryError::kNotOurs;
    if (at == 3) return EntryError::kUnsupportedVersion;
    if (at == 4) return mask == 1 ? EntryError::kLengthMismatch : EntryError::kUnsupportedVersion;
    if (at == 7 || (at >= 8 && at < 16)) return EntryError::kTruncated;  // lengths
    if (at < body_end + mc::kEntryCrcSize) return EntryError::kChecksumMismatch;
    return EntryError::kBadMac;
}

TEST(CacheEntry, EveryByteFlippedIsRefused) {
    const std::string body = body_of(200);
    const std::string e = mc::encode_entry(identity(), 4, body, kSecret);
    const std::size_t body_end = mc::kEntryHeaderSize + kKey.size() + body.size();
    for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xff}}) {
        for (std::size_t at = 0; at < e.size(); ++at) {
            std::string bad = e;
            bad[at] = static_cast<char>(bad[at] ^ mask);
            const auto p = mc::parse_entry(bad, identity(), kSecret);
            ASSERT_FALSE(p.ok()) << "byte " << at << " ^ " << int{mask};
            // A flipped length can also make the entry look longer than it is.
            if (at == 7 || (at >= 8 && at < 16)) {
                EXPECT_TRUE(p.error == EntryError::kTruncated ||
                            p.error == EntryError::kLengthMismatch)
                    << at << ": " << mc::entry_error_name(p.error);
            } else {
                EXPECT_EQ(p.error, expected_for_flip(at, body_end, mask))
                    << "byte " << at << " ^ " << int{mask} << ": " << p.detail;
            }
        }
    }
}

TEST(CacheEntry, EveryByteFlippedWithoutSecret) {
    const std::string e = mc::encode_entry(identity(), 4, body_of(64));
    for (std::size_t at = 0; at < e.size(); ++at) {
        std::string bad = e;
        bad[at] = static_cast<char>(bad[at] ^ 0x04);
        EXPECT_FALSE(mc::parse_entry(bad, identity()).ok()) << "byte " << at;
    }
}

TEST(CacheEntry, AnotherKeyEncodingOrFileVersionIsAnIdentityMismatch) {
    const std::string e = mc::encode_entry(identity(), 4, body_of(64));
    ASSERT_TRUE(mc::parse_entry(e, identity()).ok());
    const std::string other_key = "mc2-ffffffffffffffffffffffffffffffffffffffff";
    const std::string longer_key = std::string(kKey) + "0";
    std::vector<std::pair<const char*, EntryIdentity>> cases;
    EntryIdentity id = identity();
    id.key = other_key;
    cases.emplace_back("key", id);
    id = identity();
    id.key = longer_key;
    cases.emplace_back("longer key", id);
    id = identity();
    id.size += 1;
    cases.emplace_back("size", id);
    id = identity();
    id.mtime += 1;
    cases.emplace_back("mtime", id);
    id = identity();
    id.inode ^= 1u << 20;
    cases.emplace_back("inode", id);
    cases.emplace_back("coding", identity(Coding::kZstd));
    for (const auto& [what, want] : cases) {
        const auto p = mc::parse_entry(e, want);
        EXPECT_EQ(p.error, EntryError::kIdentityMismatch) << what << ": " << p.detail;
    }
}

TEST(CacheEntry, ForgedEntriesWithAValidChecksum) {
    std::string e = mc::encode_entry(identity(), 4, body_of(64));
    // An encoding number this build does not know, or identity.
    for (char c : {'\x00', '\x06', '\x7f', '\xff'}) {
        std::string bad = e;
        bad[5] = c;
        fix_crc(bad);
        EXPECT_EQ(mc::parse_entry(bad, identity()).error, EntryError::kUnknownCoding) << int{c};
    }
    // A forged body with a recomputed CRC is accepted without a secret (the CRC guards against
    // accidents, not a writer on the store's network) and refused with one.
    std::string forged = e;
    forged[mc::kEntryHeaderSize + kKey.size()] ^= 0x55;
    fix_crc(forged);
    EXPECT_TRUE(mc::parse_entry(forged, identity()).ok());
    const auto p = mc::parse_entry(forged, identity(), kSecret);
    EXPECT_EQ(p.error, EntryError::kBadMac);
    EXPECT_STREQ(p.detail, "no MAC");
}

TEST(CacheEntry, MacWithAndWithoutSecret) {
    const std::string body = body_of(1000);
    const std::string plain = mc::encode_entry(identity(), 4, body);
    const std::string macd = mc::encode_entry(identity(), 4, body, kSecret);
    // Written without a secret, read with one: refused.
    EXPECT_EQ(mc::parse_entry(plain, identity(), kSecret).error, EntryError::kBadMac);
    // Another fleet's secret: refused.
    EXPECT_EQ(mc::parse_entry(macd, identity(), "another secret, same length!!!").error,
              EntryError::kBadMac);
    EXPECT_EQ(mc::parse_entry(macd, identity(), "a").error, EntryError::kBadMac);
    // Read without a secret: the MAC is not checked, the entry is otherwise verified.
    const auto p = mc::parse_entry(macd, identity());
    EXPECT_TRUE(p.ok());
    EXPECT_TRUE(p.has_mac);
    EXPECT_EQ(p.body, body);
    // A forger who changes the body and fixes the CRC but cannot make the MAC.
    std::string forged = macd;
    forged[mc::kEntryHeaderSize + kKey.size() + 3] ^= 1;
    const std::size_t crc_at = forged.size() - mc::kEntryMacSize - mc::kEntryCrcSize;
    put_u32(forged, crc_at, mc::entry_crc32(std::string_view(forged).substr(0, crc_at)));
    EXPECT_EQ(mc::parse_entry(forged, identity(), kSecret).error, EntryError::kBadMac);
    // An entry stored under another key keeps its (valid) MAC and is still refused.
    EntryIdentity other = identity();
    const std::string other_key = "mc2-1111111111111111111111111111111111111111";
    other.key = other_key;
    const std::string theirs = mc::encode_entry(other, 4, body, kSecret);
    EXPECT_EQ(mc::parse_entry(theirs, identity(), kSecret).error, EntryError::kIdentityMismatch);
}

TEST(CacheEntry, ForeignValues) {
    EXPECT_EQ(mc::parse_entry("MC1\x05\x03hello", identity()).error, EntryError::kNotOurs);
    EXPECT_EQ(mc::parse_entry("garbage garbage garbage garbage garbage garbage", identity()).error,
              EntryError::kNotOurs);
    EXPECT_EQ(mc::parse_entry(std::string_view("MCE\x02", 4), identity()).error,
              EntryError::kUnsupportedVersion);
    EXPECT_EQ(mc::parse_entry("", identity()).error, EntryError::kTruncated);
    EXPECT_EQ(mc::parse_entry("M", identity()).error, EntryError::kTruncated);
    EXPECT_EQ(mc::parse_entry("MX", identity()).error, EntryError::kNotOurs);
    for (EntryError e :
         {EntryError::kOk, EntryError::kNotOurs, EntryError::kUnsupportedVersion,
          EntryError::kTruncated, EntryError::kLengthMismatch, EntryError::kChecksumMismatch,
          EntryError::kBadMac, EntryError::kUnknownCoding, EntryError::kIdentityMismatch}) {
        EXPECT_NE(mc::entry_error_name(e), "unknown");
    }
}

TEST(CacheEntry, Crc32IsTheGzipCrc) {
    // The check value of CRC-32/ISO-HDLC.
    EXPECT_EQ(mc::entry_crc32("123456789"), 0xCBF43926u);
    EXPECT_EQ(mc::entry_crc32(""), 0u);
}

// The format is shared by every server of a fleet (and across versions of the module): a fixed
// entry, written independently (Python: zlib.crc32, hmac/sha256), pins the layout.
TEST(CacheEntry, KnownAnswer) {
    constexpr std::string_view kHex =
        "4d4345010103052c0500000000000000834c01000000000040222018240a0600bc9a7856341200006d63322d"
        "3031323334353637383961626364656630313233343536373839616263646566303132333435363768656c6c"
        "6fcf82a16848a274260d2af9cc53a0edea5f08a421d79c8295b372123d9bafe089ecb8a143";
    std::string want;
    for (std::size_t i = 0; i < kHex.size(); i += 2) {
        want.push_back(static_cast<char>(std::stoi(std::string(kHex.substr(i, 2)), nullptr, 16)));
    }
    const std::string got = mc::encode_entry(identity(), 5, "hello", kSecret);
    EXPECT_EQ(got, want);
    const auto p = mc::parse_entry(want, identity(), kSecret);
    ASSERT_TRUE(p.ok()) << p.detail;
    EXPECT_EQ(p.body, "hello");
}

}  // namespace

namespace {

// A zstd body a browser cannot decode (a frame declaring more than 8 MiB) is not a usable entry.
std::string zstd_body(int window_log, std::size_t n) {
    mc::EncoderParams p;
    p.coding = Coding::kZstd;
    p.level = 3;
    p.window_log = window_log;
    mc::StringSink sink;
    const std::string in(n, 'z');
    EXPECT_TRUE(mc::compress_all(p, std::as_bytes(std::span(in)), sink).is_ok());
    return sink.take();
}

TEST(CacheEntry, ZstdFramesAreCheckedWhenAsked) {
    EntryIdentity id = identity(Coding::kZstd);
    id.max_window = std::uint64_t{8} << 20;
    const std::string good = zstd_body(20, 10000);
    EXPECT_TRUE(mc::parse_entry(mc::encode_entry(id, 3, good), id).ok());
    // two frames, the second with a window the tests' encoder may not make: forge one by hand
    // (RFC 8878: Window_Descriptor exponent 17 -> 2^27), a raw last block of 3 bytes
    const std::string long_frame("\x28\xb5\x2f\xfd\x00\x88\x19\x00\x00xyz", 12);
    const auto bad = mc::parse_entry(mc::encode_entry(id, 3, good + long_frame), id);
    EXPECT_EQ(bad.error, EntryError::kUndecodable) << bad.detail;
    const auto junk = mc::parse_entry(mc::encode_entry(id, 3, good + "junk"), id);
    EXPECT_EQ(junk.error, EntryError::kUndecodable) << junk.detail;
    // unchecked when no window is given (the default), and for other codings
    EXPECT_TRUE(mc::parse_entry(mc::encode_entry(identity(Coding::kZstd), 3, good + "junk"),
                                identity(Coding::kZstd))
                    .ok());
    EntryIdentity br = identity(Coding::kBrotli);
    br.max_window = 1;
    EXPECT_TRUE(mc::parse_entry(mc::encode_entry(br, 3, "any bytes"), br).ok());
}

}  // namespace
