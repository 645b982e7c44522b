// SPDX-License-Identifier: Apache-2.0
// RFC 9842 in the core: header fields, dcz framing and windows, patterns, the store's head, and
// dcz bodies from both encoders, decoded by libzstd with the dictionary as raw content.
#include "mc/dictionary.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_createDDict_advanced, ZSTD_dct_rawContent
#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <array>
#include <cstdint>
#include <cstring>

#include <memory>
#include <string>
#include <string_view>

#include "decode.h"
#include "mc/budget.h"
#include "mc/config.h"
#include "mc/encoder.h"
#include "mc/headers.h"
#include "mc/oneshot.h"
#include "mc/params.h"
#include "mc/policy.h"
#include "mc/sink.h"

namespace {

using mc::Coding;
using mc_test::as_bytes;

std::string b64(const mc::DictionaryHash& h, bool pad = true) {
    std::string v = mc::format_available_dictionary(h);  // ":...=:"
    v = v.substr(1, v.size() - 2);
    if (!pad) v.pop_back();
    return v;
}

mc::DictionaryHash hash_of(std::string_view s) {
    return mc::sha256(as_bytes(s));
}

TEST(Dictionary, Sha256KnownAnswer) {
    // FIPS 180-2 example: "abc".
    EXPECT_EQ(mc::hash_hex(hash_of("abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    mc::Sha256 sha;
    sha.update(as_bytes(std::string_view("a")));
    sha.update(as_bytes(std::string_view("bc")));
    EXPECT_EQ(sha.finish(), hash_of("abc"));
}

TEST(Dictionary, HashHexPrefix) {
    const mc::DictionaryHash h = hash_of("abc");
    EXPECT_EQ(mc::hash_hex(h, 16), "ba7816bf8f01cfea");
    EXPECT_EQ(mc::hash_hex(h, 8), mc::hash_hex(h).substr(0, 8));
    EXPECT_EQ(mc::hash_hex(h, 0), "");
    EXPECT_EQ(mc::hash_hex(h, 7), "ba7816");  // whole bytes only
    EXPECT_EQ(mc::hash_hex(h, 100), mc::hash_hex(h));
}

TEST(Dictionary, HexInto) {
    const std::array<std::uint8_t, 4> bytes{0x00, 0x0f, 0xf0, 0xff};
    std::array<char, 8> out{};
    EXPECT_EQ(mc::hex_into(bytes, out.data()), out.data() + out.size());
    EXPECT_EQ(std::string_view(out.data(), out.size()), "000ff0ff");
}

TEST(Dictionary, AvailableDictionaryParses) {
    const mc::DictionaryHash h = hash_of("dictionary");
    EXPECT_EQ(mc::parse_available_dictionary(":" + b64(h) + ":"), h);
    EXPECT_EQ(mc::parse_available_dictionary(":" + b64(h, false) + ":"), h);  // no padding
    EXPECT_EQ(mc::parse_available_dictionary("  :" + b64(h) + ":  "), h);
    EXPECT_EQ(mc::parse_available_dictionary(":" + b64(h) + ":;p=1"), h);  // parameters
    EXPECT_EQ(mc::parse_available_dictionary(mc::format_available_dictionary(h)), h);
}

TEST(Dictionary, AvailableDictionaryMalformedIsIgnored) {
    const mc::DictionaryHash h = hash_of("dictionary");
    const std::string ok = b64(h);
    for (const std::string& bad : {
             std::string(),
             ok,                                                           // no colons
             ":" + ok,                                                     // unterminated
             ":" + ok + ": x",                                             // trailing garbage
             std::string(":").append(ok).append(":, :").append(ok) + ":",  // two fields joined
             ":" + ok.substr(0, 40) + ":",                                 // too short (30 bytes)
             ":" + ok + "AAAA:",                                           // too long
             ":" + ok.substr(0, 42) + "!=:",                               // not base64
             ":" + ok.substr(0, 42) + "-=:",                               // base64url, not base64
             ":" + ok.substr(0, 42) + "_=:",                               // the same
             ":" + ok.substr(0, 42) + "\xc3=:",                            // not ASCII
             ":" + ok.substr(0, 42) + "B=:",  // non-zero bits past the 32 bytes
             "\"" + ok + "\"",                // a string, not bytes
         }) {
        EXPECT_FALSE(mc::parse_available_dictionary(bad)) << bad;
    }
}

TEST(Dictionary, DictionaryIdIsAnSfString) {
    EXPECT_EQ(mc::parse_dictionary_id("\"site-v1\""), "site-v1");
    EXPECT_EQ(mc::parse_dictionary_id(" \"a\\\"b\\\\c\" "), "a\"b\\c");
    EXPECT_FALSE(mc::parse_dictionary_id("site"));
    EXPECT_FALSE(mc::parse_dictionary_id("\"open"));
    EXPECT_FALSE(mc::parse_dictionary_id("\"bad\\x\""));
    EXPECT_FALSE(mc::parse_dictionary_id("\"tab\there\""));
    EXPECT_FALSE(mc::parse_dictionary_id("\"" + std::string(1025, 'a') + "\""));
    EXPECT_TRUE(mc::parse_dictionary_id("\"" + std::string(1024, 'a') + "\""));
}

TEST(Dictionary, DczHeader) {
    const mc::DictionaryHash h = hash_of("x");
    const auto hdr = mc::dcz_header(h);
    const std::string_view magic("\x5e\x2a\x4d\x18\x20\x00\x00\x00", 8);
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(hdr.data()), 8), magic);
    EXPECT_EQ(0, std::memcmp(hdr.data() + 8, h.data(), 32));
}

TEST(Dictionary, WindowBounds) {
    // RFC 9842 §4: max(8 MiB, 1.25 x dictionary), at most 128 MiB.
    EXPECT_EQ(mc::dcz_max_window_log(0), 23);
    EXPECT_EQ(mc::dcz_max_window_log(4 << 20), 23);
    EXPECT_EQ(mc::dcz_max_window_log(16 << 20), 24);  // 20 MiB allowed: 16 MiB windows
    EXPECT_EQ(mc::dcz_max_window_log(std::size_t{512} << 20), 27);
    // Over the whole dictionary and the body.
    EXPECT_EQ(mc::dcz_window_log(30000, 30000, 21), 16);
    EXPECT_EQ(mc::dcz_window_log(30000, -1, 21), 22);         // unknown body: the level's window
    EXPECT_EQ(mc::dcz_window_log(6 << 20, 6 << 20, 21), 23);  // capped at what clients take
    for (std::size_t d : {std::size_t{1}, std::size_t{100000}, std::size_t{7} << 20}) {
        for (std::int64_t b : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1} << 30}) {
            const int w = mc::dcz_window_log(d, b, 23);
            EXPECT_GE(w, 10);
            EXPECT_LE(std::uint64_t{1} << w, std::max<std::uint64_t>(8 << 20, d + d / 4));
        }
    }
}

