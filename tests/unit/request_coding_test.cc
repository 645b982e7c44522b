// SPDX-License-Identifier: Apache-2.0
// The outermost coding of a request body's Content-Encoding (DEFLATE input filter, 415).
#include "mc/request_coding.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using mc::Coding;
using Kind = mc::RequestCoding::Kind;

struct Case {
    const char* ce;
    Kind kind;
    Coding coding;
    const char* rest;  // kDecode: what stays; kUnsupported: the token
};

TEST(RequestCodingTest, Table) {
    for (const Case& c : std::vector<Case>{
             {"", Kind::kNone, Coding::kIdentity, ""},
             {"identity", Kind::kNone, Coding::kIdentity, ""},
             {" Identity , ,identity", Kind::kNone, Coding::kIdentity, ""},
             {",", Kind::kNone, Coding::kIdentity, ""},
             {"gzip", Kind::kDecode, Coding::kGzip, ""},
             {"GZip", Kind::kDecode, Coding::kGzip, ""},
             {"x-gzip", Kind::kDecode, Coding::kGzip, ""},
             {"deflate", Kind::kDecode, Coding::kDeflate, ""},
             {"br", Kind::kDecode, Coding::kBrotli, ""},
             {"zstd", Kind::kDecode, Coding::kZstd, ""},
             // empty members and identity are skipped (mod_deflate skips them too)
             {"gzip, ", Kind::kDecode, Coding::kGzip, ""},
             {"gzip,,", Kind::kDecode, Coding::kGzip, ""},
             {"gzip, identity", Kind::kDecode, Coding::kGzip, ""},
             {"identity, gzip", Kind::kDecode, Coding::kGzip, ""},
             // only the outermost (last) is removed
             {"br, gzip", Kind::kDecode, Coding::kGzip, "br"},
             {"zstd,  identity, br ,gzip", Kind::kDecode, Coding::kGzip, "zstd, br"},
             {"something-unknown, gzip", Kind::kDecode, Coding::kGzip, "something-unknown"},
             {"gzip, gzip", Kind::kDecode, Coding::kGzip, "gzip"},
             // what we do not decode
             {"something-unknown", Kind::kUnsupported, Coding::kIdentity, "something-unknown"},
             {"dcz", Kind::kUnsupported, Coding::kIdentity, "dcz"},
             {"dcb", Kind::kUnsupported, Coding::kIdentity, "dcb"},
             {"compress", Kind::kUnsupported, Coding::kIdentity, "compress"},
             {"gzip, compress", Kind::kUnsupported, Coding::kIdentity, "compress"},
             {"gzip;q=1", Kind::kUnsupported, Coding::kIdentity, "gzip;q=1"},
             {"br, dcz , identity", Kind::kUnsupported, Coding::kIdentity, "dcz"},
         }) {
        const mc::RequestCoding got = mc::outer_request_coding(c.ce);
        EXPECT_EQ(got.kind, c.kind) << c.ce;
        if (c.kind == Kind::kDecode) {
            EXPECT_EQ(got.coding, c.coding) << c.ce;
            EXPECT_EQ(got.rest, c.rest) << c.ce;
        } else if (c.kind == Kind::kUnsupported) {
            EXPECT_EQ(got.token, c.rest) << c.ce;
        }
    }
}

TEST(RequestCodingTest, AcceptEncodingListsWhatIsDecoded) {
    // Every coding it names is one outer_request_coding decodes, and dcz is not among them.
    std::string_view list = mc::kDecodedRequestCodings;
    int n = 0;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string token(mc::trim_ows(list.substr(0, comma)));
        EXPECT_EQ(mc::outer_request_coding(token).kind, Kind::kDecode) << token;
        ++n;
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    EXPECT_EQ(n, 4);
}

}  // namespace
