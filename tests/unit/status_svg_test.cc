// SPDX-License-Identifier: Apache-2.0
// The status page's picture (status_svg.cc) read back with an XML parser (expat): well-formed,
// self-contained, the counters' values in it, text escaped, zero counters drawn; and the
// ?auto and Prometheus texts it sits beside unchanged, byte for byte.
#include <expat.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mc/metrics.h"

namespace {

using mc::Coding;
using mc::metrics::CpuView;
using mc::metrics::Event;
using mc::metrics::Source;
using mc::metrics::Totals;
using mc::metrics::Why;

struct Element {
    std::string name;
    std::map<std::string, std::string> attrs;
    std::string text;  ///< its own character data, decoded, and that of its children
};

struct Document {
    bool ok = false;
    std::string error;
    std::vector<Element> elements;  ///< in document order
    std::string all_text;           ///< the text of every <text> element, one per line
};

// Parses `xml` with expat (a well-kept XML parser; apache2-dev's APR-util needs it anyway).
Document parse(const std::string& xml) {
    struct State {
        Document doc;
        std::vector<std::size_t> open;
    } st;
    XML_Parser p = XML_ParserCreate("US-ASCII");
    XML_SetUserData(p, &st);
    XML_SetElementHandler(
        p,
        [](void* u, const XML_Char* name, const XML_Char** atts) {
            auto* s = static_cast<State*>(u);
            Element e{name, {}, {}};
            for (int i = 0; atts[i] != nullptr; i += 2) e.attrs[atts[i]] = atts[i + 1];
            s->doc.elements.push_back(e);
            s->open.push_back(s->doc.elements.size() - 1);
        },
        [](void* u, const XML_Char*) {
            auto* s = static_cast<State*>(u);
            const Element& e = s->doc.elements[s->open.back()];
            if (e.name == "text") s->doc.all_text += e.text + "\n";
            s->open.pop_back();
        });
    XML_SetCharacterDataHandler(p, [](void* u, const XML_Char* data, int len) {
        auto* s = static_cast<State*>(u);
        for (const std::size_t i : s->open) s->doc.elements[i].text.append(data, len);
    });
    st.doc.ok = XML_Parse(p, xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_OK;
    if (!st.doc.ok) {
        st.doc.error = std::string(XML_ErrorString(XML_GetErrorCode(p))) + " at line " +
                       std::to_string(XML_GetCurrentLineNumber(p));
    }
    XML_ParserFree(p);
    return st.doc;
}

Totals sample() {
    Totals t{};
    t[mc::metrics::response_word(Coding::kGzip, Source::kLive)] = 7;
    t[mc::metrics::response_word(Coding::kBrotli, Source::kSidecar)] = 3;
    t[mc::metrics::response_word(Coding::kBrotli, Source::kCache)] = 2;
    t[mc::metrics::response_word(Coding::kIdentity, Source::kIdentity)] = 5;
    t[mc::metrics::bytes_in_word(Coding::kGzip)] = 70000;
    t[mc::metrics::live_bytes_in_word(Coding::kGzip)] = 70000;
    t[mc::metrics::bytes_out_word(Coding::kGzip)] = 14000;
    t[mc::metrics::live_bytes_out_word(Coding::kGzip)] = 14000;
    t[mc::metrics::cpu_ns_word(Coding::kGzip)] = 1500000000;
    t[mc::metrics::bytes_in_word(Coding::kBrotli)] = 35000;
    t[mc::metrics::bytes_out_word(Coding::kBrotli)] = 5000;
    return t;
}

// The one element whose <title> child says `tip` (rects and lines carry their exact values).
const Element* by_title(const Document& d, const std::string& tip) {
    for (std::size_t i = 0; i + 1 < d.elements.size(); ++i) {
        if (d.elements[i + 1].name == "title" && d.elements[i + 1].text == tip) {
            return &d.elements[i];
        }
    }
    return nullptr;
}

TEST(StatusSvgTest, WellFormedAndSelfContained) {
    const std::string svg = mc::metrics::render_status_svg(sample(), CpuView{0.031, 0.25, 12.0});
    const Document d = parse(svg);
    ASSERT_TRUE(d.ok) << d.error << "\n" << svg;
    ASSERT_FALSE(d.elements.empty());
    EXPECT_EQ(d.elements[0].name, "svg");
    EXPECT_EQ(d.elements[0].attrs.at("xmlns"), "http://www.w3.org/2000/svg");
    for (const Element& e : d.elements) {
        EXPECT_NE(e.name, "script");
        EXPECT_NE(e.name, "image");
        EXPECT_NE(e.name, "foreignObject");
        for (const auto& [k, v] : e.attrs) {
            EXPECT_FALSE(k == "href" || k == "xlink:href" || k == "src" || k.starts_with("on"))
                << e.name << " " << k;
            EXPECT_EQ(v.find("url("), std::string::npos) << v;
        }
    }
    for (const char ch : svg) EXPECT_TRUE(ch == '\n' || (ch >= 0x20 && ch < 0x7f)) << int(ch);
}

TEST(StatusSvgTest, ShowsBytesPerCodingAndSourceAndCpu) {
    const Document d = parse(mc::metrics::render_status_svg(sample(), CpuView{0.031, 0.25, 12.0}));
    ASSERT_TRUE(d.ok) << d.error;
    const std::string& text = d.all_text;
    EXPECT_NE(text.find("70.0 kB in, 14.0 kB out: 80.0 % saved"), std::string::npos) << text;
    EXPECT_NE(text.find("live 7, sidecar 0, cache 0 responses"), std::string::npos) << text;
    EXPECT_NE(text.find("35.0 kB in, 5.00 kB out: 85.7 % saved"), std::string::npos) << text;
    EXPECT_NE(text.find("live 0, sidecar 3, cache 2 responses"), std::string::npos) << text;
    EXPECT_EQ(text.find("zstd"), std::string::npos) << "a coding with no responses is not drawn";
    EXPECT_NE(text.find("compressing: 1.50 s of 12.00 s CPU (12.5 %)"), std::string::npos) << text;
    EXPECT_NE(text.find("now: 3.1 % of the machine (budget 25.0 %)"), std::string::npos) << text;
    // Bars to one scale (the largest byte count, 70 000, is 200 px); br's bytes in all came
    // from a sidecar or the cache.
    const auto width = [&](const std::string& tip) {
        const Element* e = by_title(d, tip);
        return e == nullptr ? std::string("(none)") : e->attrs.at("width");
    };
    EXPECT_EQ(width("gzip: 70000 bytes in, compressed live"), "200");
    EXPECT_EQ(width("gzip: 14000 bytes out, compressed live"), "40");
    EXPECT_EQ(width("gzip: 0 bytes out, from a sidecar or the cache"), "0");
    EXPECT_EQ(width("br: 0 bytes out, compressed live"), "0");
    EXPECT_EQ(width("br: 5000 bytes out, from a sidecar or the cache"), "14");
    EXPECT_EQ(width("br: 0 bytes in, compressed live"), "0");
    EXPECT_EQ(width("br: 35000 bytes in, from a sidecar or the cache"), "100");
    EXPECT_EQ(width("1.500 s of 12.000 s"), "25");
    const Element* budget = by_title(d, "MultiCompressCPUBudget 25.0 %");
    ASSERT_NE(budget, nullptr);
    EXPECT_EQ(budget->name, "line");
    EXPECT_EQ(budget->attrs.at("x1"), std::to_string(64 + 50));
}

TEST(StatusSvgTest, ZeroCounters) {
    const std::string svg = mc::metrics::render_status_svg(Totals{});
    const Document d = parse(svg);
    ASSERT_TRUE(d.ok) << d.error << "\n" << svg;
    EXPECT_NE(d.all_text.find("No compressed responses yet."), std::string::npos);
    EXPECT_NE(d.all_text.find("compressing: 0.00 s CPU since start"), std::string::npos);
    EXPECT_NE(d.all_text.find("now: 0.0 % of the machine (no budget)"), std::string::npos);
    for (const Element& e : d.elements) {
        EXPECT_NE(e.name, "line") << "no budget mark without a budget";
        if (e.name == "rect") {
            EXPECT_GE(std::stoi(e.attrs.at("width")), 0);
        }
    }
    // Over 100 % and NaN are drawn as full and empty.
    const Document odd = parse(mc::metrics::render_status_svg(sample(), CpuView{7.0, 0.0, 0.5}));
    ASSERT_TRUE(odd.ok) << odd.error;
    EXPECT_NE(odd.all_text.find("(100.0 %)"), std::string::npos) << odd.all_text;
    EXPECT_TRUE(parse(mc::metrics::render_status_svg(sample(), CpuView{0.0 / 0.0, 0.5, 0})).ok);
}

TEST(StatusSvgTest, Escaping) {
    EXPECT_EQ(mc::metrics::xml_escape("a<b & \"c\" 'd' > e"),
              "a&lt;b &amp; &quot;c&quot; &#39;d&#39; &gt; e");
    EXPECT_EQ(mc::metrics::xml_escape("caf\xe9\x01"), "caf&#233;?");
    const std::string svg = mc::metrics::render_status_svg(sample());
    EXPECT_NE(svg.find("bytes in &amp; out"), std::string::npos);
    const Document d = parse(svg);
    ASSERT_TRUE(d.ok) << d.error;
    bool title = false;
    for (const Element& e : d.elements)
        title = title || (e.name == "title" && e.text.find("bytes in & out") != std::string::npos);
    EXPECT_TRUE(title) << "the parser reads the escaped title back";
    EXPECT_EQ(mc::metrics::human_bytes(999), "999 B");
    EXPECT_EQ(mc::metrics::human_bytes(1000), "1.00 kB");
    EXPECT_EQ(mc::metrics::human_bytes(999949), "999.9 kB");
    EXPECT_EQ(mc::metrics::human_bytes(999950), "1.00 MB");
    EXPECT_EQ(mc::metrics::human_bytes(~std::uint64_t{0}), "18.4 EB");
}

TEST(StatusSvgTest, InTheStatusSectionBesideTheTable) {
    const std::string html = mc::metrics::render_status_html(sample(), CpuView{0.5, 0.25, 3.0});
    const auto table = html.find("</table>");
    const auto svg = html.find("<svg ");
    const auto unchanged = html.find("<p>Sent unchanged: ");
    ASSERT_NE(svg, std::string::npos) << html;
    EXPECT_LT(table, svg);
    EXPECT_LT(html.find("</svg>"), unchanged);
    EXPECT_NE(html.find("(budget 25.0 %)"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
}

std::string testdata(const char* name) {
    std::ifstream in(std::string(MC_UNIT_TESTDATA) + "/" + name, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The counters of metrics_test.cc's sample, rendered by the module before the picture existed.
Totals metrics_sample() {
    Totals t{};
    t[mc::metrics::response_word(Coding::kGzip, Source::kLive)] = 7;
    t[mc::metrics::response_word(Coding::kBrotli, Source::kSidecar)] = 3;
    t[mc::metrics::response_word(Coding::kZstd, Source::kCache)] = 2;
    t[mc::metrics::response_word(Coding::kIdentity, Source::kIdentity)] = 5;
    t[mc::metrics::why_word(Why::kTooSmall)] = 4;
    t[mc::metrics::why_word(Why::kNotAcceptable)] = 1;
    t[mc::metrics::bytes_in_word(Coding::kGzip)] = 70000;
    t[mc::metrics::bytes_out_word(Coding::kGzip)] = 14000;
    t[mc::metrics::live_bytes_out_word(Coding::kGzip)] = 14000;
    t[mc::metrics::cpu_ns_word(Coding::kGzip)] = 1500000000;
    t[mc::metrics::event_word(Event::kCacheRejected)] = 9;
    t[mc::metrics::event_word(Event::kInflateTooLarge)] = 1;
    t[mc::metrics::event_word(Event::kGateWait)] = 11;
    return t;
}

// MC_UPDATE_GOLDEN=1 writes what is rendered now as the expected texts (after adding counters,
// whose new lines are the only change to review in the diff).
void maybe_update(const char* name, const std::string& text) {
    if (std::getenv("MC_UPDATE_GOLDEN") == nullptr) return;
    std::ofstream(std::string(MC_UNIT_TESTDATA) + "/" + name, std::ios::binary) << text;
}

TEST(StatusSvgTest, AutoAndPrometheusTextsUnchanged) {
    maybe_update("metrics_sample.prom", mc::metrics::render_prometheus(metrics_sample()) +
                                            mc::metrics::render_budget_gauges(0.25, 2));
    maybe_update("metrics_sample.auto", mc::metrics::render_status_auto(metrics_sample()));
    const std::string prom = testdata("metrics_sample.prom");
    ASSERT_GT(prom.size(), 1000u);
    EXPECT_EQ(mc::metrics::render_prometheus(metrics_sample()) +
                  mc::metrics::render_budget_gauges(0.25, 2),
              prom);
    const std::string autotext = testdata("metrics_sample.auto");
    ASSERT_GT(autotext.size(), 500u);
    EXPECT_EQ(mc::metrics::render_status_auto(metrics_sample()), autotext);
}

}  // namespace