TEST(Dictionary, Patterns) {
    EXPECT_TRUE(mc::check_dictionary_pattern("/assets/app.*.js").is_ok());
    EXPECT_TRUE(mc::check_dictionary_pattern("/*").is_ok());
    for (const char* bad : {"", "app.*.js", "https://x/*", "/a/:id", "/a/(\\d+)", "/a/{b}", "/a+",
                            "/a?b", "/a#b", "/a b", "/a\"b", "/\x01"}) {
        EXPECT_FALSE(mc::check_dictionary_pattern(bad).is_ok()) << bad;
    }
    EXPECT_TRUE(mc::pattern_matches("/assets/app.*.js", "/assets/app.1a2b.js"));
    EXPECT_TRUE(mc::pattern_matches("/assets/app.*.js", "/assets/app..js"));
    EXPECT_TRUE(mc::pattern_matches("/assets/app.*.js", "/assets/app.a/b.js"));  // * spans '/'
    EXPECT_FALSE(mc::pattern_matches("/assets/app.*.js", "/assets/app.1a2b.css"));
    EXPECT_FALSE(mc::pattern_matches("/assets/app.*.js", "/other/app.1.js"));
    EXPECT_TRUE(mc::pattern_matches("/*", "/"));
    EXPECT_TRUE(mc::pattern_matches("/a*b*c", "/aXXbYYbc"));
    EXPECT_FALSE(mc::pattern_matches("/a*b*c", "/aXXbYYb"));
    EXPECT_TRUE(mc::pattern_matches("/exact", "/exact"));
    EXPECT_FALSE(mc::pattern_matches("/exact", "/exact/"));
}

