// SPDX-License-Identifier: Apache-2.0
// mc::Decoder over bodies of several gzip members or zstd frames (skippable frames anywhere):
// one body, cut anywhere, with only members after a member, limits over the whole body. The rest
// of the decoder's tests: decoder_test.cc.
#include "mc/decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "decoder_util.h"
#include "mc/sink.h"

namespace {

using mc::Code;
using mc::Coding;
using mc::InflateLimits;
using mc::Status;
using mc_test::as_bytes;
using mc_test::compress;
using mc_test::decoder;
using mc_test::kNoLimits;
using mc_test::noise;
using mc_test::text;

// RFC 8878 section 3.1.2: magic 0x184D2A50..5F, a little-endian 32-bit size, that many bytes.
std::string skippable(std::string_view payload, unsigned variant = 0) {
    std::string s;
    const std::uint32_t magic = 0x184D2A50U + (variant & 0xFU);
    const auto size = static_cast<std::uint32_t>(payload.size());
    for (int i = 0; i < 4; ++i) s += static_cast<char>((magic >> (8 * i)) & 0xFFU);
    for (int i = 0; i < 4; ++i) s += static_cast<char>((size >> (8 * i)) & 0xFFU);
    return s + std::string(payload);
}

// Decodes `enc` in random pieces (1..max_piece bytes); the status of the first failing write.
Status decode_pieces(mc::Decoder& d, std::string_view enc, mc::StringSink& out, std::mt19937& rng,
                     std::size_t max_piece) {
    std::size_t pos = 0;
    while (pos < enc.size()) {
        const std::size_t n = std::min<std::size_t>(enc.size() - pos, 1 + rng() % max_piece);
        if (Status st = d.write(as_bytes(enc.substr(pos, n)), out); !st.is_ok()) return st;
        pos += n;
    }
    return Status::ok();
}

TEST(DecoderMembersTest, GzipMembersAreOneBody) {
    // RFC 1952 section 2.2: a gzip file is a series of members; `cat a.gz b.gz` is valid.
    std::mt19937 rng(77);
    const std::string parts[] = {text(100000, 11), std::string(), "x", noise(5000, 12),
                                 text(3000, 13)};
    std::string body;
    std::string enc;
    for (const std::string& p : parts) {
        body += p;
        enc += compress(Coding::kGzip, p);
    }
    for (const std::size_t max_piece : {1UL, 7UL, 3000UL, enc.size()}) {
        SCOPED_TRACE(max_piece);
        auto d = decoder(Coding::kGzip);
        mc::StringSink out(1 + rng() % 20000);
        const Status st = decode_pieces(*d, enc, out, rng, max_piece);
        ASSERT_TRUE(st.is_ok()) << st.reason();
        EXPECT_TRUE(d->finished());
        EXPECT_TRUE(out.data() == body);
        EXPECT_EQ(d->total_in(), enc.size());
    }
}

TEST(DecoderMembersTest, ZstdFramesAndSkippableFramesAreOneBody) {
    std::mt19937 rng(78);
    const std::string a = text(200000, 21);
    const std::string b = noise(3000, 22);
    const std::string za = compress(Coding::kZstd, a);
    const std::string zb = compress(Coding::kZstd, b);
    const std::string ze = compress(Coding::kZstd, "");
    struct Case {
        const char* name;
        std::string enc;
        std::string body;
    };
    const Case cases[] = {
        {"two frames", za + zb, a + b},
        {"skippable first", skippable("meta") + za, a},
        {"skippable between", za + skippable(std::string(70000, 's'), 15) + zb, a + b},
        {"skippable last", za + zb + skippable(""), a + b},
        {"empty frame between", za + ze + zb, a + b},
        {"only skippable frames", skippable("one") + skippable("", 7), ""},
        {"one empty skippable frame", skippable(""), ""},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        for (const std::size_t max_piece : {1UL, 5UL, 4000UL, c.enc.size()}) {
            SCOPED_TRACE(max_piece);
            auto d = decoder(Coding::kZstd);
            mc::StringSink out(1 + rng() % 20000);
            const Status st = decode_pieces(*d, c.enc, out, rng, max_piece);
            ASSERT_TRUE(st.is_ok()) << st.reason();
            EXPECT_TRUE(d->finished());
            EXPECT_TRUE(out.data() == c.body);
        }
    }
}

TEST(DecoderMembersTest, EveryCutIsTruncatedUnlessAtAMemberEnd) {
    // Cut after every byte: finished() only at the end of a member or frame, and then the
    // output is exactly the members before the cut.
    const std::string p1 = text(3000, 31);
    const std::string p2 = text(2000, 32);
    for (const Coding c : {Coding::kGzip, Coding::kZstd}) {
        SCOPED_TRACE(mc::coding_token(c));
        const std::string e1 = compress(c, p1);
        const std::string e2 = compress(c, p2);
        std::string enc = e1 + e2;
        std::string sk;
        if (c == Coding::kZstd) {
            sk = skippable("0123456789");
            enc += sk;
        }
        for (std::size_t cut = 0; cut <= enc.size(); ++cut) {
            auto d = decoder(c);
            mc::StringSink out;
            const Status st = d->write(as_bytes(std::string_view(enc).substr(0, cut)), out);
            ASSERT_TRUE(st.is_ok()) << cut << ": " << st.reason();
            const bool boundary = cut == e1.size() || cut == e1.size() + e2.size() ||
                                  (!sk.empty() && cut == enc.size());
            ASSERT_EQ(d->finished(), boundary) << cut;
            if (boundary) {
                EXPECT_TRUE(out.data() == (cut == e1.size() ? p1 : p1 + p2)) << cut;
            } else {
                EXPECT_TRUE((p1 + p2).starts_with(out.data())) << cut;
            }
        }
    }
}

TEST(DecoderMembersTest, WhatFollowsAMemberMustBeOne) {
    const std::string gz = compress(Coding::kGzip, text(5000, 41));
    const std::string zs = compress(Coding::kZstd, text(5000, 42));
    struct Case {
        Coding c;
        const char* name;
        std::string enc;
    };
    const Case cases[] = {
        {Coding::kGzip, "garbage", gz + "GARBAGE"},
        {Coding::kGzip, "zero padding", gz + std::string(16, '\0')},
        {Coding::kGzip, "bad second magic", gz + "\x1f\x8c" + gz.substr(2)},
        {Coding::kGzip, "damaged second member",
         gz + gz.substr(0, 100) + static_cast<char>(gz[100] ^ 0x40) + gz.substr(101)},
        {Coding::kZstd, "garbage", zs + "GARBAGE!"},
        {Coding::kZstd, "bad second magic", zs + "\x29" + zs.substr(1)},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(::testing::Message() << mc::coding_token(c.c) << " " << c.name);
        auto d = decoder(c.c);
        mc::StringSink out;
        EXPECT_EQ(d->write(as_bytes(c.enc), out).code(), Code::kCorrupt);
    }
    // A lone byte of a next member is a truncated member, not an end.
    for (const auto& [c, enc] : {std::pair{Coding::kGzip, gz}, std::pair{Coding::kZstd, zs}}) {
        auto d = decoder(c);
        mc::StringSink out;
        ASSERT_TRUE(d->write(as_bytes(enc + enc.substr(0, 1)), out).is_ok());
        EXPECT_FALSE(d->finished());
    }
    // A skippable frame whose payload is shorter than its size field says.
    auto d = decoder(Coding::kZstd);
    mc::StringSink out;
    const std::string sk = skippable("payload");
    ASSERT_TRUE(d->write(as_bytes(zs + sk.substr(0, sk.size() - 1)), out).is_ok());
    EXPECT_FALSE(d->finished());
}

TEST(DecoderMembersTest, LimitsCountTheWholeBody) {
    // 5 members of 40000 bytes against a 100000-byte limit: the third member crosses it.
    const std::string part = text(40000, 51);
    for (const Coding c : {Coding::kGzip, Coding::kZstd}) {
        SCOPED_TRACE(mc::coding_token(c));
        std::string enc;
        for (int i = 0; i < 5; ++i) enc += compress(c, part);
        auto d = decoder(c, InflateLimits{100000, 0, 0});
        mc::StringSink out;
        EXPECT_EQ(d->write(as_bytes(enc), out).code(), Code::kLimitExceeded);
        EXPECT_GT(d->total_out(), 100000U);
        EXPECT_LE(d->total_out(), 100000U + mc::Decoder::kDecodeStep);
    }
    // The ratio too: many small members of zeros each under the burst, the body over it.
    for (const Coding c : {Coding::kGzip, Coding::kZstd}) {
        SCOPED_TRACE(mc::coding_token(c));
        const std::string zeros_member = compress(c, std::string(1 << 20, '\0'), 9);
        std::string enc;
        for (int i = 0; i < 64; ++i) enc += zeros_member;
        auto d = decoder(c, InflateLimits{0, 200, 3});
        mc::StringSink out;
        EXPECT_EQ(d->write(as_bytes(enc), out).code(), Code::kLimitExceeded);
        EXPECT_LT(d->total_out(), std::uint64_t{64} << 20);
    }
}

}  // namespace
