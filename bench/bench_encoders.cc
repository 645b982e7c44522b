// SPDX-License-Identifier: Apache-2.0
// Library-level benchmark: MB/s and compression ratio of mc_core's encoders per coding and level.
//
// Usage: bench_encoders [--corpus=DIR] [--levels=quick|full] [Google Benchmark flags]
//   --corpus=DIR  benchmark every regular file in DIR (bench/run passes its fetched corpus);
//                 without it, built-in corpus-like inputs made from a fixed seed are used.
//   --levels      quick: gzip 6, br 4, zstd 3; full (default): gzip 1 6 9, br 1 4 5 11,
//                 zstd 1 3 5 6 9 19 (every level bench/run --full measures live, so each live
//                 row has its limit: plain Apache's cost + the library's one call).
// Each input x coding x level is measured in the modes the filter uses: "whole"
// (mc::compress_all: a fresh encoder, the body in one call with its size known), "stream"
// (mc::make_encoder, 8 KiB writes, then kFinish) and, where the core has it, "oneshot"
// (mc::OneShotCompressor: libdeflate's compressor reused across bodies, a new zstd context for
// each; gzip and zstd only).
// Counters: bytes_per_second (input MB/s), ratio (out/in), out_bytes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mc/coding.h"
#include "mc/encoder.h"
#include "mc/params.h"
#include "mc/sink.h"
#include "mc/status.h"

#if __has_include("mc/oneshot.h")
#include "mc/oneshot.h"
#define MC_BENCH_ONESHOT 1
#endif

namespace {

/// A sink that only counts: one reusable buffer, so the benchmark measures the encoder and not
/// the sink's allocations.
class CountingSink final : public mc::Sink {
public:
    std::span<std::byte> reserve() override { return buf_; }
    mc::Status commit(std::size_t used) override {
        total_ += used;
        return mc::Status::ok();
    }
    [[nodiscard]] std::size_t total() const { return total_; }
    void reset() { total_ = 0; }

private:
    std::vector<std::byte> buf_ = std::vector<std::byte>(64 * 1024);
    std::size_t total_ = 0;
};

struct Input {
    std::string name;
    std::string data;
};

/// The same generator as bench/run's random-letters corpus file (PCG-style 64-bit LCG).
class Lcg {
public:
    explicit Lcg(std::uint64_t seed) : x_(seed) {}
    std::uint32_t next() {
        x_ = x_ * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::uint32_t>(x_ >> 33);
    }

private:
    std::uint64_t x_;
};

std::string random_letters(std::size_t n, std::uint64_t seed) {
    Lcg rng(seed);
    std::string s(n, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng.next() % 26);
    return s;
}

/// Markup with a small vocabulary: compresses about like a real HTML manual page.
std::string html_like(std::size_t n, std::uint64_t seed) {
    static constexpr std::string_view kWords[] = {
        "the",     "module",  "filter",   "compression", "request", "response", "header",
        "server",  "apache",  "encoding", "directive",   "context", "default",  "value",
        "section", "example", "client",   "content",     "length",  "brigade",  "bucket",
        "of",      "and",     "is",       "to",          "a",       "in",       "for"};
    static constexpr std::string_view kTags[] = {"p", "li", "td", "dd", "code", "em"};
    Lcg rng(seed);
    std::string s = "<!DOCTYPE html>\n<html><head><title>Manual</title></head><body>\n";
    while (s.size() < n) {
        const std::string_view tag = kTags[rng.next() % std::size(kTags)];
        s.append("<").append(tag).append(" class=\"c").append(std::to_string(rng.next() % 7));
        s.append("\">");
        const std::uint32_t words = 4 + rng.next() % 20;
        for (std::uint32_t i = 0; i < words; ++i) {
            s.append(kWords[rng.next() % std::size(kWords)]).append(" ");
        }
        s.append("</").append(tag).append(">\n");
    }
    s.resize(n);
    return s;
}

std::vector<Input> builtin_inputs() {
    return {
        {"html-88k", html_like(88 * 1024, 1)},
        {"html-2.5k", html_like(2560, 2)},
        {"random-letters-100k", random_letters(100 * 1024, 20240505)},
    };
}

std::vector<Input> corpus_inputs(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<Input> out;
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!data.empty()) out.push_back({f.filename().string(), std::move(data)});
    }
    return out;
}

