// SPDX-License-Identifier: Apache-2.0
// Per-response CPU around the library (issue 12): CPU time per body of the ways a server can drive
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
#include <brotli/decode.h>
#include <brotli/encode.h>
#include <sys/resource.h>
#include <zlib.h>

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

#include "mc/alloc.h"
#include "mc/coding.h"
#include "mc/encoder.h"
#include "mc/oneshot.h"
#include "mc/params.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace {

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

/// Output in 8 KiB chunks from malloc, freed after the body, as the filter's BucketSink (with
/// MultiCompressBufferSize 8192) hands chunks of bucket memory to the brigade.
class ChunkSink final : public mc::Sink {
public:
    static constexpr std::size_t kChunk = 8192;
    ~ChunkSink() override { clear(); }
    std::span<std::byte> reserve() override {
        if (chunks_.empty() || used_ == kChunk) {
            chunks_.push_back(static_cast<std::byte*>(std::malloc(kChunk)));
            used_ = 0;
        }
        return {chunks_.back() + used_, kChunk - used_};
    }
    mc::Status commit(std::size_t used) override {
        used_ += used;
        total_ += used;
        return mc::Status::ok();
    }
    [[nodiscard]] std::string joined() const {
        std::string s;
        for (std::size_t i = 0; i < chunks_.size(); ++i) {
            const std::size_t n = i + 1 == chunks_.size() ? used_ : kChunk;
            s.append(reinterpret_cast<const char*>(chunks_[i]), n);
        }
        return s;
    }
    void clear() {
        for (std::byte* c : chunks_) std::free(c);
        chunks_.clear();
        used_ = 0;
        total_ = 0;
    }
    [[nodiscard]] std::size_t total() const { return total_; }

private:
    std::vector<std::byte*> chunks_;
    std::size_t used_ = 0;
    std::size_t total_ = 0;
};

struct Input {
    std::string name;
    std::string data;
};

std::span<const std::byte> bytes_of(const std::string& s) {
    return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

/// One way of compressing a body: returns the output (kept only for the check) and its size.
using Run = std::function<std::size_t(const std::string& in, std::string* keep)>;

struct Variant {
    std::string name;
    Run run;
};

mc::EncoderParams filter_params(mc::Coding c, int level, std::size_t n) {
    mc::EncoderParams p;
    p.coding = c;
    p.level = level;
    p.size_hint = static_cast<std::int64_t>(n);
    p.exact_size = true;
    return mc::tune(p);
}

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "bench_overhead: %s\n", what.c_str());
    std::exit(1);
}

std::size_t run_filter(const mc::EncoderParams& p, const std::string& in, std::size_t piece,
                       std::string* keep) {
    ChunkSink sink;
    auto made = mc::make_encoder(p);
    if (!made.is_ok()) die(made.status().reason());
    mc::Encoder& enc = *made.value();
    const std::span<const std::byte> all = bytes_of(in);
    for (std::size_t off = 0; off < all.size(); off += piece) {
        const std::size_t n = std::min(piece, all.size() - off);
        const bool last = off + n == all.size();
        if (mc::Status st =
                enc.write(all.subspan(off, n), last ? mc::Flush::kFinish : mc::Flush::kNone, sink);
            !st.is_ok()) {
            die(st.reason());
        }
    }
    if (keep != nullptr) *keep = sink.joined();
    return sink.total();
}

int ngx_brotli_lgwin(std::size_t content_length) {
    std::size_t wbits = BROTLI_MIN_WINDOW_BITS;
    while (wbits < 22 && content_length > (std::size_t{1} << wbits)) ++wbits;
    return static_cast<int>(wbits);
}

// The filter's one-shot path (mc::OneShotCompressor, one instance reused, as a pool slot is).
Variant oneshot_variant(mc::Coding coding, int level) {
    auto shared = std::make_shared<mc::OneShotCompressor>();
    auto out = std::make_shared<std::vector<std::byte>>();
    return {"oneshot", [coding, level, shared, out](const std::string& in, std::string* keep) {
                const mc::EncoderParams p = filter_params(coding, level, in.size());
                out->resize(mc::OneShotCompressor::bound(p.coding, in.size()));
                auto r = shared->compress(p, bytes_of(in), *out);
                if (!r.is_ok()) die(r.status().reason());
                if (keep != nullptr)
                    keep->assign(reinterpret_cast<const char*>(out->data()), r.value());
                return r.value();
            }};
}

