// SPDX-License-Identifier: Apache-2.0
// The counters' layout and rendering: Prometheus text format (0.0.4), mod_status ?auto lines.
#include "mc/metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

using mc::Coding;
using mc::metrics::Event;
using mc::metrics::Source;
using mc::metrics::Totals;
using mc::metrics::Why;

Totals sample() {
    Totals t{};
    t[mc::metrics::response_word(Coding::kGzip, Source::kLive)] = 7;
    t[mc::metrics::response_word(Coding::kBrotli, Source::kSidecar)] = 3;
    t[mc::metrics::response_word(Coding::kZstd, Source::kCache)] = 2;
    t[mc::metrics::response_word(Coding::kIdentity, Source::kIdentity)] = 5;
    t[mc::metrics::why_word(Why::kTooSmall)] = 4;
    t[mc::metrics::why_word(Why::kNotAcceptable)] = 1;
    t[mc::metrics::bytes_in_word(Coding::kGzip)] = 70000;
    t[mc::metrics::bytes_out_word(Coding::kGzip)] = 14000;
    t[mc::metrics::cpu_ns_word(Coding::kGzip)] = 1500000000;
    t[mc::metrics::event_word(Event::kCacheRejected)] = 9;
    t[mc::metrics::event_word(Event::kInflateTooLarge)] = 1;
    t[mc::metrics::event_word(Event::kGateWait)] = 11;
    return t;
}

TEST(MetricsLayoutTest, WordsAreDistinctAndInRange) {
    std::set<std::size_t> seen;
    auto add = [&](std::size_t w) {
        EXPECT_LT(w, mc::metrics::kWords);
        EXPECT_TRUE(seen.insert(w).second) << "word " << w << " used twice";
    };
    for (std::size_t c = 0; c < mc::kCodingCount; ++c) {
        const auto coding = static_cast<Coding>(c);
        for (std::size_t s = 0; s < mc::metrics::kSourceCount; ++s) {
            add(mc::metrics::response_word(coding, static_cast<Source>(s)));
        }
        add(mc::metrics::bytes_in_word(coding));
        add(mc::metrics::bytes_out_word(coding));
        add(mc::metrics::cpu_ns_word(coding));
        add(mc::metrics::live_bytes_in_word(coding));
        add(mc::metrics::live_bytes_out_word(coding));
    }
    for (std::size_t w = 0; w < mc::metrics::kWhyCount; ++w) add(mc::metrics::why_word(Why(w)));
    for (std::size_t e = 0; e < mc::metrics::kEventCount; ++e) {
        add(mc::metrics::event_word(Event(e)));
    }
    EXPECT_EQ(seen.size(), mc::metrics::kWords);
}

// Parses the exposition format strictly: HELP and TYPE before a family's samples, names and
// labels by the format's grammar, every family a counter named *_total.
std::map<std::string, std::string> parse_prometheus(const std::string& text) {
    static const std::regex kHelp(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*)");
    static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) counter)");
    static const std::regex kSample(
        R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*")(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*")*\})? ([0-9]+(\.[0-9]+)?))");
    std::map<std::string, std::string> samples;
    std::set<std::string> helped, typed;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, kHelp)) {
            EXPECT_TRUE(helped.insert(m[1]).second) << "HELP twice: " << line;
        } else if (std::regex_match(line, m, kType)) {
            EXPECT_TRUE(helped.count(m[1])) << "TYPE before HELP: " << line;
            EXPECT_TRUE(typed.insert(m[1]).second) << "TYPE twice: " << line;
        } else if (std::regex_match(line, m, kSample)) {
            const std::string name = m[1];
            EXPECT_TRUE(typed.count(name)) << "sample before its TYPE: " << line;
            EXPECT_TRUE(name.starts_with("multicompress_")) << line;
            EXPECT_TRUE(name.ends_with("_total")) << line;
            const std::string series = line.substr(0, line.rfind(' '));
            EXPECT_TRUE(samples.emplace(series, m[5]).second) << "series twice: " << line;
        } else {
            ADD_FAILURE() << "not exposition format: '" << line << "'";
        }
    }
    EXPECT_TRUE(text.ends_with("\n"));
    return samples;
}

TEST(MetricsRenderTest, PrometheusTextFormat) {
    const auto s = parse_prometheus(mc::metrics::render_prometheus(sample()));
    EXPECT_EQ(s.at(R"(multicompress_responses_total{encoding="gzip",source="live"})"), "7");
    EXPECT_EQ(s.at(R"(multicompress_responses_total{encoding="br",source="sidecar"})"), "3");
    EXPECT_EQ(s.at(R"(multicompress_responses_total{encoding="zstd",source="cache"})"), "2");
    EXPECT_EQ(s.at(R"(multicompress_responses_total{encoding="identity",source="identity"})"), "5");
    EXPECT_EQ(s.at(R"(multicompress_responses_total{encoding="deflate",source="live"})"), "0")
        << "zero series are present from the start";
    EXPECT_EQ(s.at(R"(multicompress_identity_responses_total{reason="too_small"})"), "4");
    EXPECT_EQ(s.at(R"(multicompress_bytes_in_total{encoding="gzip"})"), "70000");
    EXPECT_EQ(s.at(R"(multicompress_bytes_out_total{encoding="gzip"})"), "14000");
    EXPECT_EQ(s.at(R"(multicompress_compress_cpu_seconds_total{encoding="gzip"})"), "1.500000000");
    EXPECT_EQ(s.at(R"(multicompress_cache_events_total{event="rejected"})"), "9");
    EXPECT_EQ(s.at(R"(multicompress_inflate_errors_total{status="413"})"), "1");
    EXPECT_EQ(s.at("multicompress_gate_waits_total"), "11");
}

