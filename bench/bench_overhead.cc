// SPDX-License-Identifier: Apache-2.0
// Per-response CPU around the library: CPU time per body of the ways a server can drive
// libbrotlienc and zlib/libdeflate for one whole response, measured interleaved in one process on
// one thread, so a noisy shared machine weighs on every variant alike.
//
// Usage: bench_overhead [--corpus=DIR] [--rounds=N] [--min-ms=M] [--threads=N] [--files=a,b,...]
//
// Every round runs every (file, coding, variant) cell for at least --min-ms of thread CPU time
// (CLOCK_THREAD_CPUTIME_ID) in a rotating order; the report gives the median and the minimum over
// the rounds of the CPU µs per body (other work on the machine only ever adds time, so the
// minimum is the steadier one), minor page faults per body, output bytes, and the ratios to the
// first variant of its group. Every variant's output is decoded once and compared with the input.
// --threads=N runs each cell on N threads at once (a threaded server's workers sharing the cores:
// what the caches lose when more compressions than cores take turns).
//
// br-N variants:
//   filter        mc::make_encoder (size hint = body length, exact size) and one write() of the
//                 whole body with kFinish into 8 KiB sink chunks: what the filter does for a body
//                 in one bucket (a mapped file, or a read file of up to 8000 bytes)
//   filter-8000   the same, the body written in 8000-byte pieces (APR_BUCKET_BUFF_SIZE: a read
//                 file of 8001 to 16384 bytes), kFinish with the last
//   oneshot       mc::OneShotCompressor (when it supports brotli)
//   stream-mc-alloc  BrotliEncoderCreateInstance over mc::mem_alloc (as the filter), the same
//                 parameters as `filter`, one CompressStream(FINISH) into a
//                 BrotliEncoderMaxCompressedSize buffer (no sink chunks)
//   stream-malloc the same with libbrotlienc's default allocator (malloc)
//   compress      BrotliEncoderCompress(quality, lgwin as `filter`): libbrotlienc's own one-call
//   ngx_brotli    what ngx_brotli 1.0.0rc does: malloc (its pool), quality and lgwin from
//                 Content-Length (no size hint), the body fed in 32 KiB buffers (output_buffers
//                 2 32k) with PROCESS and FINISH on the last, output taken with TakeOutput
// gzip-N variants:
//   oneshot       mc::OneShotCompressor, reused across bodies (the filter's whole-body path)
//   filter-stream mc::make_encoder + one write(kFinish) (a body that does not arrive whole)
//   nginx         nginx 1.22's gzip filter: deflateInit2(level, raw, wbits and memLevel sized to
//                 Content-Length) over one preallocated block per request (its pool), crc32
//                 and the gzip header by hand, the body fed in 32 KiB buffers
//   zlib-15-8     a fresh deflateInit2(level, gzip, 15, 8) per body, whole body with Z_FINISH
#include <sys/resource.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_overhead_variants.h"

namespace {

using bench_overhead::brotli_decode;
using bench_overhead::brotli_variants;
using bench_overhead::die;
using bench_overhead::gzip_decode;
using bench_overhead::gzip_variants;
using bench_overhead::Run;
using bench_overhead::Variant;

std::uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

long minor_faults() {
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt;
}

struct Input {
    std::string name;
    std::string data;
};

struct Group {
    const Input* input;
    std::string coding;  // "br-4", "gzip-6"
    bool brotli;
    std::vector<Variant> variants;
};

struct Cell {
    std::vector<double> us;      // per round: CPU µs per body
    std::vector<double> faults;  // per round: minor faults per body
    std::size_t bytes = 0;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 != 0 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::vector<Input> load(const std::filesystem::path& dir, const std::vector<std::string>& only) {
    std::vector<Input> out;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        const std::string name = f.filename().string();
        if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
        std::ifstream in(f, std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!data.empty()) out.push_back({name, std::move(data)});
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::filesystem::path corpus = "bench/corpus";
    int rounds = 15;
    double min_ms = 20;
    int threads = 1;
    std::vector<std::string> only = {"small.html", "bootstrap.min.css", "jquery.min.js",
                                     "manual.html"};
    std::vector<int> br_levels = {4, 5};
    std::vector<int> gzip_levels = {6};
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a.starts_with("--corpus=")) {
            corpus = std::string(a.substr(9));
        } else if (a.starts_with("--rounds=")) {
            rounds = std::atoi(std::string(a.substr(9)).c_str());
        } else if (a.starts_with("--min-ms=")) {
            min_ms = std::atof(std::string(a.substr(9)).c_str());
        } else if (a.starts_with("--threads=")) {
            threads = std::max(1, std::atoi(std::string(a.substr(10)).c_str()));
        } else if (a.starts_with("--files=")) {
            only.clear();
            std::string list(a.substr(8));
            std::size_t start = 0;
            while (start <= list.size()) {
                const std::size_t comma = std::min(list.find(',', start), list.size());
                if (comma > start) only.push_back(list.substr(start, comma - start));
                start = comma + 1;
            }
            if (only.size() == 1 && only[0] == "all") only.clear();
        } else {
            std::fprintf(stderr,
                         "usage: %s [--corpus=DIR] [--rounds=N] [--min-ms=M] "
                         "[--threads=N] [--files=a,b|all]\n",
                         argv[0]);
            return 2;
        }
    }
    const std::vector<Input> inputs = load(corpus, only);
    if (inputs.empty()) die("no input files in " + corpus.string());

