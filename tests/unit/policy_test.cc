// SPDX-License-Identifier: Apache-2.0
// decide(): which responses are left alone (docs/contract.md "Left unchanged"), env opt-outs,
// MinLength, and which filters' codings may be chosen.
// MultiCompressCrossSite, MultiCompressCPUBudget and the reasons: policy_budget_test.cc.
#include "mc/policy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "mc/accept_encoding.h"
#include "mc/coding.h"
#include "mc/config.h"
#include "policy_util.h"

namespace {

using mc::Coding;
using mc::CodingSet;
using mc::Config;
using mc::Decision;
using mc::ResponseView;
using mc_test::base_view;
using mc_test::expect_identity;
using mc_test::kAllFilters;
using mc_test::kBrotliFilter;
using mc_test::kDeflateFilter;
using mc_test::kZstdFilter;
using mc_test::token;
using mc_test::verdict;

TEST(DecideTest, BaselineCompressesWithServerPreference) {
    const Decision d = verdict(base_view());
    EXPECT_EQ(token(d.coding), "zstd");
    EXPECT_TRUE(d.vary);
    EXPECT_STRNE(d.reason, "");
}

// The adapter parses Accept-Encoding once per request and hands the parse over: decide() then
// reads that, and decides as it would from the header itself.
TEST(DecideTest, ReadsAcceptEncodingParsedAlready) {
    ResponseView v = base_view();
    v.accept_encoding = "br;q=0.5, gzip";
    const mc::AcceptEncoding same = mc::AcceptEncoding::parse(v.accept_encoding);
    const Decision from_header = verdict(v);
    v.accept_parsed = &same;
    EXPECT_EQ(verdict(v).coding, from_header.coding);
    EXPECT_EQ(token(from_header.coding), "gzip");
    const mc::AcceptEncoding only_br = mc::AcceptEncoding::parse("br");
    v.accept_parsed = &only_br;  // what was parsed is what counts
    EXPECT_EQ(token(verdict(v).coding), "br");
}

TEST(DecideTest, HeadGetsTheSameDecisionAsGet) {
    ResponseView head = base_view();
    head.header_only = true;
    const Decision g = verdict(base_view());
    const Decision h = verdict(head);
    EXPECT_EQ(h.coding, g.coding);
    EXPECT_EQ(h.vary, g.vary);
}

// ---- Status codes

TEST(DecideTest, InformationalStatusIsLeftAloneWithoutVary) {
    for (const int status : {100, 101, 102, 103, 199}) {
        ResponseView v = base_view();
        v.status = status;
        SCOPED_TRACE(status);
        expect_identity(verdict(v), /*vary=*/false);
    }
}

TEST(DecideTest, NoContentAndNotModifiedAreLeftAloneButVary) {
    // A 304 carries the same Vary as the 200 would (docs/contract.md).
    for (const int status : {204, 304}) {
        ResponseView v = base_view();
        v.status = status;
        SCOPED_TRACE(status);
        expect_identity(verdict(v));
    }
}

TEST(DecideTest, PartialContentIsLeftAlone) {
    ResponseView v = base_view();
    v.status = 206;
    expect_identity(verdict(v));

    ResponseView cr = base_view();
    cr.has_content_range = true;  // e.g. a 416 with Content-Range: bytes */1234
    expect_identity(verdict(cr));

    ResponseView range = base_view();
    range.request_has_range = true;  // resumed downloads get their uncompressed 206
    expect_identity(verdict(range));
}

TEST(DecideTest, OtherStatusesAreCompressed) {
    for (const int status : {200, 201, 203, 301, 404, 410, 500, 503}) {
        ResponseView v = base_view();
        v.status = status;
        SCOPED_TRACE(status);
        EXPECT_EQ(token(verdict(v).coding), "zstd");
    }
}

// ---- Already encoded

TEST(DecideTest, AlreadyEncodedIsLeftAlone) {
    for (const char* ce : {"gzip", "GZIP", "br", "zstd", "x-gzip", "deflate", "compress",
                           "identity, gzip", "gzip, identity", "foo"}) {
        ResponseView v = base_view();
        v.content_encoding = ce;
        SCOPED_TRACE(ce);
        expect_identity(verdict(v));
    }
}

TEST(DecideTest, IdentityContentEncodingIsNotAnEncoding) {
    for (const char* ce : {"", "identity", "Identity", "identity, identity", " identity "}) {
        ResponseView v = base_view();
        v.content_encoding = ce;
        SCOPED_TRACE(ce);
        EXPECT_EQ(token(verdict(v).coding), "zstd");
    }
}

// ---- Cache-Control: no-transform

TEST(DecideTest, NoTransformHonoredByDefault) {
    ResponseView req = base_view();
    req.request_cache_control = "no-transform";
    expect_identity(verdict(req));

    ResponseView resp = base_view();
    resp.response_cache_control = "public, max-age=600, No-Transform";
    expect_identity(verdict(resp));

    Config honor;
    honor.no_transform = mc::NoTransformMode::kHonor;
    expect_identity(verdict(resp, honor));

    ResponseView other = base_view();
    other.response_cache_control = "no-cache, private=\"no-transform\"";
    EXPECT_EQ(token(verdict(other).coding), "zstd");
}

TEST(DecideTest, NoTransformIgnoredWhenConfigured) {
    Config ignore;
    ignore.no_transform = mc::NoTransformMode::kIgnore;
    ResponseView v = base_view();
    v.request_cache_control = "no-transform";
    v.response_cache_control = "no-transform";
    EXPECT_EQ(token(verdict(v, ignore).coding), "zstd");
}

// ---- Environment opt-outs

TEST(DecideTest, NoGzipDisablesEverything) {
    ResponseView v = base_view();
    v.env_no_gzip = true;
    expect_identity(verdict(v));
    v.env_force_gzip = true;  // no-gzip wins over force-gzip
    expect_identity(verdict(v));
}

TEST(DecideTest, NoMulticompressDisablesEverything) {
    ResponseView v = base_view();
    v.env_no_multicompress = true;
    expect_identity(verdict(v));
}

TEST(DecideTest, NoBrotliAndNoZstdRemoveOnlyTheirCoding) {
    ResponseView v = base_view();
    v.env_no_zstd = true;
    EXPECT_EQ(token(verdict(v).coding), "br");
    v.env_no_brotli = true;
    EXPECT_EQ(token(verdict(v).coding), "gzip");

    ResponseView only_br = base_view();
    only_br.accept_encoding = "br";
    only_br.env_no_brotli = true;
    expect_identity(verdict(only_br));

    ResponseView br_first = base_view();
    br_first.accept_encoding = "br, zstd;q=0.5";
    br_first.env_no_brotli = true;
    EXPECT_EQ(token(verdict(br_first).coding), "zstd");
}

TEST(DecideTest, GzipOnlyTextHtml) {
    for (const char* type : {"text/html", "text/html; charset=utf-8", "TEXT/HTML",
                             "Text/Html;charset=UTF-8", " text/html "}) {
        ResponseView v = base_view();
        v.env_gzip_only_text_html = true;
        v.content_type = type;
        SCOPED_TRACE(type);
        EXPECT_EQ(token(verdict(v).coding), "zstd");
    }
    for (const char* type : {"text/plain", "text/css", "application/javascript", "text/htmlx",
                             "text/html-x", "", "application/xhtml+xml"}) {
        ResponseView v = base_view();
        v.env_gzip_only_text_html = true;
        v.content_type = type;
        SCOPED_TRACE(type);
        expect_identity(verdict(v));
        // Without the variable the same type is compressed.
        v.env_gzip_only_text_html = false;
        EXPECT_EQ(token(verdict(v).coding), "zstd");
    }
}

TEST(DecideTest, ForceGzip) {
    // mod_deflate: gzip even when the client did not say it accepts it.
    ResponseView none = base_view();
    none.accept_encoding = "";
    none.accept_encoding_present = false;
    none.env_force_gzip = true;
    EXPECT_EQ(token(verdict(none).coding), "gzip");

    ResponseView refused = base_view();
    refused.accept_encoding = "gzip;q=0";
    refused.env_force_gzip = true;
    EXPECT_EQ(token(verdict(refused).coding), "gzip");

    // A negotiated coding is kept.
    ResponseView br = base_view();
    br.accept_encoding = "br";
    br.env_force_gzip = true;
    EXPECT_EQ(token(verdict(br).coding), "br");

    // Only where gzip may be chosen at all.
    expect_identity(verdict(none, Config{}, kBrotliFilter));
    EXPECT_EQ(token(verdict(none, Config{}, kDeflateFilter).coding), "gzip");

    // Exclusions still apply.
    ResponseView not_modified = none;
    not_modified.status = 304;
    expect_identity(verdict(not_modified));
    ResponseView small = none;
    small.body_length = 10;
    expect_identity(verdict(small));
}

// ---- MultiCompressMinLength

TEST(DecideTest, MinLengthBoundaries) {
    const auto with_length = [](std::int64_t n) {
        ResponseView v = base_view();
        v.body_length = n;
        return v;
    };
    expect_identity(verdict(with_length(0)));
    expect_identity(verdict(with_length(255)));
    EXPECT_EQ(token(verdict(with_length(256)).coding), "zstd");
    EXPECT_EQ(token(verdict(with_length(-1)).coding), "zstd") << "unknown length is compressed";

    Config cfg;
    cfg.min_length = 1000;
    expect_identity(verdict(with_length(999), cfg));
    EXPECT_EQ(token(verdict(with_length(1000), cfg).coding), "zstd");
    EXPECT_EQ(token(verdict(with_length(-1), cfg).coding), "zstd");

    Config zero;
    zero.min_length = 0;
    EXPECT_EQ(token(verdict(with_length(0), zero).coding), "zstd");
    EXPECT_EQ(token(verdict(with_length(1), zero).coding), "zstd");
}

// ---- Negotiation inside verdict()

TEST(DecideTest, NoAcceptEncodingIsIdentityWithVary) {
    ResponseView v = base_view();
    v.accept_encoding = "";
    v.accept_encoding_present = false;
    expect_identity(verdict(v));
}

TEST(DecideTest, NothingAcceptableIsIdentityWithVary) {
    ResponseView v = base_view();
    v.accept_encoding = "compress, identity";
    expect_identity(verdict(v));
    v.accept_encoding = "*;q=0";
    expect_identity(verdict(v));
    v.accept_encoding = ";;;,,,\xff";
    expect_identity(verdict(v));
}

TEST(DecideTest, FilterCodingsRestrictTheChoice) {
    const ResponseView v = base_view();  // accepts everything
    EXPECT_EQ(token(verdict(v, Config{}, kDeflateFilter).coding), "gzip");
    EXPECT_EQ(token(verdict(v, Config{}, kBrotliFilter).coding), "br");
    EXPECT_EQ(token(verdict(v, Config{}, kZstdFilter).coding), "zstd");
    EXPECT_EQ(token(verdict(v, Config{}, kDeflateFilter | kBrotliFilter).coding), "br");
    expect_identity(verdict(v, Config{}, CodingSet{}));

    ResponseView gzip_only = base_view();
    gzip_only.accept_encoding = "gzip";
    expect_identity(verdict(gzip_only, Config{}, kBrotliFilter | kZstdFilter));
}

TEST(DecideTest, OnlyEnabledEncodingsAreChosen) {
    Config cfg;
    ASSERT_TRUE(mc::add_encoding(cfg, "gzip").is_ok());
    ASSERT_TRUE(mc::add_encoding(cfg, "br").is_ok());
    EXPECT_EQ(token(verdict(base_view(), cfg).coding), "gzip");  // server order

    ResponseView zstd_only = base_view();
    zstd_only.accept_encoding = "zstd";
    expect_identity(verdict(zstd_only, cfg));

    // deflate is chosen only where enabled (the default list does not have it).
    ResponseView deflate_only = base_view();
    deflate_only.accept_encoding = "deflate";
    expect_identity(verdict(deflate_only));
    Config with_deflate;
    ASSERT_TRUE(mc::add_encoding(with_deflate, "deflate").is_ok());
    EXPECT_EQ(token(verdict(deflate_only, with_deflate).coding), "deflate");
    EXPECT_EQ(token(verdict(deflate_only, with_deflate, kDeflateFilter).coding), "deflate");
    expect_identity(verdict(deflate_only, with_deflate, kBrotliFilter));
}

TEST(DecideTest, ClientWeightsWin) {
    ResponseView v = base_view();
    v.accept_encoding = "zstd;q=0.5, br;q=0.8, gzip;q=0.9";
    EXPECT_EQ(token(verdict(v).coding), "gzip");
    v.accept_encoding = "identity, zstd;q=0.5";
    expect_identity(verdict(v));
}

TEST(DecideTest, ExclusionsComeBeforeNegotiation) {
    // Several exclusions at once: still identity, never an error.
    ResponseView v = base_view();
    v.status = 304;
    v.content_encoding = "gzip";
    v.request_has_range = true;
    v.env_force_gzip = true;
    expect_identity(verdict(v));
}

TEST(IsTextHtmlTest, Table) {
    EXPECT_TRUE(mc::is_text_html("text/html"));
    EXPECT_TRUE(mc::is_text_html("text/html;charset=utf-8"));
    EXPECT_TRUE(mc::is_text_html("TEXT/HTML ; charset=utf-8"));
    EXPECT_TRUE(mc::is_text_html("\ttext/html\t"));
    EXPECT_FALSE(mc::is_text_html(""));
    EXPECT_FALSE(mc::is_text_html("text/plain"));
    EXPECT_FALSE(mc::is_text_html("text/htm"));
    EXPECT_FALSE(mc::is_text_html("text/html5"));
    EXPECT_FALSE(mc::is_text_html("application/xhtml+xml"));
    EXPECT_FALSE(mc::is_text_html("text/html, text/plain"));
}

}  // namespace
