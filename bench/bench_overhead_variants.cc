// SPDX-License-Identifier: Apache-2.0
// bench_overhead's variants: see bench_overhead.cc for what each one does and why it is there.
#include "bench_overhead_variants.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mc/alloc.h"
#include "mc/coding.h"
#include "mc/encoder.h"
#include "mc/oneshot.h"
#include "mc/params.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace bench_overhead {

void die(const std::string& what) {
    std::fprintf(stderr, "bench_overhead: %s\n", what.c_str());
    std::exit(1);
}

namespace {

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

std::span<const std::byte> bytes_of(const std::string& s) {
    return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

mc::EncoderParams filter_params(mc::Coding c, int level, std::size_t n) {
    mc::EncoderParams p;
    p.coding = c;
    p.level = level;
    p.size_hint = static_cast<std::int64_t>(n);
    p.exact_size = true;
    return mc::tune(p);
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

}  // namespace

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

}  // namespace bench_overhead
