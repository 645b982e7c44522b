// SPDX-License-Identifier: Apache-2.0
// The status page's picture: bytes in against bytes out per coding and source, and the share of
// CPU spent compressing, drawn from the counters as an inline SVG (no script, no external file).
#include "mc/metrics.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace mc::metrics {
namespace {

// The table's order.
constexpr std::array<Coding, 5> kDrawn = {Coding::kGzip, Coding::kDeflate, Coding::kBrotli,
                                          Coding::kZstd, Coding::kDcz};

// Geometry (px): a label column, bars up to kBarMax wide, the numbers to their right.
constexpr int kWidth = 580;
constexpr int kBarX = 64;
constexpr int kBarMax = 200;
constexpr int kTextX = kBarX + kBarMax + 12;
constexpr int kLegendH = 30;
constexpr int kRowH = 40;
constexpr int kCpuH = 34;

// Bytes in and out, compressed live / from a sidecar or the cache (no CPU), then CPU.
constexpr const char* kLiveColor = "#a9bdd3";
constexpr const char* kStoredColor = "#9fd49f";
constexpr const char* kOutColor = "#0066cc";
constexpr const char* kStoredOutColor = "#2e8b3e";
constexpr const char* kCpuColor = "#d9822b";
constexpr const char* kTrackColor = "#eeeeee";
constexpr const char* kBudgetColor = "#c0392b";

std::string fmt(const char* f, auto... args) {
    char buf[256];
    const int n = std::snprintf(buf, sizeof buf, f, args...);
    return n <= 0 ? std::string() : std::string(buf, std::min<std::size_t>(n, sizeof buf - 1));
}

// A bar's width for `v` of `max`: at least 1 px for anything above zero.
int width_of(double v, double max) {
    if (v <= 0 || max <= 0) return 0;
    return std::clamp(static_cast<int>(std::lround(v / max * kBarMax)), 1, kBarMax);
}

double clamp01(double v) {
    return v != v ? 0.0 : std::clamp(v, 0.0, 1.0);  // NaN counts as 0
}

void rect(std::string& out, int x, int y, int w, int h, const char* fill, const std::string& tip) {
    out += fmt("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">", x, y, w, h, fill);
    out += "<title>" + xml_escape(tip) + "</title></rect>\n";
}

void text(std::string& out, int x, int y, const std::string& s, const char* cls = nullptr) {
    out += fmt("<text x=\"%d\" y=\"%d\"", x, y);
    if (cls != nullptr) out += fmt(" class=\"%s\"", cls);
    out += ">" + xml_escape(s) + "</text>\n";
}

std::string percent(double share) {
    return fmt("%.1f %%", share * 100.0);
}

struct Row {
    Coding coding;
    std::uint64_t in_live, in_stored, out_live, out_stored;
    std::uint64_t live, sidecar, cache;
};

void draw_row(std::string& out, const Row& r, int y, double max) {
    const std::string tok(coding_token(r.coding));
    text(out, 0, y + 19, tok, "c");
    const int wl = width_of(static_cast<double>(r.in_live), max);
    const int ws = width_of(static_cast<double>(r.in_stored), max);
    rect(out, kBarX, y + 4, wl, 11, kLiveColor,
         fmt("%s: %" PRIu64 " bytes in, compressed live", tok.c_str(), r.in_live));
    rect(out, kBarX + wl, y + 4, ws, 11, kStoredColor,
         fmt("%s: %" PRIu64 " bytes in, from a sidecar or the cache", tok.c_str(), r.in_stored));
    const int ol = width_of(static_cast<double>(r.out_live), max);
    rect(out, kBarX, y + 17, ol, 11, kOutColor,
         fmt("%s: %" PRIu64 " bytes out, compressed live", tok.c_str(), r.out_live));
    rect(out, kBarX + ol, y + 17, width_of(static_cast<double>(r.out_stored), max), 11,
         kStoredOutColor,
         fmt("%s: %" PRIu64 " bytes out, from a sidecar or the cache", tok.c_str(), r.out_stored));
    const std::uint64_t in = r.in_live + r.in_stored;
    const std::uint64_t sent = r.out_live + r.out_stored;
    std::string line = human_bytes(in) + " in, " + human_bytes(sent) + " out";
    if (in > 0) {
        const double ratio = static_cast<double>(sent) / static_cast<double>(in);
        line += ": " + percent(1.0 - clamp01(ratio)) + " saved";
    }
    text(out, kTextX, y + 14, line);
    text(out, kTextX, y + 28,
         fmt("live %" PRIu64 ", sidecar %" PRIu64 ", cache %" PRIu64 " responses", r.live,
             r.sidecar, r.cache),
         "n");
}

// A bar from 0 to 100 %, filled to `share`, with a mark at `mark` when it is above zero.
void gauge(std::string& out, int y, double share, double mark, const std::string& label,
           const std::string& tip) {
    rect(out, kBarX, y + 4, kBarMax, 12, kTrackColor, "100 %");
    rect(out, kBarX, y + 4, width_of(clamp01(share), 1.0), 12, kCpuColor, tip);
    if (mark > 0) {
        const int x = kBarX + width_of(clamp01(mark), 1.0);
        out +=
            fmt("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                "stroke-width=\"2\">",
                x, y, x, y + 20, kBudgetColor);
        out += "<title>" + xml_escape("MultiCompressCPUBudget " + percent(clamp01(mark))) +
               "</title></line>\n";
    }
    text(out, kTextX, y + 15, label);
}

}  // namespace

std::string xml_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const auto u = static_cast<unsigned char>(ch);
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default:
                // Only printable ASCII as is: the page is ISO-8859-1, and XML forbids most
                // control characters even as references, so those become '?'.
                if (u >= 0x20 && u < 0x7f) {
                    out += ch;
                } else if (u >= 0x80) {
                    out += fmt("&#%u;", u);
                } else {
                    out += (ch == '\n' || ch == '\t') ? ch : '?';
                }
        }
    }
    return out;
}

