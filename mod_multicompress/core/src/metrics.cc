// SPDX-License-Identifier: Apache-2.0
// Rendering the counters: Prometheus text format, mod_status's ?auto lines and its HTML section
// (the table; the picture beside it is status_svg.cc).
#include "mc/metrics.h"

#include <cinttypes>
#include <cstdio>
#include <string_view>

namespace mc::metrics {
namespace {

constexpr std::array<Coding, 5> kCompressing = {Coding::kGzip, Coding::kDeflate, Coding::kBrotli,
                                                Coding::kZstd, Coding::kDcz};
constexpr std::array<Source, 3> kCompressedSources = {Source::kLive, Source::kSidecar,
                                                      Source::kCache};

struct EventLabel {
    Event event;
    const char* family;  ///< Prometheus family
    const char* label;   ///< its label pair, or "" for a family of its own
};
constexpr EventLabel kEventLabels[] = {
    {Event::kCacheHit, "cache_events", "event=\"hit\""},
    {Event::kCacheMiss, "cache_events", "event=\"miss\""},
    {Event::kCacheStore, "cache_events", "event=\"store\""},
    {Event::kCacheUpgrade, "cache_events", "event=\"upgrade\""},
    {Event::kCacheStoreError, "cache_events", "event=\"store_error\""},
    {Event::kCacheRejected, "cache_events", "event=\"rejected\""},
    {Event::kCacheLocalHit, "cache_events", "event=\"local_hit\""},
    {Event::kCacheLocalEvict, "cache_events", "event=\"local_evict\""},
    {Event::kDictionaryOffered, "dictionaries", "event=\"offered\""},
    {Event::kDictionaryUsed, "dictionaries", "event=\"used\""},
    {Event::kDictionaryUnknown, "dictionaries", "event=\"unknown\""},
    {Event::kInflateBody, "inflate_bodies", ""},
    {Event::kInflateBytesIn, "inflate_bytes_in", ""},
    {Event::kInflateBytesOut, "inflate_bytes_out", ""},
    {Event::kInflateBadRequest, "inflate_errors", "status=\"400\""},
    {Event::kInflateTooLarge, "inflate_errors", "status=\"413\""},
    {Event::kInflateUnsupported, "inflate_errors", "status=\"415\""},
    {Event::kGateWait, "gate_waits", ""},
    {Event::kSavingProbe, "saving_probes", ""},
    {Event::kTranscodeDecoded, "transcode_events", "event=\"decoded\""},
    {Event::kTranscodeCorrupt, "transcode_events", "event=\"corrupt\""},
};
static_assert(std::size(kEventLabels) == kEventCount);

struct Family {
    const char* name;
    const char* help;
};
constexpr Family kEventFamilies[] = {
    {"cache_events",
     "MultiCompressCache events (rejected: an entry that failed its check; local_hit: a hit "
     "served from the child's tier of verified entries, also counted as a hit; local_evict: an "
     "entry the full tier let go)."},
    {"dictionaries", "Shared dictionaries (RFC 9842): offered, used for a response, unknown."},
    {"inflate_bodies", "Request bodies decoded by the DEFLATE input filter."},
    {"inflate_bytes_in", "Encoded bytes of decoded request bodies."},
    {"inflate_bytes_out", "Decoded bytes of request bodies."},
    {"inflate_errors",
     "Request bodies refused while decoding (400, 413) or before (415), by status."},
    {"gate_waits", "Large whole bodies that waited for a compression slot."},
    {"saving_probes", "Bodies whose first block MultiCompressMinSaving's quick probe compressed."},
    {"transcode_events",
     "MultiCompressTranscode: responses decoded for a client that lacks their coding; corrupt "
     "ones."},
};

std::uint64_t get(const Totals& t, std::size_t word) {
    return t[word];
}

void append(std::string& out, std::string_view s) {
    out.append(s.data(), s.size());
}

void appendf(std::string& out, const char* fmt, auto... args) {
    char buf[512];
    const int n = std::snprintf(buf, sizeof buf, fmt, args...);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n) < sizeof buf ? n : sizeof buf - 1);
}

