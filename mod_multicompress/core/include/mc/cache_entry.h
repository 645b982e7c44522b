// SPDX-License-Identifier: Apache-2.0
// The value of a compressed-response cache entry, as kept in a shared store (shmcb, memcache,
// redis): a header naming the file version and encoding it was made from, the body, a CRC-32 of
// everything before it and, when the fleet shares a secret, an HMAC-SHA256 over all of that.
//
// A store is shared by a fleet and often has no authentication, so a value read back is checked
// before a byte of it is used: parse_entry() accepts only a complete, intact entry made for the
// key and file version the caller expects (docs/contract.md, "Sidecars and the cache").
//
// Layout (integers little-endian):
//   0   3  magic "MCE"            5  1  coding (mc::Coding)     8  8  body length
//   3   1  format version (1)     6  1  level                  16  8  file size
//   4   1  flags (bit 0: MAC)     7  1  key length K (1-255)   24  8  file mtime (µs)
//                                                              32  8  file inode
//   40  K  the cache key the entry was stored under
//   40+K   body
//   then   4  CRC-32 (ISO-HDLC, as gzip) of every byte before it
//   then  32  HMAC-SHA256(secret, every byte before it), when flags bit 0 is set
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mc/alloc.h"
#include "mc/coding.h"

namespace mc {

/// What an entry must have been made from: the key it is stored under (which names the path,
/// device and encoding), and the file's size, mtime and inode.
struct EntryIdentity {
    std::string_view key;
    std::int64_t size = 0;
    std::int64_t mtime = 0;  ///< microseconds since the epoch, as httpd's apr_time_t
    std::uint64_t inode = 0;
    Coding coding = Coding::kIdentity;
    /// zstd and dcz: the largest window a frame of the body may need, as a client decodes it
    /// (RFC 9659: 8 MiB for zstd; dcz: after the 40-byte header, the dictionary's bound). 0: the
    /// frames are not checked.
    std::uint64_t max_window = 0;
};

/// Why parse_entry() refused a value.
enum class EntryError : std::uint8_t {
    kOk,
    kNotOurs,             ///< no "MCE" magic: something else is stored under the key
    kUnsupportedVersion,  ///< our magic, but a format version or flags this build does not know
    kTruncated,           ///< shorter than its header says (cut short)
    kLengthMismatch,      ///< longer than its header says (trailing bytes)
    kChecksumMismatch,    ///< the CRC-32 does not match the bytes
    kBadMac,              ///< a secret is set and the MAC is missing or wrong
    kUnknownCoding,       ///< an encoding number this build does not know
    kIdentityMismatch,    ///< made for another key, encoding or version of the file
    kUndecodable,         ///< a zstd body a client would refuse: a window too large, bad frames
};
/// How many kinds EntryError has (the last one's number plus one).
inline constexpr std::size_t kEntryErrorKinds =
    static_cast<std::size_t>(EntryError::kUndecodable) + 1;

/// A short name for logs: "not ours", "truncated", "checksum mismatch"...
std::string_view entry_error_name(EntryError e);

/// Header bytes before the key.
inline constexpr std::size_t kEntryHeaderSize = 40;
inline constexpr std::size_t kEntryCrcSize = 4;
inline constexpr std::size_t kEntryMacSize = 32;
inline constexpr std::size_t kEntryMaxKey = 255;

/// Bytes an entry adds to its body for a key of `key_size` bytes (with the MAC trailer: an upper
/// bound for any entry, which is what a reader sizes its buffer with).
constexpr std::size_t entry_overhead(std::size_t key_size, bool with_mac = true) {
    return kEntryHeaderSize + key_size + kEntryCrcSize + (with_mac ? kEntryMacSize : 0);
}

/// Builds the entry for `body`, made at `level` for `id`. With a non-empty `secret` the entry
/// carries an HMAC-SHA256 keyed with it. An empty key, a key over kEntryMaxKey bytes or a level
/// outside 0-255 gives an empty string (nothing to store).
std::string encode_entry(const EntryIdentity& id, int level, std::string_view body,
                         std::string_view secret = {});
/// The same in mc::mem_alloc memory (for an entry of body size kept in the server: see
/// mc::MemAllocator).
MemString encode_entry_mem(const EntryIdentity& id, int level, std::string_view body,
                           std::string_view secret = {});

/// A checked entry. `body` points into the value given to parse_entry().
struct ParsedEntry {
    EntryError error = EntryError::kNotOurs;
    /// What exactly was wrong (a literal), for the log: "file size differs", "no MAC"...
    const char* detail = "";
    int level = 0;
    bool has_mac = false;
    std::string_view body;

    [[nodiscard]] bool ok() const { return error == EntryError::kOk; }
};

/// Checks `value` as read from the store under `expected.key`: magic, version, lengths, CRC-32,
/// then (when `secret` is non-empty) the MAC, then the encoding and the file identity, then (when
/// `expected.max_window` is set) every zstd frame of the body. Without a
/// secret a MAC trailer is accepted unchecked (such an entry is still checksummed); with one, an
/// entry without a valid MAC is refused.
ParsedEntry parse_entry(std::string_view value, const EntryIdentity& expected,
                        std::string_view secret = {});

/// CRC-32 of `data` (libdeflate's, PCLMULQDQ-accelerated where the CPU has it).
std::uint32_t entry_crc32(std::string_view data);

}  // namespace mc
