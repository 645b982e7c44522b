// SPDX-License-Identifier: Apache-2.0
// The whole-body path: a body that arrives whole is compressed in one call with a pooled
// one-shot compressor, large ones behind a per-child gate; and the child's idle trim.
#include "mc_whole_body.h"

#include <http_log.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <semaphore>
#include <thread>
#include <vector>

#include "mc/alloc.h"
#include "mc/oneshot.h"
#include "mc_brigade.h"
#include "mc_counters.h"
#include "mc_log.h"
#include "mc_pool.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// Whole bodies of at least kGateMinBytes are compressed by at most as many threads of a child at
// once as the machine has cores. Compressing them is CPU-bound, so more at once only adds
// memory: every one holds a window of up to 4 MiB and its hash tables (256 slow br-4 downloads
// of a 1.7 MB file held 2.2 GB at once without it, bench/). Smaller bodies never wait. A gated
// compression passes nothing on while it holds its slot (a whole body without FLUSH buckets),
// so no slot ever waits for a client.
constexpr apr_off_t kGateMinBytes = 256 * 1024;
constexpr std::ptrdiff_t kGateMaxSlots = 64;
class CompressionGate {
public:
    CompressionGate()
        : sem_(std::clamp<std::ptrdiff_t>(std::thread::hardware_concurrency(), 2, kGateMaxSlots)) {}
    void acquire() {
        if (sem_.try_acquire()) return;
        count(mc::metrics::Event::kGateWait);
        sem_.acquire();
    }
    void release() { sem_.release(); }

private:
    std::counting_semaphore<kGateMaxSlots> sem_;
};

// Created per child in whole_body_child_init, shared by its threads.
CompressionGate* g_gate = nullptr;

// One-shot compressors shared by the threads of a child process: a thread takes one for a body
// and gives it back, so libdeflate's compressor is allocated once, not once per thread (event MPM
// children run dozens of threads) nor per body. At most kPoolSize are kept; more are made when
// needed and freed after. (zstd takes a new context for every body: see mc/oneshot.h.)
class CompressorPool {
public:
    static constexpr std::size_t kPoolSize = 4;

    std::unique_ptr<mc::OneShotCompressor> take() {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            if (!free_.empty()) {
                auto c = std::move(free_.back());
                free_.pop_back();
                return c;
            }
        }
        return std::make_unique<mc::OneShotCompressor>();
    }

    void give_back(std::unique_ptr<mc::OneShotCompressor> c) {
        const std::lock_guard<std::mutex> lock(mu_);
        if (free_.size() < kPoolSize) free_.push_back(std::move(c));
    }

    /// Frees the kept compressors (idle trim); the next bodies make new ones.
    void clear() {
        std::vector<std::unique_ptr<mc::OneShotCompressor>> drop;
        {
            const std::lock_guard<std::mutex> lock(mu_);
            drop.swap(free_);
        }
    }

private:
    std::mutex mu_;
    std::vector<std::unique_ptr<mc::OneShotCompressor>> free_;
};

// Created per child in whole_body_child_init, read-only afterwards (the pool locks itself).
CompressorPool* g_compressors = nullptr;

// A child that was busy and then saw no compression for this long frees its pooled compressors
// and gives malloc's free memory back (mc::mem_trim): what a burst left in the arenas of the
// child's threads is returned when it goes quiet, not kept until the child exits.
constexpr std::chrono::milliseconds kIdleTrimTick{1000};

// The free function of heap buckets over mc::mem_alloc blocks.
void free_mapped(void* p) {
    mc::mem_free(p);
}

}  // namespace

void GateSlot::acquire_for(apr_off_t body_bytes) {
    if (g_gate == nullptr || held_ || body_bytes < kGateMinBytes) return;
    g_gate->acquire();
    held_ = true;
}

void GateSlot::release() {
    if (!held_) return;
    g_gate->release();
    held_ = false;
}