void header(std::string& out, const char* name, const char* help) {
    appendf(out, "# HELP multicompress_%s_total %s\n# TYPE multicompress_%s_total counter\n", name,
            help, name);
}

const char* token(Coding c) {
    return coding_token(c).data();  // the tokens are literals, NUL-terminated
}

// "Gzip", "Deflate", "Br", "Zstd", "Identity" for ?auto keys.
std::string key(Coding c) {
    std::string s(coding_token(c));
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 32);
    return s;
}

std::string key(const char* snake) {
    std::string s;
    bool up = true;
    for (const char* p = snake; *p != '\0'; ++p) {
        if (*p == '_') {
            up = true;
            continue;
        }
        s.push_back(up && *p >= 'a' && *p <= 'z' ? static_cast<char>(*p - 32) : *p);
        up = false;
    }
    return s;
}

std::uint64_t compressed_responses(const Totals& t, Coding c) {
    std::uint64_t n = 0;
    for (const Source s : kCompressedSources) n += get(t, response_word(c, s));
    return n;
}

}  // namespace

const char* source_name(Source s) {
    switch (s) {
        case Source::kLive: return "live";
        case Source::kSidecar: return "sidecar";
        case Source::kCache: return "cache";
        case Source::kIdentity: return "identity";
    }
    return "identity";
}

const char* why_name(Why w) {
    switch (w) {
        case Why::kNotAcceptable: return "not_acceptable";
        case Why::kTooSmall: return "too_small";
        case Why::kNoTransform: return "no_transform";
        case Why::kAlreadyEncoded: return "already_encoded";
        case Why::kRange: return "range";
        case Why::kEnv: return "env";
        case Why::kCrossSite: return "cross_site";
        case Why::kStatus: return "status";
        case Why::kBudget: return "budget";
        case Why::kIncompressible: return "incompressible";
        case Why::kOther: return "other";
    }
    return "other";
}

const char* event_name(Event e) {
    for (const EventLabel& l : kEventLabels) {
        if (l.event == e) return l.label[0] != '\0' ? l.label : l.family;
    }
    return "";
}

std::string render_prometheus(const Totals& t) {
    std::string out;
    out.reserve(6000);
    header(out, "responses",
           "Responses seen by the compressing filters, by content coding and source.");
    for (const Source s : kCompressedSources) {
        for (const Coding c : kCompressing) {
            appendf(out,
                    "multicompress_responses_total{encoding=\"%s\",source=\"%s\"} %" PRIu64 "\n",
                    token(c), source_name(s), get(t, response_word(c, s)));
        }
    }
    appendf(out,
            "multicompress_responses_total{encoding=\"identity\",source=\"identity\"} %" PRIu64
            "\n",
            get(t, response_word(Coding::kIdentity, Source::kIdentity)));
    header(out, "identity_responses", "Responses sent unchanged, by reason.");
    for (std::size_t w = 0; w < kWhyCount; ++w) {
        const auto why = static_cast<Why>(w);
        appendf(out, "multicompress_identity_responses_total{reason=\"%s\"} %" PRIu64 "\n",
                why_name(why), get(t, why_word(why)));
    }
    header(out, "bytes_in", "Bytes before compression of compressed responses, by coding.");
    for (const Coding c : kCompressing) {
        appendf(out, "multicompress_bytes_in_total{encoding=\"%s\"} %" PRIu64 "\n", token(c),
                get(t, bytes_in_word(c)));
    }
    header(out, "bytes_out", "Bytes sent of compressed responses, by coding.");
    for (const Coding c : kCompressing) {
        appendf(out, "multicompress_bytes_out_total{encoding=\"%s\"} %" PRIu64 "\n", token(c),
                get(t, bytes_out_word(c)));
    }
    header(out, "compress_cpu_seconds",
           "CPU time spent compressing live responses (thread CPU clock), by coding.");
    for (const Coding c : kCompressing) {
        appendf(out, "multicompress_compress_cpu_seconds_total{encoding=\"%s\"} %.9f\n", token(c),
                static_cast<double>(get(t, cpu_ns_word(c))) / 1e9);
    }
    for (const Family& f : kEventFamilies) {
        header(out, f.name, f.help);
        for (const EventLabel& l : kEventLabels) {
            if (std::string_view(l.family) != f.name) continue;
            const std::uint64_t v = get(t, event_word(l.event));
            if (l.label[0] == '\0') {
                appendf(out, "multicompress_%s_total %" PRIu64 "\n", l.family, v);
            } else {
                appendf(out, "multicompress_%s_total{%s} %" PRIu64 "\n", l.family, l.label, v);
            }
        }
    }
    return out;
}