TEST(MetricsRenderTest, EmptyTotalsRenderEverySeriesAsZero) {
    const auto s = parse_prometheus(mc::metrics::render_prometheus(Totals{}));
    EXPECT_GE(s.size(), 40u);
    for (const auto& [series, value] : s)
        EXPECT_TRUE(value == "0" || value == "0.000000000") << series;
}

TEST(MetricsRenderTest, StatusAutoLines) {
    const std::string text = mc::metrics::render_status_auto(sample());
    std::istringstream in(text);
    std::string line;
    std::set<std::string> keys;
    while (std::getline(in, line)) {
        static const std::regex kLine(R"((MultiCompress[A-Za-z0-9]+): [0-9]+(\.[0-9]+)?)");
        EXPECT_TRUE(std::regex_match(line, kLine)) << line;
        EXPECT_TRUE(keys.insert(line.substr(0, line.find(':'))).second) << "twice: " << line;
    }
    EXPECT_NE(text.find("MultiCompressResponses: 17\n"), std::string::npos) << text;
    EXPECT_NE(text.find("MultiCompressResponsesLive: 7\n"), std::string::npos);
    EXPECT_NE(text.find("MultiCompressBytesOutGzip: 14000\n"), std::string::npos);
    EXPECT_NE(text.find("MultiCompressRatioGzip: 0.2000\n"), std::string::npos);
    EXPECT_NE(text.find("MultiCompressCacheEventsRejected: 9\n"), std::string::npos);
    EXPECT_NE(text.find("MultiCompressInflateErrors413: 1\n"), std::string::npos);
    EXPECT_NE(text.find("MultiCompressGateWaits: 11\n"), std::string::npos);
}

TEST(MetricsRenderTest, StatusHtmlHasTheTable) {
    const std::string html = mc::metrics::render_status_html(sample());
    EXPECT_NE(html.find("<h2>mod_multicompress</h2>"), std::string::npos);
    EXPECT_NE(html.find("<td>gzip</td><td>7</td>"), std::string::npos) << html;
    // An event family without labels is named once: "gate_waits 11".
    EXPECT_NE(html.find(", gate_waits 11,"), std::string::npos) << html;
    EXPECT_EQ(html.find("gate_waitsgate_waits"), std::string::npos) << html;
    EXPECT_NE(html.find("cache_events event=\"rejected\" 9"), std::string::npos) << html;
    EXPECT_TRUE(html.starts_with("<hr /><div id=\"mod_multicompress\"><h2>mod_multicompress</h2>"))
        << html;
    EXPECT_TRUE(html.ends_with("</p>\n</div>\n")) << "one section, closed";
}

TEST(MetricsRenderTest, TheTiersBytesAsAGauge) {
    const std::string prom = mc::metrics::render_cache_local_gauge(123456);
    EXPECT_NE(prom.find("# TYPE multicompress_cache_local_bytes gauge\n"), std::string::npos);
    EXPECT_TRUE(prom.ends_with("\nmulticompress_cache_local_bytes 123456\n")) << prom;
    EXPECT_EQ(mc::metrics::render_cache_local_auto(7), "MultiCompressCacheLocalBytes: 7\n");
    EXPECT_NE(mc::metrics::render_cache_local_html(7).find(" 7 bytes</p>"), std::string::npos);
    mc::metrics::Totals t{};
    t[mc::metrics::event_word(mc::metrics::Event::kCacheLocalHit)] = 5;
    t[mc::metrics::event_word(mc::metrics::Event::kCacheLocalEvict)] = 2;
    const std::string all = mc::metrics::render_prometheus(t);
    EXPECT_NE(all.find("multicompress_cache_events_total{event=\"local_hit\"} 5\n"),
              std::string::npos);
    EXPECT_NE(all.find("multicompress_cache_events_total{event=\"local_evict\"} 2\n"),
              std::string::npos);
    EXPECT_NE(mc::metrics::render_status_auto(t).find("MultiCompressCacheEventsLocalHit: 5\n"),
              std::string::npos);
}

TEST(MetricsRenderTest, TheDictionaryMemoryAsAGauge) {
    const std::string prom = mc::metrics::render_dictionary_gauge(4096);
    EXPECT_NE(prom.find("# TYPE multicompress_dictionary_memory_bytes gauge\n"), std::string::npos);
    EXPECT_TRUE(prom.ends_with("\nmulticompress_dictionary_memory_bytes 4096\n")) << prom;
    EXPECT_EQ(mc::metrics::render_dictionary_memory_auto(7), "MultiCompressDictionaryMemory: 7\n");
    EXPECT_NE(mc::metrics::render_dictionary_memory_html(7).find(": 7</p>"), std::string::npos);
    // The two gauges are distinct series (a scraper keeps both).
    EXPECT_EQ(prom.find("cache_local"), std::string::npos);
    EXPECT_EQ(mc::metrics::render_cache_local_gauge(1).find("dictionary"), std::string::npos);
}

}  // namespace
