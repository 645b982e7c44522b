// SPDX-License-Identifier: Apache-2.0
// BucketSink: zero-copy output buffers handed to the brigade as heap buckets.
#include "mc_bucket_sink.h"

namespace mc::httpd {

BucketSink::~BucketSink() {
    if (buf_ != nullptr) apr_bucket_free(buf_);
}

std::span<std::byte> BucketSink::reserve() {
    if (buf_ != nullptr && used_ == chunk_) seal();
    if (buf_ == nullptr) {
        buf_ = static_cast<char*>(apr_bucket_alloc(chunk_, out_->bucket_alloc));
        used_ = 0;
    }
    return {reinterpret_cast<std::byte*>(buf_ + used_), chunk_ - used_};
}

mc::Status BucketSink::commit(std::size_t used) {
    used_ += used;
    if (used_ == chunk_) seal();
    return mc::Status::ok();
}

void BucketSink::seal() {
    if (buf_ == nullptr || used_ == 0) return;
    // The bucket takes ownership of the buffer and frees it with apr_bucket_free.
    apr_bucket* b = apr_bucket_heap_create(buf_, used_, apr_bucket_free, out_->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(out_, b);
    pending_ += used_;
    if (copy_ != nullptr) {
        if (copy_->size() + used_ > copy_limit_) {
            copy_->clear();
            copy_ = nullptr;
        } else {
            copy_->append(buf_, used_);
        }
    }
    buf_ = nullptr;
    used_ = 0;
}

}  // namespace mc::httpd
