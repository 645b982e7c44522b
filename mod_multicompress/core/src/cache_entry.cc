// SPDX-License-Identifier: Apache-2.0
// Cache entry encoding and verification: CRC-32 from libdeflate, HMAC-SHA256 from libcrypto.
#include "mc/cache_entry.h"

#include <libdeflate.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <span>

#include "mc/dictionary.h"
#include "mc/zstd_frame.h"

namespace mc {
namespace {

constexpr char kMagic[3] = {'M', 'C', 'E'};
constexpr std::uint8_t kVersion = 1;
constexpr std::uint8_t kFlagMac = 1;

constexpr std::size_t kOffFlags = 4;
constexpr std::size_t kOffCoding = 5;
constexpr std::size_t kOffLevel = 6;
constexpr std::size_t kOffKeyLen = 7;
constexpr std::size_t kOffBodyLen = 8;
constexpr std::size_t kOffSize = 16;
constexpr std::size_t kOffMtime = 24;
constexpr std::size_t kOffInode = 32;

template <class S>
void put_u64(S& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

template <class S>
void put_u32(S& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_u64(std::string_view s, std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) {
        v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
    }
    return v;
}

std::uint32_t get_u32(std::string_view s, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
    }
    return v;
}

std::uint8_t byte_at(std::string_view s, std::size_t at) {
    return static_cast<unsigned char>(s[at]);
}

using Mac = std::array<unsigned char, kEntryMacSize>;

bool hmac_sha256(std::string_view secret, std::string_view data, Mac& out) {
    unsigned int len = 0;
    const unsigned char* r =
        HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
    return r != nullptr && len == out.size();
}

ParsedEntry refuse(EntryError e, const char* detail) {
    ParsedEntry p;
    p.error = e;
    p.detail = detail;
    return p;
}

}  // namespace

std::string_view entry_error_name(EntryError e) {
    switch (e) {
        case EntryError::kOk: return "ok";
        case EntryError::kNotOurs: return "not ours";
        case EntryError::kUnsupportedVersion: return "unsupported version";
        case EntryError::kTruncated: return "truncated";
        case EntryError::kLengthMismatch: return "length mismatch";
        case EntryError::kChecksumMismatch: return "checksum mismatch";
        case EntryError::kBadMac: return "bad MAC";
        case EntryError::kUnknownCoding: return "unknown coding";
        case EntryError::kIdentityMismatch: return "identity mismatch";
        case EntryError::kUndecodable: return "undecodable";
    }
    return "unknown";
}

std::uint32_t entry_crc32(std::string_view data) {
    return libdeflate_crc32(0, data.data(), data.size());
}

namespace {

template <class S>
S encode_as(const EntryIdentity& id, int level, std::string_view body, std::string_view secret) {
    if (id.key.empty() || id.key.size() > kEntryMaxKey || level < 0 || level > 255) return {};
    const bool mac = !secret.empty();
    S out;
    out.reserve(entry_overhead(id.key.size(), mac) + body.size());
    out.append(kMagic, sizeof kMagic);
    out.push_back(static_cast<char>(kVersion));
    out.push_back(static_cast<char>(mac ? kFlagMac : 0));
    out.push_back(static_cast<char>(index(id.coding)));
    out.push_back(static_cast<char>(level));
    out.push_back(static_cast<char>(id.key.size()));
    put_u64(out, body.size());
    put_u64(out, static_cast<std::uint64_t>(id.size));
    put_u64(out, static_cast<std::uint64_t>(id.mtime));
    put_u64(out, id.inode);
    out.append(id.key);
    out.append(body);
    put_u32(out, entry_crc32({out.data(), out.size()}));
    if (mac) {
        Mac m{};
        if (!hmac_sha256(secret, {out.data(), out.size()}, m)) return {};
        out.append(reinterpret_cast<const char*>(m.data()), m.size());
    }
    return out;
}

}  // namespace

std::string encode_entry(const EntryIdentity& id, int level, std::string_view body,
                         std::string_view secret) {
    return encode_as<std::string>(id, level, body, secret);
}

MemString encode_entry_mem(const EntryIdentity& id, int level, std::string_view body,
                           std::string_view secret) {
    return encode_as<MemString>(id, level, body, secret);
}

ParsedEntry parse_entry(std::string_view value, const EntryIdentity& expected,
                        std::string_view secret) {
    // Magic and version first: a value cut inside them is still recognisably ours.
    constexpr std::string_view kPrefix("MCE\x01", 4);
    const std::size_t head = std::min(value.size(), kPrefix.size());
    if (value.substr(0, head) != kPrefix.substr(0, head)) {
        if (value.substr(0, std::min(head, sizeof kMagic)) !=
            std::string_view(kMagic, std::min(head, sizeof kMagic))) {
            return refuse(EntryError::kNotOurs, "no entry magic");
        }
        return refuse(EntryError::kUnsupportedVersion, "unknown format version");
    }
    if (value.size() < kEntryHeaderSize) return refuse(EntryError::kTruncated, "header cut short");
    const std::uint8_t flags = byte_at(value, kOffFlags);
    if ((flags & ~kFlagMac) != 0) return refuse(EntryError::kUnsupportedVersion, "unknown flags");
    const bool has_mac = (flags & kFlagMac) != 0;
    const std::size_t key_len = byte_at(value, kOffKeyLen);
    const std::uint64_t body_len = get_u64(value, kOffBodyLen);
    const std::size_t fixed = entry_overhead(key_len, has_mac);
    if (body_len > value.size()) return refuse(EntryError::kTruncated, "body cut short");
    const std::size_t want = fixed + static_cast<std::size_t>(body_len);
    if (value.size() < want) return refuse(EntryError::kTruncated, "cut short");
    if (value.size() > want) return refuse(EntryError::kLengthMismatch, "bytes after the entry");

    const std::size_t crc_at = kEntryHeaderSize + key_len + static_cast<std::size_t>(body_len);
    if (get_u32(value, crc_at) != entry_crc32(value.substr(0, crc_at))) {
        return refuse(EntryError::kChecksumMismatch, "CRC-32 differs");
    }
    if (!secret.empty()) {
        if (!has_mac) return refuse(EntryError::kBadMac, "no MAC");
        Mac m{};
        const std::size_t mac_at = crc_at + kEntryCrcSize;
        if (!hmac_sha256(secret, value.substr(0, mac_at), m) ||
            CRYPTO_memcmp(m.data(), value.data() + mac_at, m.size()) != 0) {
            return refuse(EntryError::kBadMac, "MAC differs");
        }
    }
    const std::uint8_t coding = byte_at(value, kOffCoding);
    if (coding >= kCodingCount || coding == index(Coding::kIdentity)) {
        return refuse(EntryError::kUnknownCoding, "unknown encoding number");
    }
    if (coding != index(expected.coding)) {
        return refuse(EntryError::kIdentityMismatch, "another encoding");
    }
    if (value.substr(kEntryHeaderSize, key_len) != expected.key) {
        return refuse(EntryError::kIdentityMismatch, "stored for another key");
    }
    if (get_u64(value, kOffSize) != static_cast<std::uint64_t>(expected.size)) {
        return refuse(EntryError::kIdentityMismatch, "file size differs");
    }
    if (get_u64(value, kOffMtime) != static_cast<std::uint64_t>(expected.mtime)) {
        return refuse(EntryError::kIdentityMismatch, "file mtime differs");
    }
    if (get_u64(value, kOffInode) != expected.inode) {
        return refuse(EntryError::kIdentityMismatch, "file inode differs");
    }
    const std::string_view body =
        value.substr(kEntryHeaderSize + key_len, static_cast<std::size_t>(body_len));
    if (expected.max_window > 0 &&
        (expected.coding == Coding::kZstd || expected.coding == Coding::kDcz)) {
        const std::string_view frames = expected.coding == Coding::kDcz
                                            ? body.substr(std::min(body.size(), kDczHeaderSize))
                                            : body;
        const Status st = check_zstd_frames(std::as_bytes(std::span(frames)), expected.max_window);
        if (st.code() == Code::kWindowTooLarge) {
            return refuse(EntryError::kUndecodable, "a zstd frame's window is too large");
        }
        if (!st.is_ok()) return refuse(EntryError::kUndecodable, "not whole zstd frames");
    }
    ParsedEntry p;
    p.error = EntryError::kOk;
    p.detail = "ok";
    p.level = byte_at(value, kOffLevel);
    p.has_mac = has_mac;
    p.body = body;
    return p;
}

}  // namespace mc