std::vector<Variant> brotli_variants(int q) {
    std::vector<Variant> v;
    v.push_back({"filter", [q](const std::string& in, std::string* keep) {
                     return run_filter(filter_params(mc::Coding::kBrotli, q, in.size()), in,
                                       in.size(), keep);
                 }});
    v.push_back({"filter-8000", [q](const std::string& in, std::string* keep) {
                     return run_filter(filter_params(mc::Coding::kBrotli, q, in.size()), in, 8000,
                                       keep);
                 }});
    if (mc::OneShotCompressor::supports(mc::Coding::kBrotli)) {
        v.push_back(oneshot_variant(mc::Coding::kBrotli, q));
    }
    for (const bool ours : {true, false}) {
        v.push_back(
            {ours ? "stream-mc-alloc" : "stream-malloc",
             [q, ours](const std::string& in, std::string* keep) {
                 const mc::EncoderParams p = filter_params(mc::Coding::kBrotli, q, in.size());
                 BrotliEncoderState* s =
                     ours ? BrotliEncoderCreateInstance(mc::mem_alloc_cb, mc::mem_free_cb, nullptr)
                          : BrotliEncoderCreateInstance(nullptr, nullptr, nullptr);
                 BrotliEncoderSetParameter(s, BROTLI_PARAM_QUALITY,
                                           static_cast<std::uint32_t>(p.level));
                 BrotliEncoderSetParameter(s, BROTLI_PARAM_LGWIN,
                                           static_cast<std::uint32_t>(p.window_log));
                 BrotliEncoderSetParameter(s, BROTLI_PARAM_SIZE_HINT,
                                           static_cast<std::uint32_t>(in.size()));
                 std::vector<std::uint8_t> out(BrotliEncoderMaxCompressedSize(in.size()));
                 std::size_t avail_in = in.size();
                 const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
                 std::size_t avail_out = out.size();
                 std::uint8_t* next_out = out.data();
                 if (!BrotliEncoderCompressStream(s, BROTLI_OPERATION_FINISH, &avail_in, &next_in,
                                                  &avail_out, &next_out, nullptr) ||
                     !BrotliEncoderIsFinished(s)) {
                     die("brotli stream-malloc");
                 }
                 BrotliEncoderDestroyInstance(s);
                 const std::size_t n = out.size() - avail_out;
                 if (keep != nullptr) keep->assign(reinterpret_cast<char*>(out.data()), n);
                 return n;
             }});
    }
    v.push_back({"compress", [q](const std::string& in, std::string* keep) {
                     const mc::EncoderParams p = filter_params(mc::Coding::kBrotli, q, in.size());
                     std::vector<std::uint8_t> out(BrotliEncoderMaxCompressedSize(in.size()));
                     std::size_t n = out.size();
                     if (!BrotliEncoderCompress(
                             p.level, p.window_log, BROTLI_MODE_GENERIC, in.size(),
                             reinterpret_cast<const std::uint8_t*>(in.data()), &n, out.data())) {
                         die("BrotliEncoderCompress");
                     }
                     if (keep != nullptr) keep->assign(reinterpret_cast<char*>(out.data()), n);
                     return n;
                 }});
    v.push_back(
        {"ngx_brotli", [q](const std::string& in, std::string* keep) {
             BrotliEncoderState* s = BrotliEncoderCreateInstance(nullptr, nullptr, nullptr);
             BrotliEncoderSetParameter(s, BROTLI_PARAM_QUALITY, static_cast<std::uint32_t>(q));
             BrotliEncoderSetParameter(s, BROTLI_PARAM_LGWIN,
                                       static_cast<std::uint32_t>(ngx_brotli_lgwin(in.size())));
             constexpr std::size_t kBuf = 32 * 1024;
             std::size_t total = 0;
             if (keep != nullptr) keep->clear();
             std::size_t off = 0;
             for (;;) {
                 const std::size_t n = std::min(kBuf, in.size() - off);
                 const bool last = off + n == in.size();
                 // ngx_chain_add_copy + reading the file into a 32 KiB buffer
                 std::vector<std::uint8_t> buf(in.begin() + static_cast<long>(off),
                                               in.begin() + static_cast<long>(off + n));
                 std::size_t avail_in = n;
                 const std::uint8_t* next_in = buf.data();
                 while (avail_in > 0 || (last && !BrotliEncoderIsFinished(s))) {
                     std::size_t avail_out = 0;
                     if (!BrotliEncoderCompressStream(
                             s, last ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_PROCESS,
                             &avail_in, &next_in, &avail_out, nullptr, nullptr)) {
                         die("ngx_brotli");
                     }
                     while (BrotliEncoderHasMoreOutput(s)) {
                         std::size_t got = 0;
                         const std::uint8_t* o = BrotliEncoderTakeOutput(s, &got);
                         total += got;
                         if (keep != nullptr) keep->append(reinterpret_cast<const char*>(o), got);
                     }
                 }
                 off += n;
                 if (last) break;
             }
             BrotliEncoderDestroyInstance(s);
             return total;
         }});
    return v;
}

// nginx's gzip filter allocator: one block per request, handed out in order, never freed
// (ngx_http_gzip_filter_alloc over ctx->preallocated).
struct Bump {
    char* base;
    std::size_t size;
    std::size_t used;
};

void* bump_alloc(void* opaque, unsigned items, unsigned size) {
    auto* b = static_cast<Bump*>(opaque);
    std::size_t n = static_cast<std::size_t>(items) * size;
    n = (n + 7) & ~std::size_t{7};
    if (b->used + n > b->size) return std::malloc(n);  // nginx falls back to its pool too
    void* p = b->base + b->used;
    b->used += n;
    return p;
}

