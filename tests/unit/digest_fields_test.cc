// SPDX-License-Identifier: Apache-2.0
// RFC 9651 Dictionaries and RFC 9530 integrity fields: parsing, checking, making them again.
#include "mc/digest_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mc/structured_field.h"

namespace {

using mc::DigestAlgorithm;
using mc::sf::Kind;

std::string bytes_of(std::string_view hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
    }
    return out;
}

// FIPS 180-2 test vectors for "abc".
const std::string kAbcSha256 =
    bytes_of("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
const std::string kAbcSha512 = bytes_of(
    "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feeb"
    "b"
    "d454d4423643ce80e2a9ac94fa54ca49f");

TEST(StructuredFieldTest, Base64OfTheRfcVectors) {
    // RFC 4648 §10.
    EXPECT_EQ(mc::sf::base64(""), "");
    EXPECT_EQ(mc::sf::base64("f"), "Zg==");
    EXPECT_EQ(mc::sf::base64("fo"), "Zm8=");
    EXPECT_EQ(mc::sf::base64("foo"), "Zm9v");
    EXPECT_EQ(mc::sf::base64("foob"), "Zm9vYg==");
    EXPECT_EQ(mc::sf::base64("fooba"), "Zm9vYmE=");
    EXPECT_EQ(mc::sf::base64("foobar"), "Zm9vYmFy");
}

TEST(StructuredFieldTest, DictionaryOfEveryItemType) {
    auto d = mc::sf::parse_dictionary(
        R"(a=1, b=-2.5, c="x\"y", d=tok/en:1, e=:Zm9vYg==:, f=?0, g, h=@1659578233, )"
        R"(i=%"caf%c3%a9", j=(1 "two" three);p=1, k;q=2)");
    ASSERT_TRUE(d.is_ok()) << d.status().reason();
    const std::vector<mc::sf::Member>& m = d.value();
    ASSERT_EQ(m.size(), 11u);
    const std::vector<std::pair<std::string, Kind>> want = {
        {"a", Kind::kInteger},   {"b", Kind::kDecimal},      {"c", Kind::kString},
        {"d", Kind::kToken},     {"e", Kind::kByteSequence}, {"f", Kind::kBoolean},
        {"g", Kind::kBoolean},   {"h", Kind::kDate},         {"i", Kind::kDisplayString},
        {"j", Kind::kInnerList}, {"k", Kind::kBoolean}};
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(m[i].key, want[i].first) << i;
        EXPECT_EQ(m[i].kind, want[i].second) << i;
    }
    EXPECT_EQ(m[2].bytes, "x\"y");
    EXPECT_EQ(m[3].bytes, "tok/en:1");
    EXPECT_EQ(m[4].bytes, "foob");
    EXPECT_EQ(m[8].bytes, "caf\xc3\xa9");
}

TEST(StructuredFieldTest, LaterDuplicateWinsInTheFirstPlace) {
    auto d = mc::sf::parse_dictionary("a=1, b=2, a=3");
    ASSERT_TRUE(d.is_ok());
    ASSERT_EQ(d.value().size(), 2u);
    EXPECT_EQ(d.value()[0].key, "a");
    EXPECT_EQ(d.value()[0].bytes, "3");
}

TEST(StructuredFieldTest, WhitespaceAndEmpty) {
    EXPECT_TRUE(mc::sf::parse_dictionary("").is_ok());
    EXPECT_TRUE(mc::sf::parse_dictionary("   ").is_ok());
    auto d = mc::sf::parse_dictionary("  a=1 ,\tb=2  ");
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(d.value().size(), 2u);
}

TEST(StructuredFieldTest, RejectsWhatIsNotADictionary) {
    for (const char* bad : {
             "A=1",                 // keys are lowercase
             "1a=1",                // keys start with a letter or '*'
             "a=1,",                // a comma at the end
             "a=1,,b=2",            // an empty member
             "a=1 b=2",             // no comma
             "a=",                  // no value
             "a=:Zm9v",             // an open byte sequence
             "a=:Zm9v!:",           // not base64
             "a=:Z:",               // one base64 character
             "a=\"open",            // an open string
             "a=\"\\x\"",           // a bad escape
             "a=\"\x01\"",          // a control character
             "a=(1 2",              // an open inner list
             "a=(1,2)",             // inner list items need spaces
             "a=?2",                // not a boolean
             "a=1234567890123456",  // an integer over 15 digits
             "a=1.2345",            // four fraction digits
             "a=1.",                // no fraction digit
             "a=@1.5",              // a date must be an integer
             "a=%\"%C3%A9\"",       // uppercase percent-encoding
             "a=%\"%ff\"",          // not UTF-8
             "a=<x>",               // no such type
             "a=1;B=2",             // parameter keys are lowercase too
         }) {
        EXPECT_FALSE(mc::sf::parse_dictionary(bad).is_ok()) << bad;
    }
}