TEST(Dictionary, UseAsDictionaryValue) {
    EXPECT_EQ(mc::format_use_as_dictionary({"/a/*.js", "", ""}), "match=\"/a/*.js\"");
    EXPECT_EQ(mc::format_use_as_dictionary({"/a/*.js", "script", ""}),
              "match=\"/a/*.js\", match-dest=(\"script\")");
    EXPECT_EQ(mc::format_use_as_dictionary({"/a/*", "script style", "v\"1"}),
              "match=\"/a/*\", match-dest=(\"script\" \"style\"), id=\"v\\\"1\"");
    EXPECT_TRUE(mc::check_dictionary_dest("script").is_ok());
    EXPECT_FALSE(mc::check_dictionary_dest("Script").is_ok());
    EXPECT_FALSE(mc::check_dictionary_dest("").is_ok());
    EXPECT_TRUE(mc::check_dictionary_id(std::string(1024, 'x')).is_ok());
    EXPECT_FALSE(mc::check_dictionary_id(std::string(1025, 'x')).is_ok());
    EXPECT_FALSE(mc::check_dictionary_id("a\nb").is_ok());
}

TEST(Dictionary, StoreHeadRoundTripAndChecks) {
    mc::DictionaryHead head;
    head.hash = hash_of("d");
    head.size = 300000;
    head.origin = "https://www.example.org";
    EXPECT_EQ(head.chunks(), 3u);  // 128 KiB chunks
    const std::string e = mc::encode_dictionary_head(head);
    const auto back = mc::decode_dictionary_head(as_bytes(e), head.hash);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->size, head.size);
    EXPECT_EQ(back->origin, head.origin);
    EXPECT_FALSE(mc::decode_dictionary_head(as_bytes(e), hash_of("other")));  // another's head
    EXPECT_FALSE(mc::decode_dictionary_head(as_bytes(e.substr(0, e.size() - 1)), head.hash));
    EXPECT_FALSE(mc::decode_dictionary_head(as_bytes(e + "x"), head.hash));
    std::string bad_magic = e;
    bad_magic[0] = 'X';
    EXPECT_FALSE(mc::decode_dictionary_head(as_bytes(bad_magic), head.hash));
    mc::DictionaryHead huge = head;
    huge.size = mc::kMaxDictionarySize + 1;
    EXPECT_FALSE(mc::decode_dictionary_head(as_bytes(mc::encode_dictionary_head(huge)), head.hash));
    mc::DictionaryHead empty = head;
    empty.size = 0;
    EXPECT_FALSE(
        mc::decode_dictionary_head(as_bytes(mc::encode_dictionary_head(empty)), head.hash));
}

// ---- dcz bodies

std::string bundle(int version, std::size_t n) {
    std::string s;
    for (int i = 0; s.size() < n; ++i) {
        s += "function f" + std::to_string(i) + "(a){return a*" + std::to_string(i * 7919 % 10007) +
             ";} /* " + (i % 97 == 0 ? "v" + std::to_string(version) : std::string("v1")) + " */\n";
    }
    return s;
}

std::shared_ptr<const mc::DictionaryBytes> dict_of(const std::string& bytes) {
    auto d = std::make_shared<mc::DictionaryBytes>();
    d->bytes = bytes;
    d->hash = hash_of(bytes);
    return d;
}

// libzstd's decoder with the dictionary as raw content, after checking the dcz header.
std::string decode_dcz(const std::string& body, const std::string& dict, std::size_t* window) {
    EXPECT_GE(body.size(), mc::kDczHeaderSize);
    const auto hdr = mc::dcz_header(hash_of(dict));
    EXPECT_EQ(0, std::memcmp(body.data(), hdr.data(), hdr.size()));
    ZSTD_frameHeader fh{};
    EXPECT_EQ(ZSTD_getFrameHeader(&fh, body.data() + 40, body.size() - 40), 0u);
    if (window != nullptr) *window = static_cast<std::size_t>(fh.windowSize);
    ZSTD_DCtx* d = ZSTD_createDCtx();
    ZSTD_DCtx_refPrefix(d, dict.data(), dict.size());  // raw content, as a prefix
    std::string out(4 << 20, '\0');
    ZSTD_inBuffer in{body.data() + 40, body.size() - 40, 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    const std::size_t rc = ZSTD_decompressStream(d, &o, &in);
    ZSTD_freeDCtx(d);
    EXPECT_FALSE(ZSTD_isError(rc)) << ZSTD_getErrorName(rc);
    out.resize(o.pos);
    return out;
}

// zstd's own raw-content dictionary API at the same level, the body's size pledged and the dcz
// window: what the library gives at best for this pair (python-zstandard's ZstdCompressor with a
// raw-content dictionary does the same).
std::size_t library_size(const std::string& body, const std::string& dict, int level) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog,
                           mc::dcz_window_log(dict.size(), static_cast<std::int64_t>(body.size()),
                                              mc::zstd_level_window_log(level)));
    ZSTD_CCtx_loadDictionary_advanced(c, dict.data(), dict.size(), ZSTD_dlm_byRef,
                                      ZSTD_dct_rawContent);
    std::string out(ZSTD_compressBound(body.size()), '\0');
    const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), body.data(), body.size());
    ZSTD_freeCCtx(c);
    return n;
}

