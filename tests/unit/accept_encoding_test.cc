// SPDX-License-Identifier: Apache-2.0
// Accept-Encoding parsing: qvalue spellings, "*", identity, duplicates, case, whitespace, garbage.
#include "mc/accept_encoding.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mc/coding.h"

namespace {

using mc::AcceptEncoding;
using mc::Coding;
using mc::kQUnset;
using mc::parse_qvalue;

// ---- parse_qvalue: RFC 9110 §12.4.2, qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )

struct QCase {
    std::string text;
    int expected;  // thousandths, or kQUnset
};

const std::vector<QCase> kQCases = {
    // The brotli.t spellings of zero: all mean "not acceptable".
    QCase{"0", 0},
    QCase{"0.", 0},
    QCase{"0.0", 0},
    QCase{"0.00", 0},
    QCase{"0.000", 0},
    // Four decimals are not a qvalue.
    QCase{"0.0000", kQUnset},
    QCase{"0.0001", kQUnset},
    QCase{"0.5000", kQUnset},
    // One, with up to three zero decimals; fractions in thousandths.
    QCase{"1", 1000},
    QCase{"1.", 1000},
    QCase{"1.0", 1000},
    QCase{"1.00", 1000},
    QCase{"1.000", 1000},
    QCase{"1.0001", kQUnset},
    QCase{"1.001", kQUnset},
    QCase{"1.5", kQUnset},
    QCase{"0.5", 500},
    QCase{"0.05", 50},
    QCase{"0.005", 5},
    QCase{"0.001", 1},
    QCase{"0.123", 123},
    QCase{"0.999", 999},
    QCase{"0.50", 500},
    // Not the grammar.
    QCase{"1e-1", kQUnset},
    QCase{"1e0", kQUnset},
    QCase{"", kQUnset},
    QCase{".5", kQUnset},
    QCase{"2", kQUnset},
    QCase{"-0", kQUnset},
    QCase{"+1", kQUnset},
    QCase{"00", kQUnset},
    QCase{"01", kQUnset},
    QCase{"0,5", kQUnset},
    QCase{"0.-1", kQUnset},
    QCase{"0.5a", kQUnset},
    QCase{"0x1", kQUnset},
    QCase{" 0.5", kQUnset},
    QCase{"0.5 ", kQUnset},
    QCase{"\"0.5\"", kQUnset},
    QCase{"0..5", kQUnset},
    QCase{"1.0.", kQUnset},
    QCase{"10", kQUnset},
    QCase{"NaN", kQUnset},
    QCase{std::string("0\0", 2), kQUnset},
};

TEST(QValueTest, Spellings) {
    for (const QCase& c : kQCases) {
        EXPECT_EQ(parse_qvalue(c.text), c.expected) << "q=\"" << c.text << '"';
    }
}

// ---- Whole headers: the weight() each coding ends up with.

struct HeaderCase {
    const char* name;
    std::string header;
    int gzip;
    int br;
    int zstd;
    int deflate;
    int identity;
};

constexpr int k1 = 1000;

std::string long_garbage() {
    std::string s;
    for (int i = 0; i < 20000; ++i) s += "a-very-long-unknown-coding;q=0.5, ";
    s += "gzip;q=0.3";
    return s;
}

const std::vector<HeaderCase> kHeaderCases = {
    // name, header, then the weights of gzip, br, zstd, deflate, identity
    HeaderCase{"Empty", "", 0, 0, 0, 0, k1},
    HeaderCase{"Gzip", "gzip", k1, 0, 0, 0, k1},
    HeaderCase{"Browser", "gzip, deflate, br, zstd", k1, k1, k1, k1, k1},
    HeaderCase{"Weighted", "gzip;q=0.8, br;q=0.9, zstd;q=0.7", 800, 900, 700, 0, k1},
    // Zero spellings: listed, not acceptable.
    HeaderCase{"QZero", "gzip;q=0, br", 0, k1, 0, 0, k1},
    HeaderCase{"QZeroDot", "gzip;q=0., br", 0, k1, 0, 0, k1},
    HeaderCase{"QZeroThree", "gzip;q=0.000, br", 0, k1, 0, 0, k1},
    // Invalid q: the entry is ignored, so "*" decides for gzip.
    HeaderCase{"QFourDecimalsIgnored", "*;q=0.2, gzip;q=0.0000", 200, 200, 200, 200, k1},
    HeaderCase{"QOneThree", "gzip;q=1.000", k1, 0, 0, 0, k1},
    HeaderCase{"QOneFourIgnored", "*;q=0.2, gzip;q=1.0001", 200, 200, 200, 200, k1},
    HeaderCase{"QExponentIgnored", "*;q=0.3, gzip;q=1e-1", 300, 300, 300, 300, k1},
    HeaderCase{"QExponentAlone", "gzip;q=1e-1", 0, 0, 0, 0, k1},
    HeaderCase{"QTooBigIgnored", "gzip;q=2, br;q=1.5", 0, 0, 0, 0, k1},
    // "*" matches every coding not named (RFC 9110 §12.5.3).
    HeaderCase{"Star", "*", k1, k1, k1, k1, k1},
    HeaderCase{"StarWeighted", "*;q=0.5", 500, 500, 500, 500, k1},
    HeaderCase{"StarZero", "*;q=0", 0, 0, 0, 0, 0},
    HeaderCase{"StarZeroIdentity", "*;q=0, identity", 0, 0, 0, 0, k1},
    HeaderCase{"StarZeroGzip", "*;q=0, gzip;q=0.4", 400, 0, 0, 0, 0},
    HeaderCase{"StarNamedZero", "*, gzip;q=0", 0, k1, k1, k1, k1},
    HeaderCase{"StarNamedLower", "br;q=0.1, *;q=0.9", 900, 100, 900, 900, k1},
    HeaderCase{"IdentityZero", "identity;q=0", 0, 0, 0, 0, 0},
    HeaderCase{"IdentityZeroGzip", "gzip, identity;q=0", k1, 0, 0, 0, 0},
    HeaderCase{"IdentityWeighted", "identity;q=0.5", 0, 0, 0, 0, 500},
    HeaderCase{"StarZeroIdentityHalf", "*;q=0, identity;q=0.5", 0, 0, 0, 0, 500},
    // x-gzip is gzip (RFC 9110 §8.4.1.3).
    HeaderCase{"XGzip", "x-gzip", k1, 0, 0, 0, k1},
    HeaderCase{"XGzipWeighted", "X-Gzip;q=0.4", 400, 0, 0, 0, k1},
    // Duplicates: the lowest weight wins (documented in accept_encoding.h).
    HeaderCase{"DupLowestWins", "gzip;q=0.8, gzip;q=0.2", 200, 0, 0, 0, k1},
    HeaderCase{"DupLowestWinsReversed", "gzip;q=0.2, gzip;q=0.8", 200, 0, 0, 0, k1},
    HeaderCase{"DupZeroLast", "gzip, gzip;q=0", 0, 0, 0, 0, k1},
    HeaderCase{"DupZeroFirst", "gzip;q=0, gzip", 0, 0, 0, 0, k1},
    HeaderCase{"DupAlias", "x-gzip;q=0.5, gzip", 500, 0, 0, 0, k1},
    HeaderCase{"DupStar", "*;q=0.5, *;q=0.1", 100, 100, 100, 100, k1},
    HeaderCase{"DupIdentity", "identity, identity;q=0", 0, 0, 0, 0, 0},
    HeaderCase{"DupInvalidDoesNotCount", "gzip;q=0.5, gzip;q=0.0000", 500, 0, 0, 0, k1},
    // Tokens and the q name are case-insensitive.
    HeaderCase{"CaseUpper", "GZIP", k1, 0, 0, 0, k1},
    HeaderCase{"CaseMixed", "Br, ZSTD", 0, k1, k1, 0, k1},
    HeaderCase{"CaseQ", "gzip;Q=0.5, Deflate;Q=0", 500, 0, 0, 0, k1},
    HeaderCase{"CaseIdentity", "IDENTITY;q=0", 0, 0, 0, 0, 0},
    // Optional whitespace (SP, HTAB) around ',' and ';'.
    HeaderCase{"OwsSpaces", "  gzip ; q=0.5 ,  br  ", 500, k1, 0, 0, k1},
    HeaderCase{"OwsTabs", "\tgzip\t;\tq=0.5\t,\tbr\t", 500, k1, 0, 0, k1},
    HeaderCase{"OwsNoSpace", "gzip;q=0.5,br;q=0.25", 500, 250, 0, 0, k1},
    // The RFC has no whitespace around '='; the parser tolerates it, so a refusal spelled
    // "q = 0" is still a refusal (ignoring it would let "*" override it).
    HeaderCase{"OwsAroundEquals", "*, gzip;q = 0, br;q =0.5, zstd;q= 0.25", 0, 500, 250, k1, k1},
    // Garbage never fails the parse; what cannot be parsed is ignored.
    HeaderCase{"Semicolons", ";;;", 0, 0, 0, 0, k1},
    HeaderCase{"Commas", ",,,", 0, 0, 0, 0, k1},
    HeaderCase{"CommasAround", ",, gzip ,, br;q=0.5 ,,", k1, 500, 0, 0, k1},
    HeaderCase{"BareQ", "gzip;q", 0, 0, 0, 0, k1},
    HeaderCase{"BareQStar", "*;q=0.1, gzip;q", 100, 100, 100, 100, k1},
    HeaderCase{"EmptyQ", "gzip;q=", 0, 0, 0, 0, k1},
    HeaderCase{"EmptyQStar", "*;q=0.1, gzip;q=", 100, 100, 100, 100, k1},
    HeaderCase{"EqualsOnly", "gzip;=, br", 0, k1, 0, 0, k1},
    HeaderCase{"QTwiceOneBad", "gzip;q=0.5;q=", 0, 0, 0, 0, k1},
    HeaderCase{"QQuoted", "gzip;q=\"0.5\"", 0, 0, 0, 0, k1},
    HeaderCase{"QDoubleEquals", "gzip;q=0.5=1", 0, 0, 0, 0, k1},
    HeaderCase{"ExtraParamBefore", "gzip;level=1;q=0.5", 500, 0, 0, 0, k1},
    HeaderCase{"ExtraParamAfter", "gzip;q=0.5;level=1", 500, 0, 0, 0, k1},
    HeaderCase{"BareParam", "gzip;foo", k1, 0, 0, 0, k1},
    HeaderCase{"EmptyParams", "gzip;;q=0.5;", 500, 0, 0, 0, k1},
    HeaderCase{"SpaceInToken", "gz ip, br", 0, k1, 0, 0, k1},
    HeaderCase{"UnknownCodings", "compress, foo;q=1, bar", 0, 0, 0, 0, k1},
    HeaderCase{"Utf8", "\xc3\xa9gzip, gzip\xc3\xa9, br", 0, k1, 0, 0, k1},
    HeaderCase{"HighBytes", "\xff\xfe, gzip;q=0.5, \x80", 500, 0, 0, 0, k1},
    HeaderCase{"Nul", std::string("gz\0ip, br", 9), 0, k1, 0, 0, k1},
    HeaderCase{"CrLf", "gzip\r\n, br", 0, k1, 0, 0, k1},
    HeaderCase{"BadParamName", "gzip;q@=0, br", 0, k1, 0, 0, k1},
    HeaderCase{"LongGarbage", long_garbage(), 300, 0, 0, 0, k1},
};

TEST(AcceptEncodingTest, WeightTable) {
    for (const HeaderCase& c : kHeaderCases) {
        SCOPED_TRACE(::testing::Message() << c.name << ": \"" << c.header.substr(0, 200) << '"');
        const AcceptEncoding ae = AcceptEncoding::parse(c.header);
        EXPECT_TRUE(ae.present());
        EXPECT_EQ(ae.weight(Coding::kGzip), c.gzip) << "gzip";
        EXPECT_EQ(ae.weight(Coding::kBrotli), c.br) << "br";
        EXPECT_EQ(ae.weight(Coding::kZstd), c.zstd) << "zstd";
        EXPECT_EQ(ae.weight(Coding::kDeflate), c.deflate) << "deflate";
        EXPECT_EQ(ae.weight(Coding::kIdentity), c.identity) << "identity";
    }
}

// ---- Details the weight table does not show.

TEST(AcceptEncodingTest, AbsentHeaderIsNotPresent) {
    const AcceptEncoding ae = AcceptEncoding::parse("", false);
    EXPECT_FALSE(ae.present());
    EXPECT_EQ(ae.weight(Coding::kIdentity), 1000);
    for (const Coding c : mc::kAllCompressing) EXPECT_EQ(ae.explicit_weight(c), kQUnset);
    EXPECT_EQ(ae.star_weight(), kQUnset);
}

TEST(AcceptEncodingTest, EmptyHeaderIsPresent) {
    EXPECT_TRUE(AcceptEncoding::parse("").present());
    EXPECT_TRUE(AcceptEncoding::parse(",,,").present());
}

TEST(AcceptEncodingTest, ExplicitWeightsTellZeroFromIgnored) {
    const AcceptEncoding ae =
        AcceptEncoding::parse("gzip;q=0, br;q=0.0000, zstd;q=0.001, deflate;q=, *;q=0.75");
    EXPECT_EQ(ae.explicit_weight(Coding::kGzip), 0);
    EXPECT_EQ(ae.explicit_weight(Coding::kBrotli), kQUnset);
    EXPECT_EQ(ae.explicit_weight(Coding::kZstd), 1);
    EXPECT_EQ(ae.explicit_weight(Coding::kDeflate), kQUnset);
    EXPECT_EQ(ae.explicit_weight(Coding::kIdentity), kQUnset);
    EXPECT_EQ(ae.star_weight(), 750);
    EXPECT_EQ(ae.weight(Coding::kBrotli), 750);
    EXPECT_EQ(ae.weight(Coding::kDeflate), 750);
}

TEST(AcceptEncodingTest, UnlistedCodingIsNotAcceptableWithoutStar) {
    const AcceptEncoding ae = AcceptEncoding::parse("br");
    EXPECT_EQ(ae.weight(Coding::kZstd), 0);
    EXPECT_EQ(ae.explicit_weight(Coding::kZstd), kQUnset);
    EXPECT_EQ(ae.star_weight(), kQUnset);
}

TEST(AcceptEncodingTest, WeightsStayInRangeForEveryQ) {
    // Every valid spelling with three decimals maps to its thousandths, monotonically.
    for (int t = 0; t <= 1000; ++t) {
        std::string q = t == 1000 ? "1.000" : "0.";
        if (t < 1000) {
            q += static_cast<char>('0' + t / 100);
            q += static_cast<char>('0' + t / 10 % 10);
            q += static_cast<char>('0' + t % 10);
        }
        const AcceptEncoding ae = AcceptEncoding::parse("zstd;q=" + q);
        ASSERT_EQ(ae.weight(Coding::kZstd), t) << q;
    }
}

}  // namespace
