// SPDX-License-Identifier: Apache-2.0
// One-call compression: libdeflate (its compressor reused) for gzip/deflate, a fresh ZSTD_CCtx for
// zstd and dcz.
#include "mc/oneshot.h"

#include <libdeflate.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_createCCtx_advanced
#include <zstd.h>

#include <algorithm>
#include <mutex>

#include "encoders.h"
#include "mc/alloc.h"
#include "mc/dictionary.h"

namespace mc {

namespace {

// libdeflate 1.14 has one process-wide allocator (libdeflate_set_memory_allocator); set it once,
// before the first compressor. Its compressors (300 KiB to 1 MiB) are then mapped on their own.
void route_libdeflate() {
    static std::once_flag once;
    std::call_once(once, [] {
        libdeflate_set_memory_allocator([](std::size_t n) { return mem_alloc(n); },
                                        [](void* p) { mem_free(p); });
    });
}

const ZSTD_customMem kZstdMem{mem_alloc_cb, mem_free_cb, nullptr};

// A zstd context for one body, its memory from mem_alloc (the block cache).
struct ZstdContext {
    ZSTD_CCtx* cctx = ZSTD_createCCtx_advanced(kZstdMem);
    ZstdContext() = default;
    ~ZstdContext() { ZSTD_freeCCtx(cctx); }
    ZstdContext(const ZstdContext&) = delete;
    ZstdContext& operator=(const ZstdContext&) = delete;
};

}  // namespace

OneShotCompressor::OneShotCompressor() {
    route_libdeflate();
}

OneShotCompressor::~OneShotCompressor() {
    if (deflate_ != nullptr) libdeflate_free_compressor(deflate_);
}

bool OneShotCompressor::supports(Coding c) {
    return c == Coding::kGzip || c == Coding::kDeflate || c == Coding::kZstd || c == Coding::kDcz;
}

bool OneShotCompressor::suits(const Config& cfg, const EncoderParams& params) {
    if (!supports(params.coding)) return false;
    if (params.coding != Coding::kGzip && params.coding != Coding::kDeflate) return true;
    // libdeflate always uses a 32 KiB window and its own memory: a smaller MultiCompressWindow or
    // DeflateWindowSize, or a DeflateMemLevel, keeps zlib. Its levels 8 and 9 search much harder
    // than zlib's (bench/: gzip-9 0.9x mod_deflate), so those stay with zlib too.
    const int window = cfg.window_for(params.coding);
    return (window == 0 || window == 15) && cfg.mem_level < 0 && params.level <= 7;
}

std::size_t OneShotCompressor::bound(Coding c, std::size_t n) {
    if (c == Coding::kZstd) return ZSTD_compressBound(n);
    if (c == Coding::kDcz) return kDczHeaderSize + ZSTD_compressBound(n);
    // libdeflate's bound with a NULL compressor is valid for every level; add the gzip/zlib
    // framing (at most 18 bytes).
    return libdeflate_deflate_compress_bound(nullptr, n) + 18;
}

Result<std::size_t> OneShotCompressor::compress(const EncoderParams& params,
                                                std::span<const std::byte> in,
                                                std::span<std::byte> out) {
    EncoderParams p = params;
    p.size_hint = static_cast<std::int64_t>(in.size());
    p.exact_size = true;
    p = tune(p);
    switch (p.coding) {
        case Coding::kGzip:
        case Coding::kDeflate: {
            // zlib's level N is libdeflate's N: about as many bytes (at 6: median 1.001x zlib's,
            // 0.99x in total, up to 1.28x on some packed data) for half the CPU. One level up
            // would stay within zlib's bytes on nearly every file but costs more than it saves
            // (bench/results/gzip_levels.md).
            if (deflate_ == nullptr || deflate_level_ != p.level) {
                if (deflate_ != nullptr) libdeflate_free_compressor(deflate_);
                deflate_ = libdeflate_alloc_compressor(p.level);
                deflate_level_ = p.level;
            }
            libdeflate_compressor* c = deflate_;
            if (c == nullptr) return Status{Code::kOutOfMemory, "libdeflate: cannot allocate"};
            const std::size_t n =
                p.coding == Coding::kGzip
                    ? libdeflate_gzip_compress(c, in.data(), in.size(), out.data(), out.size())
                    : libdeflate_zlib_compress(c, in.data(), in.size(), out.data(), out.size());
            if (n == 0) return Status{Code::kLibraryError, "libdeflate: output buffer too small"};
            return n;
        }
        case Coding::kZstd: {
            // A context of its own for every body (see the class comment in mc/oneshot.h).
            const ZstdContext zstd;
            ZSTD_CCtx* cctx = zstd.cctx;
            if (cctx == nullptr) return Status{Code::kOutOfMemory, "zstd: cannot create context"};
            std::size_t rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, p.level);
            // RFC 9659: at most an 8 MiB window; tune() sized it to the body.
            if (!ZSTD_isError(rc))
                rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, p.window_log);
            if (ZSTD_isError(rc)) return Status{Code::kInvalidArgument, ZSTD_getErrorName(rc)};
            const std::size_t n =
                ZSTD_compress2(cctx, out.data(), out.size(), in.data(), in.size());
            if (ZSTD_isError(n)) return Status{Code::kLibraryError, ZSTD_getErrorName(n)};
            return n;
        }
        case Coding::kDcz: {
            // RFC 9842 §4: the hash in a skippable frame, then a frame against the dictionary.
            if (p.dictionary == nullptr)
                return Status{Code::kInvalidArgument, "dcz: no dictionary"};
            if (out.size() < kDczHeaderSize) return Status{Code::kLibraryError, "dcz: no room"};
            const ZstdContext zstd;
            ZSTD_CCtx* cctx = zstd.cctx;
            if (cctx == nullptr) return Status{Code::kOutOfMemory, "zstd: cannot create context"};
            if (Status st = setup_dcz(cctx, p); !st.is_ok()) return st;
            const auto header = dcz_header(p.dictionary->hash());
            std::copy(header.begin(), header.end(), out.begin());
            const std::size_t n = ZSTD_compress2(cctx, out.data() + kDczHeaderSize,
                                                 out.size() - kDczHeaderSize, in.data(), in.size());
            if (ZSTD_isError(n)) return Status{Code::kLibraryError, ZSTD_getErrorName(n)};
            return kDczHeaderSize + n;
        }
        case Coding::kBrotli:
        case Coding::kIdentity: break;
    }
    return Status{Code::kInvalidArgument, "no one-shot path for this coding"};
}

}  // namespace mc