class DczBody : public ::testing::TestWithParam<int> {};

TEST_P(DczBody, StreamingAndOneShotDecodeAndAreSmall) {
    const int level = GetParam();
    // About jquery's size: large enough that `zstd --patch-from` would use long-distance
    // matching at the fast levels (which the request path must not copy: it costs a pass over the
    // dictionary per response and gives larger bodies for small changes).
    const std::string v1 = bundle(1, 90000);
    const std::string v2 = bundle(2, 91000);
    auto prepared = mc::PreparedDictionary::make(dict_of(v1), level);
    ASSERT_TRUE(prepared.is_ok());
    mc::EncoderParams p;
    p.coding = Coding::kDcz;
    p.level = level;
    p.dictionary = prepared.value().get();
    const std::size_t reference = library_size(v2, v1, level) + mc::kDczHeaderSize;

    // Streaming, in pieces, with a flush in the middle and a length not pledged.
    auto enc = mc::make_encoder(p);
    ASSERT_TRUE(enc.is_ok());
    mc::StringSink sink;
    ASSERT_TRUE(enc.value()
                    ->write(as_bytes(std::string_view(v2).substr(0, 20000)), mc::Flush::kNone, sink)
                    .is_ok());
    ASSERT_TRUE(enc.value()->write({}, mc::Flush::kSync, sink).is_ok());
    ASSERT_TRUE(enc.value()
                    ->write(as_bytes(std::string_view(v2).substr(20000)), mc::Flush::kFinish, sink)
                    .is_ok());
    EXPECT_EQ(enc.value()->coding(), Coding::kDcz);
    std::size_t window = 0;
    EXPECT_EQ(decode_dcz(sink.data(), v1, &window), v2);
    EXPECT_LE(window, std::size_t{8} << 20);
    EXPECT_EQ(enc.value()->bytes_out(), sink.data().size());

    // One shot, pledged size: the library's best for a raw-content dictionary at this level.
    mc::OneShotCompressor one;
    std::string out(mc::OneShotCompressor::bound(Coding::kDcz, v2.size()), '\0');
    auto n = one.compress(p, as_bytes(std::string_view(v2)),
                          std::as_writable_bytes(std::span(out.data(), out.size())));
    ASSERT_TRUE(n.is_ok()) << n.status().reason();
    out.resize(n.value());
    EXPECT_EQ(decode_dcz(out, v1, &window), v2);
    EXPECT_LE(window, std::size_t{8} << 20);
    EXPECT_LE(out.size(), reference) << "zstd's raw-content dictionary API: " << reference;
    EXPECT_LT(out.size() * 10, v2.size());
    // The context is plain zstd again afterwards.
    p.coding = Coding::kZstd;
    p.dictionary = nullptr;
    std::string plain(mc::OneShotCompressor::bound(Coding::kZstd, v2.size()), '\0');
    auto m = one.compress(p, as_bytes(std::string_view(v2)),
                          std::as_writable_bytes(std::span(plain.data(), plain.size())));
    ASSERT_TRUE(m.is_ok());
    plain.resize(m.value());
    EXPECT_EQ(mc_test::decode_all(Coding::kZstd, plain).data, v2);
}

INSTANTIATE_TEST_SUITE_P(Levels, DczBody, ::testing::Values(1, 3, 9, 19));

TEST(Dictionary, DczWithoutDictionaryFails) {
    mc::EncoderParams p;
    p.coding = Coding::kDcz;
    EXPECT_FALSE(mc::make_encoder(p).is_ok());
}

// ---- the decision, the validator, the configuration