TEST(DigestFieldTest, KnownAlgorithmsInOrderOthersCounted) {
    const std::string v = "md5=:HUXZLQLMuI/KZ5KDcJPcOA==:, sha-512=:" + mc::sf::base64(kAbcSha512) +
                          ":, unixsum=30637, sha-256=:" + mc::sf::base64(kAbcSha256) + ":;p=1";
    auto f = mc::parse_digest_field(v);
    ASSERT_TRUE(f.is_ok()) << f.status().reason();
    ASSERT_EQ(f.value().members.size(), 2u);
    EXPECT_EQ(f.value().members[0].algorithm, DigestAlgorithm::kSha512);
    EXPECT_EQ(f.value().members[0].value, kAbcSha512);
    EXPECT_EQ(f.value().members[1].algorithm, DigestAlgorithm::kSha256);
    EXPECT_EQ(f.value().unknown, 2u);
    EXPECT_EQ(f.value().algorithms(),
              mc::digest_bit(DigestAlgorithm::kSha256) | mc::digest_bit(DigestAlgorithm::kSha512));
}

TEST(DigestFieldTest, MalformedForKnownAlgorithms) {
    for (const std::string& bad : std::vector<std::string>{
             "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",  // a token, not :b64:
             "sha-256=\"" + mc::sf::base64(kAbcSha256) + "\"",        // a string
             "sha-256=:" + mc::sf::base64(kAbcSha512) + ":",          // sha-512's length
             "sha-256=:Zm9v:",                                        // too short
             "sha-256=(:" + mc::sf::base64(kAbcSha256) + ":)",        // an inner list
             "sha-256",                                               // a bare key
             "SHA-256=:" + mc::sf::base64(kAbcSha256) + ":",          // RFC 3230 spelling
             "sha-256=:" + mc::sf::base64(kAbcSha256) + ":,",         // not a dictionary
         }) {
        EXPECT_FALSE(mc::parse_digest_field(bad).is_ok()) << bad;
    }
    // An unknown algorithm's value is not checked.
    auto f = mc::parse_digest_field("md5=whatever, crc32c=?1");
    ASSERT_TRUE(f.is_ok());
    EXPECT_TRUE(f.value().members.empty());
    EXPECT_EQ(f.value().unknown, 2u);
}

TEST(DigestFieldTest, CheckAndMakeAgain) {
    auto f = mc::parse_digest_field("sha-256=:" + mc::sf::base64(kAbcSha256) +
                                    ":, sha-512=:" + mc::sf::base64(kAbcSha512) + ":");
    ASSERT_TRUE(f.is_ok());
    mc::Digester abc(f.value().algorithms());
    abc.update(std::string_view("a"));
    abc.update(std::string_view("bc"));  // in pieces
    const mc::DigestValues v = abc.finish();
    EXPECT_EQ(v[0], kAbcSha256);
    EXPECT_EQ(v[1], kAbcSha512);
    EXPECT_TRUE(mc::digest_field_matches(f.value(), v));
    EXPECT_EQ(mc::format_digest_field(f.value(), v),
              "sha-256=:" + mc::sf::base64(kAbcSha256) +
                  ":, sha-512=:" + mc::sf::base64(kAbcSha512) + ":");

    mc::Digester other(f.value().algorithms());
    other.update(std::string_view("abd"));
    const mc::DigestValues w = other.finish();
    EXPECT_FALSE(mc::digest_field_matches(f.value(), w));
    // Made again over other bytes: the same algorithms, the new values, parseable.
    auto again = mc::parse_digest_field(mc::format_digest_field(f.value(), w));
    ASSERT_TRUE(again.is_ok());
    EXPECT_TRUE(mc::digest_field_matches(again.value(), w));
}

TEST(DigestFieldTest, OnlyTheAlgorithmsAskedForAreComputed) {
    mc::Digester d(mc::digest_bit(DigestAlgorithm::kSha512));
    d.update(std::string_view("abc"));
    const mc::DigestValues v = d.finish();
    EXPECT_TRUE(v[0].empty());
    EXPECT_EQ(v[1], kAbcSha512);
    auto f = mc::parse_digest_field("sha-256=:" + mc::sf::base64(kAbcSha256) + ":");
    ASSERT_TRUE(f.is_ok());
    EXPECT_FALSE(mc::digest_field_matches(f.value(), v)) << "a missing digest never matches";
    EXPECT_EQ(mc::format_digest_field(f.value(), v), "");
}

}  // namespace