std::string human_bytes(std::uint64_t n) {
    if (n < 1000) return fmt("%" PRIu64 " B", n);
    const char* units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
    double v = static_cast<double>(n) / 1000.0;
    std::size_t u = 0;
    while (v >= 999.95 && u + 1 < std::size(units)) {
        v /= 1000.0;
        ++u;
    }
    return fmt(v < 9.995 ? "%.2f %s" : "%.1f %s", v, units[u]);
}

std::string render_status_svg(const Totals& t, const CpuView& cpu) {
    std::vector<Row> rows;
    double max = 0;
    for (const Coding c : kDrawn) {
        const std::uint64_t in = t[bytes_in_word(c)];
        const std::uint64_t live_in = std::min(in, t[live_bytes_in_word(c)]);
        const std::uint64_t sent = t[bytes_out_word(c)];
        const std::uint64_t live_out = std::min(sent, t[live_bytes_out_word(c)]);
        Row r{c,
              live_in,
              in - live_in,
              live_out,
              sent - live_out,
              t[response_word(c, Source::kLive)],
              t[response_word(c, Source::kSidecar)],
              t[response_word(c, Source::kCache)]};
        if (in == 0 && sent == 0 && r.live + r.sidecar + r.cache == 0) continue;
        max = std::max({max, static_cast<double>(in), static_cast<double>(sent)});
        rows.push_back(r);
    }
    const int rows_h = rows.empty() ? 24 : static_cast<int>(rows.size()) * kRowH;
    const int height = kLegendH + rows_h + 22 + 2 * kCpuH;
    std::string out;
    out.reserve(4096);
    out += fmt(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"mc-picture\" width=\"%d\" "
        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"mc-picture-title\">\n",
        kWidth, height, kWidth, height);
    out += "<title id=\"mc-picture-title\">" +
           xml_escape(
               "mod_multicompress: bytes in & out per coding and source, CPU spent "
               "compressing") +
           "</title>\n";
    out +=
        "<style>text{font:12px sans-serif;fill:#222}text.c{font-weight:bold}"
        "text.n,text.h{fill:#555}text.h{font-weight:bold}</style>\n";
    // Legend.
    int x = 0;
    for (const auto& [color, label] : {std::pair{kLiveColor, "bytes in, live"},
                                       std::pair{kStoredColor, "bytes in, sidecar/cache"},
                                       std::pair{kOutColor, "bytes out, live"},
                                       std::pair{kStoredOutColor, "bytes out, sidecar/cache"}}) {
        rect(out, x, 6, 12, 12, color, label);
        text(out, x + 16, 16, label, "n");
        x += 16 + static_cast<int>(std::char_traits<char>::length(label)) * 6 + 18;
    }
    int y = kLegendH;
    if (rows.empty()) text(out, 0, y + 14, "No compressed responses yet.", "n");
    for (const Row& r : rows) {
        draw_row(out, r, y, max);
        y += kRowH;
    }
    if (rows.empty()) y += 24;
    // CPU: since start against the server's CPU, and now against the machine and the budget.
    std::uint64_t cpu_ns = 0;
    for (const Coding c : kDrawn) cpu_ns += t[cpu_ns_word(c)];
    const double cpu_s = static_cast<double>(cpu_ns) / 1e9;
    text(out, 0, y + 16, "CPU", "h");
    y += 22;
    if (cpu.server_cpu_seconds > 0) {
        const double share = cpu_s / cpu.server_cpu_seconds;
        gauge(out, y, share, 0,
              fmt("compressing: %.2f s of %.2f s CPU (", cpu_s, cpu.server_cpu_seconds) +
                  percent(clamp01(share)) + ")",
              fmt("%.3f s of %.3f s", cpu_s, cpu.server_cpu_seconds));
    } else {
        gauge(out, y, 0, 0, fmt("compressing: %.2f s CPU since start", cpu_s),
              "the server's CPU time is unknown");
    }
    y += kCpuH;
    std::string now = "now: " + percent(clamp01(cpu.share_now)) + " of the machine";
    now += cpu.budget > 0 ? " (budget " + percent(clamp01(cpu.budget)) + ")" : " (no budget)";
    gauge(out, y, cpu.share_now, cpu.budget, now,
          "share of the machine's CPUs, last quarter second");
    out += "</svg>\n";
    return out;
}

}  // namespace mc::metrics