std::string render_budget_gauges(double share, int step) {
    std::string out;
    appendf(out,
            "# HELP multicompress_budget_cpu_share Share of the machine's CPUs live compression "
            "used when MultiCompressCPUBudget last measured it (0-1).\n"
            "# TYPE multicompress_budget_cpu_share gauge\nmulticompress_budget_cpu_share %.4f\n"
            "# HELP multicompress_budget_step MultiCompressCPUBudget's step for new live "
            "responses: 0 configured level, 1 lower, 2 lowest, 3 cheapest coding, 4 identity.\n"
            "# TYPE multicompress_budget_step gauge\nmulticompress_budget_step %d\n",
            share, step);
    return out;
}

std::string render_dictionary_gauge(std::uint64_t bytes) {
    std::string out;
    appendf(out,
            "# HELP multicompress_dictionary_memory_bytes Memory the children hold in compression "
            "dictionaries and their prepared zstd tables.\n"
            "# TYPE multicompress_dictionary_memory_bytes gauge\n"
            "multicompress_dictionary_memory_bytes %" PRIu64 "\n",
            bytes);
    return out;
}

std::string render_dictionary_memory_auto(std::uint64_t bytes) {
    std::string out;
    appendf(out, "MultiCompressDictionaryMemory: %" PRIu64 "\n", bytes);
    return out;
}

std::string render_dictionary_memory_html(std::uint64_t bytes) {
    std::string out;
    appendf(out,
            "<p>Dictionaries held by the children (bytes and prepared tables): %" PRIu64 "</p>\n",
            bytes);
    return out;
}

std::string render_status_auto(const Totals& t) {
    std::string out;
    std::uint64_t all = get(t, response_word(Coding::kIdentity, Source::kIdentity));
    for (const Coding c : kCompressing) all += compressed_responses(t, c);
    appendf(out, "MultiCompressResponses: %" PRIu64 "\n", all);
    for (const Source s : kCompressedSources) {
        std::uint64_t n = 0;
        for (const Coding c : kCompressing) n += get(t, response_word(c, s));
        appendf(out, "MultiCompressResponses%s: %" PRIu64 "\n", key(source_name(s)).c_str(), n);
    }
    appendf(out, "MultiCompressResponsesIdentity: %" PRIu64 "\n",
            get(t, response_word(Coding::kIdentity, Source::kIdentity)));
    for (const Coding c : kCompressing) {
        const std::string k = key(c);
        const std::uint64_t in = get(t, bytes_in_word(c));
        const std::uint64_t outb = get(t, bytes_out_word(c));
        appendf(out, "MultiCompressResponses%s: %" PRIu64 "\n", k.c_str(),
                compressed_responses(t, c));
        appendf(out, "MultiCompressBytesIn%s: %" PRIu64 "\n", k.c_str(), in);
        appendf(out, "MultiCompressBytesOut%s: %" PRIu64 "\n", k.c_str(), outb);
        appendf(out, "MultiCompressRatio%s: %.4f\n", k.c_str(),
                in > 0 ? static_cast<double>(outb) / static_cast<double>(in) : 0.0);
        appendf(out, "MultiCompressCPUSeconds%s: %.6f\n", k.c_str(),
                static_cast<double>(get(t, cpu_ns_word(c))) / 1e9);
    }
    for (std::size_t w = 0; w < kWhyCount; ++w) {
        const auto why = static_cast<Why>(w);
        appendf(out, "MultiCompressIdentity%s: %" PRIu64 "\n", key(why_name(why)).c_str(),
                get(t, why_word(why)));
    }
    for (const EventLabel& l : kEventLabels) {
        std::string k = key(l.family);
        if (l.label[0] != '\0') {
            // event="store_error" -> StoreError, status="413" -> 413
            std::string_view v(l.label);
            v = v.substr(v.find('"') + 1);
            v = v.substr(0, v.find('"'));
            k += key(std::string(v).c_str());
        }
        appendf(out, "MultiCompress%s: %" PRIu64 "\n", k.c_str(), get(t, event_word(l.event)));
    }
    return out;
}

