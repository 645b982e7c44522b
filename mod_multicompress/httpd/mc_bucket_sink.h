// SPDX-License-Identifier: Apache-2.0
// An mc::Sink over bucket memory: the encoder writes straight into a buffer that then becomes a
// heap bucket without a copy.
#pragma once

#include <apr_buckets.h>

#include <cstddef>
#include <string>

#include "mc/alloc.h"
#include "mc/sink.h"

namespace mc::httpd {

class BucketSink final : public mc::Sink {
public:
    BucketSink(apr_bucket_brigade* out, std::size_t chunk) : out_(out), chunk_(chunk) {}
    ~BucketSink() override;
    BucketSink(const BucketSink&) = delete;
    BucketSink& operator=(const BucketSink&) = delete;

    std::span<std::byte> reserve() override;
    mc::Status commit(std::size_t used) override;

    /// Appends what the current buffer holds to the brigade as a heap bucket. A buffer less than
    /// half full (a flush, the end of a body) is copied into a block of its own size and kept for
    /// the next output: what a flush leaves queued downstream is what it carries, not a chunk.
    void seal();
    /// Bytes added to the brigade (sealed) since the last reset_pending().
    [[nodiscard]] std::size_t pending() const { return pending_; }
    void reset_pending() { pending_ = 0; }
    /// Also keeps a copy of everything sealed in `copy`, until it would exceed `limit` bytes
    /// (then the copy is dropped and copying stops). Used to fill the cache from a live response.
    void copy_to(mc::MemString* copy, std::size_t limit) {
        copy_ = copy;
        copy_limit_ = limit;
    }
    [[nodiscard]] bool copying() const { return copy_ != nullptr; }

private:
    /// The bucket's free function for buffers from allocate().
    [[nodiscard]] apr_bucket* heap_bucket(char* data, std::size_t n, bool mapped);

    apr_bucket_brigade* out_;
    std::size_t chunk_;
    char* buf_ = nullptr;
    bool buf_mapped_ = false;  ///< buf_ is from mc::mem_alloc (chunks of kMapThreshold and more)
    std::size_t used_ = 0;
    std::size_t pending_ = 0;
    mc::MemString* copy_ = nullptr;
    std::size_t copy_limit_ = 0;
};

}  // namespace mc::httpd
