// SPDX-License-Identifier: Apache-2.0
// Header rules: token lists (Vary, Cache-Control), identity Content-Encoding, ETag suffixes.
#include "mc/headers.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "mc/coding.h"
#include "mc/config.h"

namespace {

using mc::Coding;
using mc::ETagMode;

struct ListCase {
    const char* list;
    const char* token;
    bool has;
};

TEST(ListHasTokenTest, Vary) {
    for (const ListCase& c : std::vector<ListCase>{
             {"Accept-Encoding", "Accept-Encoding", true},
             {"accept-encoding", "Accept-Encoding", true},
             {"ACCEPT-ENCODING", "Accept-Encoding", true},
             {"Cookie, Accept-Encoding", "Accept-Encoding", true},
             {"Cookie,Accept-Encoding", "Accept-Encoding", true},
             {" Accept-Encoding , User-Agent", "Accept-Encoding", true},
             {"\tAccept-Encoding\t", "Accept-Encoding", true},
             {"User-Agent,,Accept-Encoding,", "Accept-Encoding", true},
             {"", "Accept-Encoding", false},
             {",,,", "Accept-Encoding", false},
             {"Accept-Encoding-X", "Accept-Encoding", false},
             {"X-Accept-Encoding", "Accept-Encoding", false},
             {"Accept", "Accept-Encoding", false},
             {"Accept, Encoding", "Accept-Encoding", false},
             {"Cookie User-Agent", "Cookie", false},
             // "Vary: *" does not name Accept-Encoding; adding it there is harmless.
             {"*", "Accept-Encoding", false},
             {"Origin, *", "*", true},
         }) {
        EXPECT_EQ(mc::list_has_token(c.list, c.token), c.has)
            << '"' << c.list << "\" has \"" << c.token << '"';
    }
}

TEST(ListHasTokenTest, CacheControl) {
    for (const ListCase& c : std::vector<ListCase>{
             {"no-transform", "no-transform", true},
             {"No-Transform", "no-transform", true},
             {"max-age=60, no-transform", "no-transform", true},
             {"no-transform, max-age=60", "no-transform", true},
             {"public,no-transform,max-age=0", "no-transform", true},
             {"max-age=60", "no-transform", false},
             {"no-transformer", "no-transform", false},
             {"x-no-transform", "no-transform", false},
             {"no-cache", "no-transform", false},
             {"", "no-transform", false},
             // A directive's value is not a directive.
             {"private=\"no-transform\"", "no-transform", false},
             {"ext=no-transform", "no-transform", false},
         }) {
        EXPECT_EQ(mc::list_has_token(c.list, c.token), c.has)
            << '"' << c.list << "\" has \"" << c.token << '"';
    }
}

TEST(IsIdentityEncodingTest, Table) {
    struct Case {
        const char* value;
        bool identity;
    };
    for (const Case& c : std::vector<Case>{
             {"", true},
             {"identity", true},
             {"IDENTITY", true},
             {"identity, identity", true},
             {" identity ,identity ", true},
             {",", true},
             {"gzip", false},
             {"br", false},
             {"zstd", false},
             {"x-gzip", false},
             {"GZIP", false},
             {"identity, gzip", false},
             {"gzip, identity", false},
             {"identityx", false},
             {"compress", false},
         }) {
        EXPECT_EQ(mc::is_identity_encoding(c.value), c.identity) << '"' << c.value << '"';
    }
}

// ---- ETag: suffix as mod_deflate (PR 39727)

TEST(AlterEtagTest, AddSuffixStrongAndWeak) {
    EXPECT_EQ(mc::alter_etag("\"abc\"", Coding::kGzip, ETagMode::kAddSuffix), "\"abc-gzip\"");
    EXPECT_EQ(mc::alter_etag("\"abc\"", Coding::kDeflate, ETagMode::kAddSuffix), "\"abc-deflate\"");
    EXPECT_EQ(mc::alter_etag("\"abc\"", Coding::kBrotli, ETagMode::kAddSuffix), "\"abc-br\"");
    EXPECT_EQ(mc::alter_etag("\"abc\"", Coding::kZstd, ETagMode::kAddSuffix), "\"abc-zstd\"");
    EXPECT_EQ(mc::alter_etag("W/\"abc\"", Coding::kZstd, ETagMode::kAddSuffix), "W/\"abc-zstd\"");
    // httpd's own ETag format.
    EXPECT_EQ(mc::alter_etag("\"2d-432a5e4a73a80\"", Coding::kBrotli, ETagMode::kAddSuffix),
              "\"2d-432a5e4a73a80-br\"");
}

TEST(AlterEtagTest, BackendTagsThatEndInOurSuffixes) {
    // A backend's tag that already ends in one of our suffixes still gets a distinct tag per
    // representation: a coded one always gets its suffix, an identity one the "-identity" escape.
    EXPECT_EQ(mc::alter_etag("\"v1-gzip\"", Coding::kGzip, ETagMode::kAddSuffix),
              "\"v1-gzip-gzip\"");
    EXPECT_EQ(mc::alter_etag("\"v1-gzip\"", Coding::kIdentity, ETagMode::kAddSuffix),
              "\"v1-gzip-identity\"");
    EXPECT_EQ(mc::alter_etag("W/\"v1-br\"", Coding::kZstd, ETagMode::kAddSuffix),
              "W/\"v1-br-zstd\"");
    EXPECT_EQ(mc::alter_etag("W/\"v1-br\"", Coding::kIdentity, ETagMode::kAddSuffix),
              "W/\"v1-br-identity\"");
    EXPECT_EQ(mc::alter_etag("\"v1-identity\"", Coding::kIdentity, ETagMode::kAddSuffix),
              "\"v1-identity-identity\"");
    // Only a whole suffix counts.
    EXPECT_EQ(mc::alter_etag("\"abcgzip\"", Coding::kGzip, ETagMode::kAddSuffix),
              "\"abcgzip-gzip\"");
    EXPECT_EQ(mc::alter_etag("\"abcgzip\"", Coding::kIdentity, ETagMode::kAddSuffix),
              "\"abcgzip\"");
}

TEST(AlterEtagTest, EveryRepresentationDistinctAndRoundTrips) {
    // The case table of headers.h: for any backend tag, the five representations carry five
    // different tags, each strips back to the backend's tag exactly, and names its coding.
    const std::vector<std::string> tags = {"\"v1\"",
                                           "\"v1-gzip\"",
                                           "W/\"v1-br\"",
                                           "\"v1-zstd\"",
                                           "\"v1-deflate\"",
                                           "\"v1-identity\"",
                                           "\"\"",
                                           "W/\"\"",
                                           "\"-gzip\"",
                                           "\"v1-gzip-identity\"",
                                           "\"2d-432a5e4a73a80\""};
    std::set<std::string> all;
    for (const std::string& tag : tags) {
        for (const Coding c :
             {Coding::kIdentity, Coding::kGzip, Coding::kDeflate, Coding::kBrotli, Coding::kZstd}) {
            const std::string altered = mc::alter_etag(tag, c, ETagMode::kAddSuffix);
            EXPECT_EQ(mc::strip_etag_suffixes(altered), tag) << tag << " " << mc::coding_token(c);
            EXPECT_EQ(mc::etag_coding(altered), c) << altered;
            EXPECT_TRUE(all.insert(altered).second) << altered << " given twice";
        }
    }
}

TEST(RewriteIfNoneMatchTest, Table) {
    const mc::CodingSet gzip_or_identity{Coding::kIdentity, Coding::kGzip};
    struct Case {
        const char* in;
        const char* out;
    };
    for (const Case& c : std::vector<Case>{
             {"\"v1-gzip\"", "\"v1\""},
             {"\"v1\"", "\"v1\""},
             {"\"v1-gzip-identity\"", "\"v1-gzip\""},
             {"\"v1-gzip-gzip\"", "\"v1-gzip\""},
             {"W/\"v1-br-identity\"", "W/\"v1-br\""},
             // a tag of a coding this request will not get is left out
             {"\"v1-br\"", ""},
             {"\"v1-br\", \"v1-gzip\"", "\"v1\""},
             {"*", "*"},
             {"\"a\" ,  W/\"b-gzip\"", "\"a\", W/\"b\""},
             {"junk", "junk"},
         }) {
        EXPECT_EQ(mc::rewrite_if_none_match(c.in, gzip_or_identity), c.out) << c.in;
    }
}

TEST(EtagInListTest, WeakComparison) {
    EXPECT_TRUE(mc::etag_in_list("\"a\", \"v1-gzip\"", "\"v1-gzip\""));
    EXPECT_TRUE(mc::etag_in_list("W/\"v1-gzip\"", "\"v1-gzip\""));
    EXPECT_TRUE(mc::etag_in_list("\"v1\"", "W/\"v1\""));
    EXPECT_TRUE(mc::etag_in_list(" * ", "\"x\""));
    EXPECT_FALSE(mc::etag_in_list("\"v1\"", "\"v1-gzip\""));
    EXPECT_FALSE(mc::etag_in_list("", "\"v1\""));
    EXPECT_FALSE(mc::etag_in_list("\"v1\"", "v1"));
}

TEST(AlterEtagTest, NoChangeRemoveAndIdentity) {
    EXPECT_EQ(mc::alter_etag("\"abc\"", Coding::kGzip, ETagMode::kNoChange), "\"abc\"");
    EXPECT_EQ(mc::alter_etag("W/\"abc\"", Coding::kBrotli, ETagMode::kNoChange), "W/\"abc\"");
    EXPECT_EQ(mc::alter_etag("\"abc\"", Coding::kGzip, ETagMode::kRemove), "");
    EXPECT_EQ(mc::alter_etag("W/\"abc\"", Coding::kZstd, ETagMode::kRemove), "");
    EXPECT_EQ(mc::alter_etag("\"abc\"", Coding::kIdentity, ETagMode::kAddSuffix), "\"abc\"");
}

TEST(AlterEtagTest, NotAnEntityTagIsLeftAlone) {
    for (const char* bad :
         {"", "\"", "abc", "abc\"", "W/abc", "W/\"", "W/abc\"", "\"abc", "W/", "w/\"abc"}) {
        EXPECT_EQ(mc::alter_etag(bad, Coding::kGzip, ETagMode::kAddSuffix), bad)
            << "etag '" << bad << "'";
    }
}

TEST(StripEtagSuffixesTest, Table) {
    struct Case {
        const char* in;
        const char* out;
    };
    for (const Case& c : std::vector<Case>{
             {"\"abc-gzip\"", "\"abc\""},
             {"\"abc-deflate\"", "\"abc\""},
             {"\"abc-br\"", "\"abc\""},
             {"\"abc-zstd\"", "\"abc\""},
             {"W/\"abc-zstd\"", "W/\"abc\""},
             {"\"a-zstd\", W/\"b-br\", \"c\"", "\"a\", W/\"b\", \"c\""},
             {"\"a,b-gzip\"", "\"a,b\""},
             // Only one suffix goes: an ETag that had one of its own keeps it.
             {"\"abc-gzip-gzip\"", "\"abc-gzip\""},
             {"\"abc-gzip-identity\"", "\"abc-gzip\""},
             {"\"abc-identity\"", "\"abc\""},
             // The empty tag: alter_etag makes `"-gzip"` of `""`, so that comes back as `""`.
             {"\"-gzip\"", "\"\""},
             {"W/\"-zstd\"", "W/\"\""},
             {"\"abc-br-zstd\"", "\"abc-br\""},
             // Nothing to strip: unchanged.
             {"*", "*"},
             {"\"abc\"", "\"abc\""},
             {"W/\"abc\"", "W/\"abc\""},
             {"\"abc-GZIP\"", "\"abc-GZIP\""},
             {"\"abc-gzipx\"", "\"abc-gzipx\""},
             {"\"abcgzip\"", "\"abcgzip\""},
             {"\"abc-lzma\"", "\"abc-lzma\""},
             {"", ""},
             {"\"abc-gzip", "\"abc-gzip"},  // unterminated
             {"\"a-br\", \"b-gzip", "\"a\", \"b-gzip"},
         }) {
        EXPECT_EQ(mc::strip_etag_suffixes(c.in), c.out) << "in '" << c.in << "'";
    }
}

TEST(StripEtagSuffixesTest, UndoesAlterForEveryCoding) {
    // A conditional request carrying the altered ETag still matches the file's own ETag.
    for (const char* etag : {"\"abc\"", "W/\"abc\"", "\"2d-432a5e4a73a80\"", "\"x-gzipped\"",
                             "\"abc-brr\"", "\"\"", "W/\"\""}) {
        for (const Coding c : mc::kAllCompressing) {
            const std::string altered = mc::alter_etag(etag, c, ETagMode::kAddSuffix);
            EXPECT_NE(altered, etag);
            EXPECT_EQ(mc::strip_etag_suffixes(altered), etag)
                << etag << " via " << mc::coding_token(c);
            // A list of validators, as If-None-Match sends.
            EXPECT_EQ(mc::strip_etag_suffixes("\"other\", " + altered),
                      std::string("\"other\", ") + etag);
        }
    }
}

}  // namespace
