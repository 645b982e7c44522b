// SPDX-License-Identifier: Apache-2.0
// The whole-body path: one-shot compression of a body that is all in hand, its compressor pool
// and the per-child gate that bounds how many large bodies are compressed at once.
#pragma once

#include <httpd.h>
#include <apr_buckets.h>

#include <cstddef>
#include <cstdint>

#include "mc/params.h"

namespace mc::httpd {

/// A body that arrives whole with EOS in the first brigade, up to this size, is compressed
/// before anything is passed on, so the response can carry its compressed Content-Length.
constexpr apr_off_t kWholeBodyLimit = 4 * 1024 * 1024;

/// A held slot of the child's compression gate, given back by release() or at the latest when
/// destroyed. Bodies under 256 KiB never take one.
class GateSlot {
public:
    GateSlot() = default;
    GateSlot(const GateSlot&) = delete;
    GateSlot& operator=(const GateSlot&) = delete;
    ~GateSlot() { release(); }

    void acquire_for(apr_off_t body_bytes);
    void release();

private:
    bool held_ = false;
};

/// The compressed body, in a heap bucket not yet in any brigade.
struct WholeBody {
    apr_bucket* bucket = nullptr;
    const char* data = nullptr;  ///< the bucket's bytes
    std::size_t size = 0;
    std::size_t in_size = 0;  ///< bytes of the uncompressed body
};

/// The whole body is in `bb` (data buckets and EOS): compresses it in one call with a pooled
/// compressor, straight into the memory of the bucket that carries it. Releases `gate` once the
/// library is done; adds the thread CPU time spent to `cpu_ns`. `bb` is left as it was.
apr_status_t compress_body(request_rec* r, const mc::EncoderParams& params, apr_bucket_brigade* bb,
                           GateSlot& gate, std::uint64_t& cpu_ns, WholeBody& result);

/// child_init hook: the child's compressor pool, gate and idle trim.
void whole_body_child_init(apr_pool_t* pchild, server_rec* s) noexcept;

}  // namespace mc::httpd
