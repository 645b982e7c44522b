// SPDX-License-Identifier: Apache-2.0
// Reading a response's buckets (mc_brigade.h).
#include "mc_brigade.h"

namespace mc::httpd {
namespace {

// A FILE bucket (the default handler's) is read by mapping the file (EnableMMAP): an mmap and a
// munmap per response, and the munmap's TLB shootdown interrupts the other cores. For a small
// file one read() is much cheaper (perf on a 2.5 KB page: munmap alone was 8% of the server's
// CPU), so files up to kReadNotMapBytes are read instead. A file read goes in pieces of
// APR_BUCKET_BUFF_SIZE (8000 bytes), so this stays at a few reads.
constexpr apr_size_t kReadNotMapBytes = 16 * 1024;

}  // namespace

apr_status_t read_bucket(apr_bucket* e, const char** data, apr_size_t* len, apr_read_type_e block) {
    if (APR_BUCKET_IS_FILE(e) && e->length <= kReadNotMapBytes) apr_bucket_file_enable_mmap(e, 0);
    return apr_bucket_read(e, data, len, block);
}

apr_off_t whole_body_length(apr_bucket_brigade* bb, bool& plain) {
    plain = false;
    if (!APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb))) return -1;
    apr_off_t len = 0;
    bool only_data = true;
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (e->length == static_cast<apr_size_t>(-1)) return -1;  // a pipe or socket: streaming
        if (APR_BUCKET_IS_METADATA(e) && e != APR_BRIGADE_LAST(bb)) only_data = false;
        len += static_cast<apr_off_t>(e->length);
    }
    plain = only_data;
    return len;
}

}  // namespace mc::httpd