apr_status_t compress_body(request_rec* r, const mc::EncoderParams& params, apr_bucket_brigade* bb,
                           GateSlot& gate, std::uint64_t& cpu_ns, WholeBody& result) {
    std::span<const std::byte> input;
    std::size_t total = 0;
    int pieces = 0;
    // A file over 256 KiB is copied with pread() into the joined block below, not mapped; the
    // block is sized from the buckets' lengths (a whole body: every one is known).
    bool large_file = false;
    std::size_t known = 0;
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (APR_BUCKET_IS_METADATA(e)) continue;
        large_file = large_file || is_large_file(e);
        known += e->length;
    }
    if (large_file) total = known;
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb) && !large_file;
         e = APR_BUCKET_NEXT(e)) {
        if (APR_BUCKET_IS_METADATA(e)) continue;
        const char* data = nullptr;
        apr_size_t len = 0;
        if (apr_status_t rv = read_bucket(e, &data, &len, APR_BLOCK_READ); rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                          MC_LOGNO(00009) "reading the response failed");
            return rv;
        }
        if (len == 0) continue;
        if (++pieces == 1) input = {reinterpret_cast<const std::byte*>(data), len};
        total += len;
    }
    // A body in several buckets, or with a large file, is joined first, in a block mapped on its
    // own (mc/alloc.h): buckets read above only return their memory when read again.
    std::unique_ptr<void, void (*)(void*)> joined(nullptr, free_mapped);
    if (pieces > 1 || large_file) {
        joined.reset(mc::mem_alloc(total));
        if (!joined) throw std::bad_alloc();
        auto* at = static_cast<char*>(joined.get());
        for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
             e = APR_BUCKET_NEXT(e)) {
            if (APR_BUCKET_IS_METADATA(e)) continue;
            const std::size_t room =
                total - static_cast<std::size_t>(at - static_cast<char*>(joined.get()));
            const char* data = nullptr;
            apr_size_t len = e->length;
            apr_status_t rv = APR_SUCCESS;
            if (is_large_file(e) && len <= room) {
                rv = read_file_into(e, 0, at, len);
                data = at;
            } else {
                rv = read_bucket(e, &data, &len, APR_BLOCK_READ);
            }
            if (rv != APR_SUCCESS) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                              MC_LOGNO(00180) "reading the response failed");
                return rv;
            }
            if (len > room) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                              MC_LOGNO(00181) "response bucket grew between two reads");
                return APR_EGENERAL;
            }
            if (len > 0 && data != at) std::memcpy(at, data, len);
            at += len;
        }
        input = {static_cast<const std::byte*>(joined.get()),
                 static_cast<std::size_t>(at - static_cast<char*>(joined.get()))};
    }

    std::unique_ptr<mc::OneShotCompressor> compressor =
        g_compressors != nullptr ? g_compressors->take()
                                 : std::make_unique<mc::OneShotCompressor>();
    const std::size_t cap = mc::OneShotCompressor::bound(params.coding, input.size());
    // The output of a large body is mapped on its own (mc/alloc.h), not taken from malloc's
    // arenas through the connection's allocator.
    const bool mapped = cap >= mc::kMapThreshold;
    auto* out = static_cast<char*>(mapped ? mc::mem_alloc(cap)
                                          : apr_bucket_alloc(cap, r->connection->bucket_alloc));
    if (out == nullptr) throw std::bad_alloc();
    const std::uint64_t t0 = thread_cpu_ns();
    const auto done = compressor->compress(params, input, {reinterpret_cast<std::byte*>(out), cap});
    cpu_ns += thread_cpu_ns() - t0;
    if (g_compressors != nullptr) g_compressors->give_back(std::move(compressor));
    gate.release();
    joined.reset();
    void (*free_out)(void*) = mapped ? free_mapped : apr_bucket_free;
    if (!done.is_ok()) {
        free_out(out);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00011) "%s compression failed: %s",
                      mc::coding_token(params.coding).data(), done.status().reason());
        return APR_EGENERAL;
    }
    const std::size_t n = done.value();
    if (mapped && n <= cap / 2) {
        // The block of the bound's size may be one the cache kept from a body (every page of it
        // touched): the compressed bytes move to one of their own size, so a slow client's
        // connection keeps what is left to send, not a block the size of the file.
        const bool small = n < mc::kMapThreshold;
        auto* fit = static_cast<char*>(small ? apr_bucket_alloc(n, r->connection->bucket_alloc)
                                             : mc::mem_alloc(n));
        if (fit == nullptr) {
            free_out(out);
            throw std::bad_alloc();
        }
        std::memcpy(fit, out, n);
        free_out(out);
        out = fit;
        free_out = small ? apr_bucket_free : free_mapped;
    }
    result.bucket = apr_bucket_heap_create(out, n, free_out, r->connection->bucket_alloc);
    result.data = out;
    result.size = n;
    result.in_size = input.size();
    return APR_SUCCESS;
}

void whole_body_child_init(apr_pool_t* pchild, server_rec* s) noexcept {
    try {
        g_compressors = pool_new<CompressorPool>(pchild);
        g_gate = pool_new<CompressionGate>(pchild);
        // Destroyed (stopped and joined) before the pool above, registered earlier.
        pool_new<mc::IdleTrimmer>(pchild, kIdleTrimTick, [] {
            if (g_compressors != nullptr) g_compressors->clear();
            mc::mem_trim();
        });
    } catch (...) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     MC_LOGNO(00012) "cannot create the compressor pool");
    }
}

}  // namespace mc::httpd
