// SPDX-License-Identifier: Apache-2.0
// Content-hashed file names: real names bundlers write are recognised, real names without a hash
// are not, and the match pattern covers the family and passes the pattern check.
#include "mc/hashed_name.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "mc/dictionary.h"

namespace {

struct Hashed {
    std::string_view path;
    std::string_view stem;
    char separator;
    std::string_view hash;
    std::string_view ext;
    std::string_view pattern;
};

// Names as the bundlers write them (their default templates), and variants seen in the field.
constexpr Hashed kHashed[] = {
    // webpack [name].[contenthash].js, hex (20 by default, often [contenthash:8])
    {"/static/main.3f9a1c2b4d5e6f708192.js", "main", '.', "3f9a1c2b4d5e6f708192", "js",
     "/static/main.*.js"},
    {"/js/app.8e0a4f1b.js", "app", '.', "8e0a4f1b", "js", "/js/app.*.js"},
    {"/js/vendors~main.a1b2c3d4.js", "vendors~main", '.', "a1b2c3d4", "js",
     "/js/vendors~main.*.js"},
    {"/js/app.min.8e0a4f1b.js", "app.min", '.', "8e0a4f1b", "js", "/js/app.min.*.js"},
    // Create React App: main.HASH.chunk.js, numbered chunks, source maps, media
    {"/static/js/main.3f9a1c2b.chunk.js", "main", '.', "3f9a1c2b", "chunk.js",
     "/static/js/main.*.chunk.js"},
    {"/static/css/2.5b7c1e9d.chunk.css", "2", '.', "5b7c1e9d", "chunk.css",
     "/static/css/2.*.chunk.css"},
    {"/static/js/main.3f9a1c2b.js.map", "main", '.', "3f9a1c2b", "js.map",
     "/static/js/main.*.js.map"},
    {"/static/media/logo.5d5d9eef.svg", "logo", '.', "5d5d9eef", "svg", "/static/media/logo.*.svg"},
    // Angular (webpack builds): main-es2015.HASH.js
    {"/main-es2015.1a2b3c4d5e6f7a8b9c0d.js", "main-es2015", '.', "1a2b3c4d5e6f7a8b9c0d", "js",
     "/main-es2015.*.js"},
    // Parcel: index.1a2b3c4d.js
    {"/index.1a2b3c4d.js", "index", '.', "1a2b3c4d", "js", "/index.*.js"},
    {"/styles.a1b2c3d4.css", "styles", '.', "a1b2c3d4", "css", "/styles.*.css"},
    // Vite / Rollup [name]-[hash].js: 8 characters of base64url, '-' and '_' included
    {"/assets/index-B_1x-9Zq.js", "index", '-', "B_1x-9Zq", "js", "/assets/index-*.js"},
    {"/assets/index-DAhS4SyF.css", "index", '-', "DAhS4SyF", "css", "/assets/index-*.css"},
    {"/assets/vendor-DlQw8e3H.js", "vendor", '-', "DlQw8e3H", "js", "/assets/vendor-*.js"},
    {"/assets/react-dom-CwQ6TZvk.js", "react-dom", '-', "CwQ6TZvk", "js", "/assets/react-dom-*.js"},
    {"/assets/index--x1Yz9Ab.js", "index", '-', "-x1Yz9Ab", "js", "/assets/index-*.js"},
    {"/assets/index-BxQzkWpL.js", "index", '-', "BxQzkWpL", "js", "/assets/index-*.js"},
    {"/assets/index-4f2c8b1a.js", "index", '-', "4f2c8b1a", "js", "/assets/index-*.js"},
    {"/assets/app-Cm_2kP9x.min.js", "app", '-', "Cm_2kP9x", "min.js", "/assets/app-*.min.js"},
    {"/assets/types-Ab3dE5fG.d.ts", "types", '-', "Ab3dE5fG", "d.ts", "/assets/types-*.d.ts"},
    // esbuild chunk-[hash].js, Angular 17+ main-[hash].js: 8 characters of base32, uppercase
    {"/chunk-ABCD2345.js", "chunk", '-', "ABCD2345", "js", "/chunk-*.js"},
    {"/browser/main-5HQ3ZWBN.js", "main", '-', "5HQ3ZWBN", "js", "/browser/main-*.js"},
    {"/browser/polyfills-FFHMD2TL.js", "polyfills", '-', "FFHMD2TL", "js",
     "/browser/polyfills-*.js"},
    {"/chunk-QWERTY23.js", "chunk", '-', "QWERTY23", "js", "/chunk-*.js"},
    // a stem with dots, and a bare file name
    {"/lib/jquery.ui-3f9a1c2b.js", "jquery.ui", '-', "3f9a1c2b", "js", "/lib/jquery.ui-*.js"},
    {"app.8e0a4f1b.js", "app", '.', "8e0a4f1b", "js", "app.*.js"},
};

// Real names of files that carry no content hash: libraries' own builds, fonts, docs, app files.
constexpr std::string_view kPlain[] = {
    "/js/jquery.min.js",
    "/js/jquery-3.7.1.min.js",
    "/js/jquery-3.7.1.js",
    "/js/jquery-ui-1.13.2.min.js",
    "/js/jquery.dataTables.min.js",
    "/js/react-dom.development.js",
    "/js/react-dom.production.min.js",
    "/js/bootstrap.bundle.min.js",
    "/css/bootstrap.min.css",
    "/css/bootstrap.min.css.map",
    "/css/font-awesome.min.css",
    "/css/materialdesignicons.min.css",
    "/css/prism-okaidia.min.css",
    "/css/normalize-8.0.1.css",
    "/README.markdown",
    "/main.production.js",
    "/js/moment-with-locales.min.js",
    "/js/lodash.4.17.21.min.js",
    "/js/vue.runtime.esm-bundler.js",
    "/js/d3.v7.min.js",
    "/js/html5shiv.min.js",
    "/js/es5-shim.min.js",
    "/js/socket.io.min.js",
    "/js/three.module.min.js",
    "/js/pdf.worker.min.mjs",
    "/js/chart.umd.js",
    "/js/i18next.min.js",
    "/js/polyfill.es2015.js",
    "/js/crypto-js-4.2.0.min.js",
    "/js/require-2.3.6.js",
    "/js/swagger-ui-bundle.js",
    "/js/ckeditor5-build-classic.js",
    "/js/web-vitals.attribution.iife.js",
    "/js/ie11CustomProperties.js",
    "/js/react-DatePicker.js",
    "/js/dom.getElementById.js",
    "/js/jquery.jQueryUI.js",
    "/fonts/roboto-v30-latin-regular.woff2",
    "/fonts/roboto-v30-latin-700italic.ttf",
    "/fonts/open-sans-v34-latin-regular.svg",
    "/img/apple-touch-icon-180x180.png",
    "/img/photo-20240101.svg",
    "/img/report.20240101.html",
    "/service-worker.js",
    "/manifest.webmanifest",
    "/tailwind.config.js",
    "/index.html",
    "/404.html",
    "/favicon.ico",
    "/sitemap.xml",
    "/.well-known/security.txt",
    "/assets/",
    "",
    "/",
    "/.3f9a1c2b.js",         // a dot file: no stem
    "/app.3f9a1c2b",         // no extension
    "/app.3f9a1c2b.",        // an empty extension
    "/app.3f9a1c2b.123",     // an extension without a letter
    "/app..3f9a1c2b.js",     // the stem ends in a separator
    "/app.3f9a1c2b*.js",     // a wildcard in the name
    "/a:b/app.3f9a1c2b.js",  // a character a pattern cannot carry
    "/app.3f9a 1c2b.js",
    "/app-abc-defgh123.js",  // a '-' only in a hash of exactly 8
};

TEST(HashedName, RecognisesBundlerNames) {
    for (const Hashed& want : kHashed) {
        SCOPED_TRACE(std::string(want.path));
        const std::optional<mc::HashedName> h = mc::parse_hashed_name(want.path);
        ASSERT_TRUE(h.has_value());
        EXPECT_EQ(h->stem, want.stem);
        EXPECT_EQ(h->separator, want.separator);
        EXPECT_EQ(h->hash, want.hash);
        EXPECT_EQ(h->id(), want.hash);
        EXPECT_EQ(h->ext, want.ext);
        EXPECT_EQ(h->match_pattern(), want.pattern);
        // The parts are the path, in order.
        EXPECT_EQ(std::string(h->dir) + std::string(h->stem) + h->separator + std::string(h->hash) +
                      "." + std::string(h->ext),
                  want.path);
        if (want.path.front() == '/') {
            EXPECT_TRUE(mc::check_dictionary_pattern(want.pattern).is_ok());
            EXPECT_TRUE(mc::pattern_matches(want.pattern, want.path));
        }
    }
}

TEST(HashedName, LeavesNamesWithoutAHashAlone) {
    for (const std::string_view path : kPlain) {
        EXPECT_FALSE(mc::parse_hashed_name(path).has_value()) << path;
    }
}

TEST(HashedName, FamiliesAndTheirPatterns) {
    const auto a = mc::parse_hashed_name("/assets/index-B_1x-9Zq.js");
    const auto b = mc::parse_hashed_name("/assets/index-DlQw8e3H.js");
    const auto c = mc::parse_hashed_name("/assets/index-DlQw8e3H.css");
    const auto d = mc::parse_hashed_name("/other/index-DlQw8e3H.js");
    const auto e = mc::parse_hashed_name("/assets/index.3f9a1c2b.js");
    ASSERT_TRUE(a && b && c && d && e);
    EXPECT_TRUE(a->same_family(*b));
    EXPECT_FALSE(a->same_family(*c));  // another extension
    EXPECT_FALSE(a->same_family(*d));  // another directory
    EXPECT_FALSE(a->same_family(*e));  // another separator
    EXPECT_TRUE(mc::pattern_matches(a->match_pattern(), "/assets/index-DlQw8e3H.js"));
    EXPECT_FALSE(mc::pattern_matches(a->match_pattern(), "/assets/index-DlQw8e3H.css"));
}

TEST(HashedName, HashAlphabets) {
    EXPECT_TRUE(mc::looks_like_content_hash("3f9a1c2b"));
    EXPECT_TRUE(mc::looks_like_content_hash("3F9A1C2B"));
    EXPECT_TRUE(mc::looks_like_content_hash("3f9A1c2b0"));  // mixed case: base64url, random
    EXPECT_FALSE(mc::looks_like_content_hash("3f9a1c2"));   // 7 characters
    EXPECT_FALSE(mc::looks_like_content_hash(std::string(65, 'a') + "1"));
    EXPECT_TRUE(mc::looks_like_content_hash(
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));  // a whole SHA-256
    EXPECT_FALSE(mc::looks_like_content_hash("deadbeef"));    // hex without a digit
    EXPECT_FALSE(mc::looks_like_content_hash("20240101"));    // a number
    EXPECT_FALSE(mc::looks_like_content_hash("ABCDEFGH"));    // base32 without a digit
    EXPECT_FALSE(mc::looks_like_content_hash("markdown"));    // a word
    EXPECT_FALSE(mc::looks_like_content_hash("dataTables"));  // camelCase
    EXPECT_FALSE(mc::looks_like_content_hash("700italic"));   // a numbered word
    EXPECT_FALSE(mc::looks_like_content_hash("v30-latin"));   // words joined by '-'
    EXPECT_FALSE(mc::looks_like_content_hash("abc.1234"));    // outside the alphabet
    EXPECT_FALSE(mc::looks_like_content_hash("abcd/1234"));
}

// How many hashes of each bundler's alphabet and length are recognised: random ones from a fixed
// seed, so the counts are exact. The rules trade these for no false positives above.
double recognised(std::string_view alphabet, std::size_t length, char separator) {
    std::uint64_t x = 20240505;
    int hits = 0;
    constexpr int kTrials = 20000;
    for (int t = 0; t < kTrials; ++t) {
        std::string hash;
        for (std::size_t i = 0; i < length; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            hash += alphabet[(x >> 33) % alphabet.size()];
        }
        const std::string path = std::string("/a/app") + separator + hash + ".js";
        const auto h = mc::parse_hashed_name(path);
        if (h && h->hash == hash && h->stem == "app") ++hits;
    }
    return static_cast<double>(hits) / kTrials;
}

TEST(HashedName, MostBundlerHashesAreRecognised) {
    constexpr std::string_view kHex = "0123456789abcdef";
    constexpr std::string_view kBase32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    constexpr std::string_view kBase64Url =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    EXPECT_GE(recognised(kHex, 20, '.'), 0.999);  // webpack's default
    EXPECT_GE(recognised(kHex, 8, '.'), 0.97);    // [contenthash:8], Parcel
    EXPECT_GE(recognised(kHex, 8, '-'), 0.97);
    EXPECT_GE(recognised(kBase32, 8, '-'), 0.80);     // esbuild
    EXPECT_GE(recognised(kBase64Url, 8, '-'), 0.85);  // Rollup, Vite
}

}  // namespace