void bump_free(void* /*opaque*/, void* /*p*/) {}

std::size_t deflate_raw_gzip(const std::string& in, int level, int wbits, int memlevel,
                             std::size_t buf, std::string* keep) {
    // ngx_http_gzip_filter_memory: 8192 + 16 + (1 << (wbits + 2)) + (1 << (memlevel + 9)).
    Bump bump{nullptr, 0, 0};
    bump.size = 8192 + 16 + (std::size_t{1} << (wbits + 2)) + (std::size_t{1} << (memlevel + 9));
    bump.base = static_cast<char*>(std::malloc(bump.size));
    z_stream z{};
    z.zalloc = bump_alloc;
    z.zfree = bump_free;
    z.opaque = &bump;
    if (deflateInit2(&z, level, Z_DEFLATED, -wbits, memlevel, Z_DEFAULT_STRATEGY) != Z_OK)
        die("deflateInit2");
    std::string out;
    static constexpr unsigned char kHeader[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    out.append(reinterpret_cast<const char*>(kHeader), sizeof kHeader);
    uLong crc = crc32(0, nullptr, 0);
    std::vector<unsigned char> obuf(32 * 1024);  // gzip_buffers 32 4k, one at a time here
    std::size_t off = 0;
    for (;;) {
        const std::size_t n = std::min(buf, in.size() - off);
        const bool last = off + n == in.size();
        std::vector<unsigned char> ibuf(in.begin() + static_cast<long>(off),
                                        in.begin() + static_cast<long>(off + n));
        crc = crc32(crc, ibuf.data(), static_cast<uInt>(n));
        z.next_in = ibuf.data();
        z.avail_in = static_cast<uInt>(n);
        int rc = Z_OK;
        do {
            z.next_out = obuf.data();
            z.avail_out = static_cast<uInt>(obuf.size());
            rc = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
            out.append(reinterpret_cast<const char*>(obuf.data()), obuf.size() - z.avail_out);
        } while (z.avail_out == 0 || (last && rc != Z_STREAM_END));
        off += n;
        if (last) break;
    }
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((in.size() >> (8 * i)) & 0xff));
    deflateEnd(&z);
    std::free(bump.base);
    if (keep != nullptr) *keep = out;
    return out.size();
}

std::vector<Variant> gzip_variants(int level) {
    std::vector<Variant> v;
    v.push_back(oneshot_variant(mc::Coding::kGzip, level));
    v.push_back({"filter-stream", [level](const std::string& in, std::string* keep) {
                     return run_filter(filter_params(mc::Coding::kGzip, level, in.size()), in,
                                       in.size(), keep);
                 }});
    v.push_back({"nginx", [level](const std::string& in, std::string* keep) {
                     // ngx_http_gzip_filter_memory: halve window and memLevel while the body
                     // fits in half the window minus zlib's lookahead.
                     int wbits = 15;
                     int memlevel = 8;
                     const auto len = static_cast<long long>(in.size());
                     while (len < (1LL << (wbits - 1)) - 262) {
                         --wbits;
                         --memlevel;
                         if (wbits == 9 || memlevel == 1) break;
                     }
                     return deflate_raw_gzip(in, level, wbits, memlevel, 32 * 1024, keep);
                 }});
    v.push_back({"zlib-15-8", [level](const std::string& in, std::string* keep) {
                     z_stream z{};
                     if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
                         Z_OK)
                         die("deflateInit2");
                     std::vector<unsigned char> out(deflateBound(&z, in.size()) + 32);
                     z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
                     z.avail_in = static_cast<uInt>(in.size());
                     z.next_out = out.data();
                     z.avail_out = static_cast<uInt>(out.size());
                     if (deflate(&z, Z_FINISH) != Z_STREAM_END) die("deflate");
                     const std::size_t n = out.size() - z.avail_out;
                     deflateEnd(&z);
                     if (keep != nullptr) keep->assign(reinterpret_cast<char*>(out.data()), n);
                     return n;
                 }});
    return v;
}

std::string brotli_decode(const std::string& c, std::size_t expect) {
    std::string out(expect + 1, '\0');
    std::size_t n = out.size();
    if (BrotliDecoderDecompress(c.size(), reinterpret_cast<const std::uint8_t*>(c.data()), &n,
                                reinterpret_cast<std::uint8_t*>(out.data())) !=
        BROTLI_DECODER_RESULT_SUCCESS) {
        return "<undecodable>";
    }
    out.resize(n);
    return out;
}

std::string gzip_decode(const std::string& c, std::size_t expect) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) return "<undecodable>";
    std::string out(expect + 1, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(c.data()));
    z.avail_in = static_cast<uInt>(c.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z, Z_FINISH);
    out.resize(out.size() - z.avail_out);
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : "<undecodable>";
}

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