std::string render_status_html(const Totals& t, const CpuView& cpu_view) {
    std::string out;
    // The table and, beside it (below on a narrow window), the picture of the same counters.
    append(out,
           "<hr /><div id=\"mod_multicompress\"><h2>mod_multicompress</h2>\n"
           "<div style=\"display:flex;flex-wrap:wrap;gap:1em 2em;align-items:flex-start\">\n"
           "<table border=\"0\"><tr><th>coding</th>"
           "<th>live</th><th>sidecar</th><th>cache</th><th>bytes in</th><th>bytes out</th>"
           "<th>out/in</th><th>CPU s</th><th>CPU ms per live MB</th></tr>\n");
    for (const Coding c : kCompressing) {
        const std::uint64_t in = get(t, bytes_in_word(c));
        const std::uint64_t outb = get(t, bytes_out_word(c));
        const double cpu = static_cast<double>(get(t, cpu_ns_word(c))) / 1e9;
        const auto live_mb = static_cast<double>(get(t, live_bytes_in_word(c))) / 1e6;
        appendf(out,
                "<tr><td>%s</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td><td>%.3f</td><td>%.3f</td>"
                "<td>%.2f</td></tr>\n",
                token(c), get(t, response_word(c, Source::kLive)),
                get(t, response_word(c, Source::kSidecar)),
                get(t, response_word(c, Source::kCache)), in, outb,
                in > 0 ? static_cast<double>(outb) / static_cast<double>(in) : 0.0, cpu,
                live_mb > 0 ? cpu * 1e3 / live_mb : 0.0);
    }
    append(out, "</table>\n");
    append(out, render_status_svg(t, cpu_view));
    append(out, "</div>\n<p>Sent unchanged: ");
    appendf(out, "%" PRIu64, get(t, response_word(Coding::kIdentity, Source::kIdentity)));
    for (std::size_t w = 0; w < kWhyCount; ++w) {
        const auto why = static_cast<Why>(w);
        appendf(out, "%s %s %" PRIu64, w == 0 ? " (" : ",", why_name(why), get(t, why_word(why)));
    }
    append(out, ")</p>\n<p>");
    for (std::size_t i = 0; i < std::size(kEventLabels); ++i) {
        const EventLabel& l = kEventLabels[i];
        appendf(out, "%s%s%s%s %" PRIu64, i == 0 ? "" : ", ", l.family,
                l.label[0] != '\0' ? " " : "", l.label, get(t, event_word(l.event)));
    }
    append(out, "</p>\n</div>\n");
    return out;
}

std::string render_cache_local_gauge(std::uint64_t bytes) {
    std::string out;
    appendf(out,
            "# HELP multicompress_cache_local_bytes Bytes the children hold in their tiers of "
            "verified cache entries (MultiCompressCacheLocal).\n"
            "# TYPE multicompress_cache_local_bytes gauge\n"
            "multicompress_cache_local_bytes %" PRIu64 "\n",
            bytes);
    return out;
}

std::string render_cache_local_auto(std::uint64_t bytes) {
    std::string out;
    appendf(out, "MultiCompressCacheLocalBytes: %" PRIu64 "\n", bytes);
    return out;
}

std::string render_cache_local_html(std::uint64_t bytes) {
    std::string out;
    appendf(out, "<p>Verified cache entries held by the children: %" PRIu64 " bytes</p>\n", bytes);
    return out;
}

}  // namespace mc::metrics
