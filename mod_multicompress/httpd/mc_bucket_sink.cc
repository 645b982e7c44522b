// SPDX-License-Identifier: Apache-2.0
// BucketSink: zero-copy output buffers handed to the brigade as heap buckets.
#include "mc_bucket_sink.h"

#include <cstring>
#include <new>

#include "mc/alloc.h"

namespace mc::httpd {
namespace {

void free_mapped(void* p) {
    mc::mem_free(p);
}

}  // namespace

BucketSink::~BucketSink() {
    if (buf_ == nullptr) return;
    if (buf_mapped_) {
        mc::mem_free(buf_);
    } else {
        apr_bucket_free(buf_);
    }
}

std::span<std::byte> BucketSink::reserve() {
    if (buf_ != nullptr && used_ == chunk_) seal();
    if (buf_ == nullptr) {
        // Chunks of kMapThreshold and more (MultiCompressBufferSize up to 16 MiB) are mapped on
        // their own: through the connection's allocator they would come from malloc's arenas.
        buf_mapped_ = chunk_ >= mc::kMapThreshold;
        buf_ = static_cast<char*>(buf_mapped_ ? mc::mem_alloc(chunk_)
                                              : apr_bucket_alloc(chunk_, out_->bucket_alloc));
        if (buf_ == nullptr) throw std::bad_alloc();
        used_ = 0;
    }
    return {reinterpret_cast<std::byte*>(buf_ + used_), chunk_ - used_};
}

mc::Status BucketSink::commit(std::size_t used) {
    used_ += used;
    if (used_ == chunk_) seal();
    return mc::Status::ok();
}

apr_bucket* BucketSink::heap_bucket(char* data, std::size_t n, bool mapped) {
    // The bucket takes ownership of the buffer and frees it with the matching function.
    return apr_bucket_heap_create(data, n, mapped ? free_mapped : apr_bucket_free,
                                  out_->bucket_alloc);
}

void BucketSink::seal() {
    if (buf_ == nullptr || used_ == 0) return;
    apr_bucket* b = nullptr;
    const bool keep = used_ * 2 < chunk_;
    if (keep) {
        // Partly filled: copy out what it holds, keep the buffer.
        if (used_ >= mc::kMapThreshold) {
            auto* copy = static_cast<char*>(mc::mem_alloc(used_));
            if (copy == nullptr) throw std::bad_alloc();
            std::memcpy(copy, buf_, used_);
            b = heap_bucket(copy, used_, true);
        } else {
            // A null free function makes APR copy the bytes into bucket memory.
            b = apr_bucket_heap_create(buf_, used_, nullptr, out_->bucket_alloc);
        }
    } else {
        b = heap_bucket(buf_, used_, buf_mapped_);
    }
    APR_BRIGADE_INSERT_TAIL(out_, b);
    pending_ += used_;
    if (copy_ != nullptr) {
        if (copy_->size() + used_ > copy_limit_) {
            mc::MemString().swap(*copy_);  // too large for the cache: free it now
            copy_ = nullptr;
        } else {
            copy_->append(buf_, used_);
        }
    }
    if (!keep) buf_ = nullptr;  // the bucket owns it now
    used_ = 0;
}

}  // namespace mc::httpd