std::span<const std::byte> bytes_of(const std::string& s) {
    return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

void bm_whole(benchmark::State& state, const Input* input, mc::EncoderParams params) {
    CountingSink sink;
    const std::span<const std::byte> in = bytes_of(input->data);
    for (auto _ : state) {
        sink.reset();
        auto r = mc::compress_all(params, in, sink);
        if (!r.is_ok()) {
            state.SkipWithError(r.status().reason());
            return;
        }
        benchmark::DoNotOptimize(r.value());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(in.size()));
    state.counters["ratio"] = static_cast<double>(sink.total()) /
                              static_cast<double>(std::max<std::size_t>(in.size(), 1));
    state.counters["out_bytes"] = static_cast<double>(sink.total());
}

void bm_stream(benchmark::State& state, const Input* input, mc::EncoderParams params) {
    static constexpr std::size_t kChunk = 8192;  // APR's file bucket read size
    CountingSink sink;
    const std::span<const std::byte> in = bytes_of(input->data);
    for (auto _ : state) {
        sink.reset();
        auto made = mc::make_encoder(params);
        if (!made.is_ok()) {
            state.SkipWithError(made.status().reason());
            return;
        }
        mc::Encoder& enc = *made.value();
        for (std::size_t off = 0; off < in.size(); off += kChunk) {
            const std::span<const std::byte> piece =
                in.subspan(off, std::min(kChunk, in.size() - off));
            if (mc::Status st = enc.write(piece, mc::Flush::kNone, sink); !st.is_ok()) {
                state.SkipWithError(st.reason());
                return;
            }
        }
        if (mc::Status st = enc.write({}, mc::Flush::kFinish, sink); !st.is_ok()) {
            state.SkipWithError(st.reason());
            return;
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(in.size()));
    state.counters["ratio"] = static_cast<double>(sink.total()) /
                              static_cast<double>(std::max<std::size_t>(in.size(), 1));
    state.counters["out_bytes"] = static_cast<double>(sink.total());
}

#ifdef MC_BENCH_ONESHOT
void bm_oneshot(benchmark::State& state, const Input* input, mc::EncoderParams params) {
    const std::span<const std::byte> in = bytes_of(input->data);
    mc::OneShotCompressor compressor;  // as the module's pool lends one to a body
    std::vector<std::byte> out(mc::OneShotCompressor::bound(params.coding, in.size()));
    std::size_t n = 0;
    for (auto _ : state) {
        auto r = compressor.compress(params, in, out);
        if (!r.is_ok()) {
            state.SkipWithError(r.status().reason());
            return;
        }
        n = r.value();
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(in.size()));
    state.counters["ratio"] =
        static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(in.size(), 1));
    state.counters["out_bytes"] = static_cast<double>(n);
}
#endif

struct LevelSet {
    mc::Coding coding;
    std::vector<int> levels;
};

std::vector<LevelSet> level_sets(bool quick) {
    if (quick) {
        return {{mc::Coding::kGzip, {6}}, {mc::Coding::kBrotli, {4}}, {mc::Coding::kZstd, {3}}};
    }
    return {{mc::Coding::kGzip, {1, 6, 9}},
            {mc::Coding::kBrotli, {1, 4, 5, 11}},
            {mc::Coding::kZstd, {1, 3, 5, 6, 9, 19}}};
}

}  // namespace

int main(int argc, char** argv) {
    std::filesystem::path corpus;
    bool quick = false;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a.starts_with("--corpus=")) {
            corpus = std::string(a.substr(9));
        } else if (a == "--levels=quick") {
            quick = true;
        } else if (a == "--levels=full") {
            quick = false;
        } else {
            args.push_back(argv[i]);
        }
    }

    // Registered benchmarks keep raw pointers into `inputs`: it must outlive
    // RunSpecifiedBenchmarks.
    const std::vector<Input> inputs = corpus.empty() ? builtin_inputs() : corpus_inputs(corpus);
    if (inputs.empty()) {
        std::fprintf(stderr, "bench_encoders: no input files in %s\n", corpus.c_str());
        return 1;
    }
    for (const Input& input : inputs) {
        for (const LevelSet& set : level_sets(quick)) {
            for (const int level : set.levels) {
                mc::EncoderParams p;
                p.coding = set.coding;
                p.level = level;
                const std::string base = input.name + "/" +
                                         std::string(mc::coding_token(set.coding)) + "-" +
                                         std::to_string(level);
                benchmark::RegisterBenchmark((base + "/whole").c_str(), bm_whole, &input, p);
                // The streamed path has no exact size: only a size hint, as from Content-Length.
                mc::EncoderParams sp = p;
                sp.size_hint = static_cast<std::int64_t>(input.data.size());
                benchmark::RegisterBenchmark((base + "/stream").c_str(), bm_stream, &input, sp);
#ifdef MC_BENCH_ONESHOT
                if (mc::OneShotCompressor::supports(set.coding)) {
                    benchmark::RegisterBenchmark((base + "/oneshot").c_str(), bm_oneshot, &input,
                                                 p);
                }
#endif
            }
        }
    }

    int bargc = static_cast<int>(args.size());
    benchmark::Initialize(&bargc, args.data());
    if (benchmark::ReportUnrecognizedArguments(bargc, args.data())) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