TEST(Dictionary, DecideNeedsADictionaryAndItsName) {
    mc::Config cfg;
    ASSERT_TRUE(mc::add_encoding(cfg, "dcz").is_ok());
    ASSERT_TRUE(mc::add_encoding(cfg, "zstd").is_ok());
    mc::ResponseView v;
    v.accept_encoding = "dcz, zstd";
    v.accept_encoding_present = true;
    v.content_type = "text/javascript";
    const mc::CodingSet all{Coding::kZstd, Coding::kDcz, Coding::kGzip, Coding::kBrotli};
    EXPECT_EQ(mc::decide(v, cfg, all).coding, Coding::kZstd);  // no dictionary held
    v.dictionary_available = true;
    EXPECT_EQ(mc::decide(v, cfg, all).coding, Coding::kDcz);
    EXPECT_EQ(mc::decide(v, cfg, mc::CodingSet{Coding::kZstd}).coding, Coding::kZstd);
    v.accept_encoding = "*";
    EXPECT_EQ(mc::decide(v, cfg, all).coding, Coding::kZstd);  // '*' does not name dcz
    v.accept_encoding = "dcz;q=0, zstd";
    EXPECT_EQ(mc::decide(v, cfg, all).coding, Coding::kZstd);
    v.accept_encoding = "dcz, zstd";
    v.env_no_zstd = true;
    EXPECT_EQ(mc::decide(v, cfg, all).coding, Coding::kIdentity);
    v.env_no_zstd = false;
    EXPECT_EQ(mc::decide(v, cfg, all, mc::BudgetStep::kCheapest).coding, Coding::kDcz);
    v.request_has_range = true;
    EXPECT_EQ(mc::decide(v, cfg, all).coding, Coding::kIdentity);
}

TEST(Dictionary, EtagPerDictionary) {
    EXPECT_EQ(mc::alter_etag("\"v1\"", Coding::kDcz, mc::ETagMode::kAddSuffix, "0123abcd"),
              "\"v1-dcz-0123abcd\"");
    EXPECT_EQ(mc::alter_etag("\"v1\"", Coding::kDcz, mc::ETagMode::kAddSuffix, ""), "");
    EXPECT_EQ(mc::alter_etag("\"v1\"", Coding::kDcz, mc::ETagMode::kAddSuffix, "XYZ"), "");
    EXPECT_EQ(mc::etag_coding("\"v1-dcz-0123abcd\""), Coding::kDcz);
    EXPECT_EQ(mc::etag_coding("\"v1-dcz-0123abc\""), Coding::kIdentity);
    EXPECT_EQ(mc::strip_etag_suffixes("\"v1-dcz-0123abcd\""), "\"v1\"");
    // an identity tag that looks like ours is escaped
    EXPECT_EQ(mc::alter_etag("\"v1-dcz-0123abcd\"", Coding::kIdentity, mc::ETagMode::kAddSuffix),
              "\"v1-dcz-0123abcd-identity\"");
    const mc::CodingSet keep{Coding::kIdentity, Coding::kDcz};
    EXPECT_EQ(mc::rewrite_if_none_match("\"v1-dcz-0123abcd\"", keep, "0123abcd"), "\"v1\"");
    EXPECT_EQ(mc::rewrite_if_none_match("\"v1-dcz-0123abcd\"", keep, "ffff0000"), "");
}

TEST(Dictionary, ConfigurationOfDcz) {
    mc::Config cfg;
    EXPECT_EQ(cfg.level_for(Coding::kDcz), 3);
    ASSERT_TRUE(mc::set_level(cfg, "zstd", "7").is_ok());
    EXPECT_EQ(cfg.level_for(Coding::kDcz), 7);  // follows zstd
    ASSERT_TRUE(mc::set_level(cfg, "dcz", "12").is_ok());
    EXPECT_EQ(cfg.level_for(Coding::kDcz), 12);
    EXPECT_FALSE(mc::set_level(cfg, "dcz", "20").is_ok());
    EXPECT_EQ(cfg.cache_level_for(Coding::kDcz), 19);
    EXPECT_FALSE(mc::set_window(cfg, "dcz", "20").is_ok());
    mc::Coding c{};
    const mc::Status dcb = mc::parse_encoding("dcb", c);
    ASSERT_FALSE(dcb.is_ok());
    const std::uint32_t v = BrotliEncoderVersion();
    const std::string version = std::to_string(v >> 24) + "." + std::to_string((v >> 12) & 0xfff) +
                                "." + std::to_string(v & 0xfff);
    EXPECT_NE(std::string(dcb.reason()).find(version), std::string::npos) << dcb.reason();
    EXPECT_NE(std::string(dcb.reason()).find("1.1.0"), std::string::npos) << dcb.reason();
    EXPECT_TRUE(mc::parse_encoding("dcz", c).is_ok());
    EXPECT_EQ(c, Coding::kDcz);
    EXPECT_EQ(cfg.dictionary_max_size_value(), 4 << 20);
    EXPECT_FALSE(cfg.offers_dictionary());
}

}  // namespace
