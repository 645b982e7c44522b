// SPDX-License-Identifier: Apache-2.0
// Reading a response's buckets (mc_brigade.h).
#include "mc_brigade.h"

#include <http_core.h>
#include <http_log.h>
#include <apr_portable.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// A FILE bucket (the default handler's) is read by mapping the file (EnableMMAP): an mmap and a
// munmap per response, and the munmap's TLB shootdown interrupts every other core running a
// thread of the child (on a 2-vCPU guest that was most of the difference to nginx for a br-4
// response of a 31 KB stylesheet: 811 against 394 µs of CPU per response read in one read()).
// So a file of up to kReadWholeBytes that the module reads is never mapped, whatever EnableMMAP
// says: one read() into one heap bucket (no pieces, no join copy). A larger file is not turned
// into heap buckets (its bytes would stay as anonymous memory in the connection's allocator, up
// to MaxMemFree, for as long as a slow client keeps the connection: 256 slow downloads of a
// 1.7 MB file, +560 MiB against +95 MiB mapped): where the module reads a larger one whole or in
// part (a whole body, the saving probe), it copies the bytes with pread() into memory of its own
// (read_file_into); elsewhere it is left as EnableMMAP says. (kReadWholeBytes: mc_brigade.h.)
void read_unmapped(apr_bucket* e) {
    if (e->length > kReadWholeBytes) return;
    apr_bucket_file_enable_mmap(e, 0);
    // APR-util 1.6 (the call behind httpd's ReadBufferSize); it rounds down to what the
    // connection's allocator hands out whole.
    apr_bucket_file_set_buf_size(e, e->length);
}

}  // namespace

bool is_large_file(const apr_bucket* e) {
    return APR_BUCKET_IS_FILE(e) && e->length > kReadWholeBytes;
}

void log_read_failure(request_rec* r, apr_status_t rv) {
    ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, MC_LOGNO(00331) "reading the response failed");
}

apr_status_t read_file_into(const apr_bucket* e, apr_size_t from, char* dst, apr_size_t n) {
    const auto* file = static_cast<const apr_bucket_file*>(e->data);
    apr_os_file_t fd = -1;
    if (apr_status_t rv = apr_os_file_get(&fd, file->fd); rv != APR_SUCCESS) return rv;
    if (from > e->length) return APR_EINVAL;
    n = std::min<apr_size_t>(n, e->length - from);
    apr_off_t at = e->start + static_cast<apr_off_t>(from);
    while (n > 0) {
        const ssize_t got = pread(fd, dst, n, at);
        if (got < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (got == 0) return APR_EOF;  // the file was cut short after its bucket was made
        dst += got;
        n -= static_cast<apr_size_t>(got);
        at += got;
    }
    return APR_SUCCESS;
}

apr_status_t read_bucket(apr_bucket* e, const char** data, apr_size_t* len, apr_read_type_e block) {
    if (APR_BUCKET_IS_FILE(e)) read_unmapped(e);
    return apr_bucket_read(e, data, len, block);
}

apr_bucket* insert_file_unmapped(apr_bucket_brigade* bb, apr_file_t* fd, apr_off_t length,
                                 apr_pool_t* pool) {
    apr_bucket* const before = APR_BRIGADE_LAST(bb);  // the sentinel when empty
    apr_bucket* last = apr_brigade_insert_file(bb, fd, 0, length, pool);
    // apr_brigade_insert_file splits files over 1 GiB into several buckets: each is read so.
    for (apr_bucket* e = APR_BUCKET_NEXT(before); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (APR_BUCKET_IS_FILE(e)) read_unmapped(e);
    }
    return last;
}

void flush_if_small(apr_bucket_brigade* bb, apr_size_t body_bytes) {
    constexpr apr_size_t kCoreHoldsBelow = 4096;  // THRESHOLD_MIN_WRITE
    if (body_bytes < kCoreHoldsBelow)
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(bb->bucket_alloc));
}

apr_int32_t default_handler_open_flags(const request_rec* r) {
    const auto* core =
        static_cast<const core_dir_config*>(ap_get_core_module_config(r->per_dir_config));
    // server/core.c default_handler: sendfile only where EnableSendfile is On (its default, Off,
    // exists for file systems where sendfile is broken: NFS, CIFS, some FUSE mounts).
    return APR_READ | APR_BINARY | AP_SENDFILE_ENABLED(core->enable_sendfile);
}

bool ends_body(apr_bucket_brigade* bb, const apr_bucket* e) {
    const apr_bucket* next = APR_BUCKET_NEXT(e);
    return next != APR_BRIGADE_SENTINEL(bb) && APR_BUCKET_IS_EOS(next);
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