    // One copy of every variant per thread (the one-shot compressors are per user).
    const auto make_groups = [&] {
        std::vector<Group> gs;
        for (const Input& in : inputs) {
            for (int q : br_levels) {
                gs.push_back({&in, "br-" + std::to_string(q), true, brotli_variants(q)});
            }
            for (int l : gzip_levels) {
                gs.push_back({&in, "gzip-" + std::to_string(l), false, gzip_variants(l)});
            }
        }
        return gs;
    };
    std::vector<std::vector<Group>> per_thread;
    for (int t = 0; t < threads; ++t) per_thread.push_back(make_groups());
    const std::vector<Group>& groups = per_thread[0];

    // Check every variant once (and warm up).
    std::vector<std::vector<Cell>> cells(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
        cells[g].resize(groups[g].variants.size());
        for (std::size_t v = 0; v < groups[g].variants.size(); ++v) {
            std::string out;
            cells[g][v].bytes = groups[g].variants[v].run(groups[g].input->data, &out);
            const std::string back = groups[g].brotli
                                         ? brotli_decode(out, groups[g].input->data.size())
                                         : gzip_decode(out, groups[g].input->data.size());
            if (back != groups[g].input->data || out.size() != cells[g][v].bytes) {
                die(groups[g].input->name + " " + groups[g].coding + " " +
                    groups[g].variants[v].name + ": output does not decode to the input");
            }
        }
    }

    const auto min_ns = static_cast<std::uint64_t>(min_ms * 1e6);
    for (int r = 0; r < rounds; ++r) {
        for (std::size_t g = 0; g < groups.size(); ++g) {
            const std::size_t nv = groups[g].variants.size();
            for (std::size_t k = 0; k < nv; ++k) {
                const std::size_t v = (k + static_cast<std::size_t>(r)) % nv;  // rotate
                const std::string& data = groups[g].input->data;
                std::vector<std::uint64_t> spent(per_thread.size());
                std::vector<long> faults(per_thread.size());
                std::vector<int> bodies(per_thread.size());
                // With --threads, every thread runs the cell at once (as a threaded server's
                // workers share the cores): CPU per body is the sum over the threads.
                const auto work = [&](std::size_t t) {
                    const Run& run = per_thread[t][g].variants[v].run;
                    while (spent[t] < min_ns || bodies[t] < 3) {
                        const long f0 = minor_faults();
                        const std::uint64_t t0 = thread_cpu_ns();
                        run(data, nullptr);
                        spent[t] += thread_cpu_ns() - t0;
                        faults[t] += minor_faults() - f0;
                        ++bodies[t];
                    }
                };
                if (per_thread.size() == 1) {
                    work(0);
                } else {
                    std::vector<std::thread> pool;
                    for (std::size_t t = 0; t < per_thread.size(); ++t) pool.emplace_back(work, t);
                    for (std::thread& th : pool) th.join();
                }
                std::uint64_t all_spent = 0;
                long all_faults = 0;
                int all_bodies = 0;
                for (std::size_t t = 0; t < per_thread.size(); ++t) {
                    all_spent += spent[t];
                    all_faults += faults[t];
                    all_bodies += bodies[t];
                }
                cells[g][v].us.push_back(static_cast<double>(all_spent) / 1e3 / all_bodies);
                cells[g][v].faults.push_back(static_cast<double>(all_faults) / all_bodies);
            }
        }
    }

    std::printf(
        "# bench_overhead: %d rounds, >= %.0f ms CPU per cell per round and thread, %d "
        "thread(s); CPU µs/body (CLOCK_THREAD_CPUTIME_ID)\n\n",
        rounds, min_ms, threads);
    std::printf(
        "| file | coding | variant | median µs/body | × first | min µs/body | × first | "
        "minor faults/body | bytes |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const double base = median(cells[g][0].us);
        const double base_min = *std::min_element(cells[g][0].us.begin(), cells[g][0].us.end());
        for (std::size_t v = 0; v < cells[g].size(); ++v) {
            const double us = median(cells[g][v].us);
            const double lo = *std::min_element(cells[g][v].us.begin(), cells[g][v].us.end());
            std::printf("| `%s` (%zu B) | %s | %s | %.1f | %.3f | %.1f | %.3f | %.1f | %zu |\n",
                        groups[g].input->name.c_str(), groups[g].input->data.size(),
                        groups[g].coding.c_str(), groups[g].variants[v].name.c_str(), us, us / base,
                        lo, lo / base_min, median(cells[g][v].faults), cells[g][v].bytes);
        }
    }
    return 0;
}
