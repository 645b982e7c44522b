// SPDX-License-Identifier: Apache-2.0
// Site dictionaries (mc/dictionary_train.h): raw content within the size asked for, the same
// bytes for the same input, and pages the training did not see come out smaller with it.
#include "mc/dictionary_train.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decode.h"
#include "mc/dictionary.h"
#include "mc/encoder.h"
#include "mc/sink.h"

namespace {

using mc_test::as_bytes;

// Pages of one site: the same head, navigation and footer around text from a small vocabulary.
std::vector<std::string> site_pages(int n, std::uint64_t seed) {
    static const char* const kWords[] = {
        "server",  "module",   "request",   "response", "header",   "filter", "compression",
        "client",  "cache",    "directive", "virtual",  "host",     "config", "dictionary",
        "browser", "encoding", "content",   "length",   "transfer", "status", "version"};
    std::uint64_t x = seed;
    auto next = [&x] {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::size_t>(x >> 33);
    };
    std::vector<std::string> pages;
    for (int i = 0; i < n; ++i) {
        std::string p =
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Page " +
            std::to_string(i) +
            "</title><link rel=\"stylesheet\" href=\"/style/css/manual.css\"></head>\n<body>"
            "<div id=\"page-header\"><p class=\"menu\"><a href=\"/mod/\">Modules</a> | <a "
            "href=\"/mod/directives.html\">Directives</a> | <a href=\"/faq/\">FAQ</a> | <a "
            "href=\"/glossary.html\">Glossary</a> | <a href=\"/sitemap.html\">Sitemap</a></p>"
            "</div>\n<div id=\"page-content\">";
        const std::size_t paragraphs = 3 + next() % 8;
        for (std::size_t k = 0; k < paragraphs; ++k) {
            p += "<p>";
            for (std::size_t w = 0; w < 20 + next() % 40; ++w) {
                p += kWords[next() % std::size(kWords)];
                p += ' ';
            }
            p += "</p>\n";
        }
        p += "</div><div id=\"footer\"><p class=\"apache\">Copyright 2025 The Apache Software "
             "Foundation.<br />Licensed under the <a href=\"http://www.apache.org/licenses/"
             "LICENSE-2.0\">Apache License, Version 2.0</a>.</p></div></body></html>\n";
        pages.push_back(std::move(p));
    }
    return pages;
}

std::vector<std::string_view> views(const std::vector<std::string>& v) {
    return {v.begin(), v.end()};
}

std::size_t zstd_size(const std::string& page, const mc::PreparedDictionary* dict) {
    mc::EncoderParams p;
    p.coding = dict != nullptr ? mc::Coding::kDcz : mc::Coding::kZstd;
    p.level = 3;
    p.dictionary = dict;
    auto enc = mc::make_encoder(mc::tune(p));
    EXPECT_TRUE(enc.is_ok());
    mc::StringSink out;
    EXPECT_TRUE(enc.value()->write(as_bytes(page), mc::Flush::kFinish, out).is_ok());
    return out.data().size();
}

TEST(DictionaryTrain, RawContentThatPaysOffOnUnseenPages) {
    const std::vector<std::string> train = site_pages(400, 1);
    const std::vector<std::string> held_back = site_pages(50, 2);
    auto trained = mc::train_raw_dictionary(views(train), 8192);
    ASSERT_TRUE(trained.is_ok()) << trained.status().reason();
    const std::string& dict = trained.value();
    EXPECT_GT(dict.size(), 4096u);
    EXPECT_LE(dict.size(), 8192u);
    // Not zstd's dictionary format (magic 0xEC30A437, little-endian), which browsers refuse.
    EXPECT_NE(dict.substr(0, 4), std::string("\x37\xa4\x30\xec", 4));
    // What every page shares is in it.
    EXPECT_NE(dict.find("Licensed under the"), std::string::npos);

    // The same input gives the same bytes.
    auto again = mc::train_raw_dictionary(views(train), 8192);
    ASSERT_TRUE(again.is_ok());
    EXPECT_EQ(again.value(), dict);

    auto bytes = std::make_shared<mc::DictionaryBytes>();
    bytes->bytes = dict;
    bytes->hash = mc::sha256(as_bytes(dict));
    auto prepared = mc::PreparedDictionary::make(bytes, 3);
    ASSERT_TRUE(prepared.is_ok());
    std::size_t plain = 0, with = 0;
    for (const std::string& page : held_back) {
        plain += zstd_size(page, nullptr);
        with += zstd_size(page, prepared.value().get());  // 40 bytes of header each included
    }
    EXPECT_LT(with * 10, plain * 8) << "dcz-3 " << with << " against zstd-3 " << plain;
}

TEST(DictionaryTrain, RefusesWhatItCannotTrainOn) {
    const std::vector<std::string> train = site_pages(400, 1);
    EXPECT_FALSE(mc::train_raw_dictionary(views(train), 100).is_ok());  // too small a size
    EXPECT_FALSE(mc::train_raw_dictionary(views(train), mc::kMaxTrainedDictionary + 1).is_ok());
    EXPECT_FALSE(mc::train_raw_dictionary({}, 8192).is_ok());
    const std::vector<std::string> few = site_pages(2, 1);
    const auto r = mc::train_raw_dictionary(views(few), 8192);
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(std::string(r.status().reason()).find("too little"), std::string::npos);
}

}  // namespace
