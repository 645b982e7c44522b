// SPDX-License-Identifier: Apache-2.0
// Content-Digest and Repr-Digest of compressed responses: checked against the body the handler
// sent, made again for the bytes sent (mc/digest_fields.h does the parsing and hashing).
#include "mc_digest.h"

#include <apr_strings.h>
#include <http_log.h>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "mc/digest_fields.h"
#include "mc_brigade.h"
#include "mc_log.h"
#include "mc_pool.h"
#include "mc_response.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// The handler's fields kept between keep_digests_of_* and put_digests, in r->pool.
constexpr const char* kKeptKey = "multicompress-digests";
constexpr std::array<const char*, 2> kFields = {"Content-Digest", "Repr-Digest"};
constexpr std::size_t kReadBlock = 64 * 1024;

struct Kept {
    std::array<std::optional<mc::DigestField>, kFields.size()> fields;

    [[nodiscard]] mc::DigestAlgorithms algorithms() const {
        mc::DigestAlgorithms all = 0;
        for (const auto& f : fields) {
            if (f) all = static_cast<mc::DigestAlgorithms>(all | f->algorithms());
        }
        return all;
    }
};

// The handler's fields, parsed; nullptr when there is nothing to make again.
Kept* parse_fields(request_rec* r) {
    Kept* kept = nullptr;
    for (std::size_t i = 0; i < kFields.size(); ++i) {
        const char* value = response_fields(r, kFields[i]);
        if (value == nullptr) continue;
        auto parsed = mc::parse_digest_field(value);
        if (!parsed.is_ok()) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                          MC_LOGNO(00300) "dropping the response's %s: %s (not RFC 9530 syntax)",
                          kFields[i], parsed.status().reason());
            continue;
        }
        if (parsed.value().members.empty()) {
            ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                          "dropping the response's %s: no sha-256 or sha-512 in it", kFields[i]);
            continue;
        }
        if (kept == nullptr) kept = pool_new<Kept>(r->pool);
        kept->fields[i] = std::move(parsed).value();
    }
    return kept;
}

// Keeps the fields that match `identity` (the digests of the body the handler sent).
void keep_matching(request_rec* r, Kept* kept, const mc::DigestValues& identity) {
    bool any = false;
    for (std::size_t i = 0; i < kFields.size(); ++i) {
        auto& f = kept->fields[i];
        if (!f) continue;
        if (!mc::digest_field_matches(*f, identity)) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                          MC_LOGNO(00301) "dropping the response's %s: it does not match the "
                                          "body it came with",
                          kFields[i]);
            f.reset();
            continue;
        }
        any = true;
    }
    if (any) apr_pool_userdata_setn(kept, kKeptKey, nullptr, r->pool);
}

// The kept fields, unless the headers already went out (a FLUSH in a held body passed them).
Kept* kept_of(request_rec* r) {
    if (r->sent_bodyct != 0) return nullptr;
    void* kept = nullptr;
    apr_pool_userdata_get(&kept, kKeptKey, r->pool);
    return static_cast<Kept*>(kept);
}

// Hashes the file's first `length` bytes (or to its end with length < 0); false on a read error.
bool digest_file(apr_file_t* fd, apr_off_t length, mc::Digester& d) {
    auto buf = std::make_unique<char[]>(kReadBlock);
    apr_off_t left = length;
    while (length < 0 || left > 0) {
        apr_size_t n = kReadBlock;
        if (length >= 0 && static_cast<apr_off_t>(n) > left) n = static_cast<apr_size_t>(left);
        const apr_status_t rv = apr_file_read(fd, buf.get(), &n);
        if (rv == APR_EOF && length < 0) break;
        if (rv != APR_SUCCESS) return false;
        d.update(std::string_view(buf.get(), n));
        left -= static_cast<apr_off_t>(n);
    }
    return true;
}

void set_fields(request_rec* r, const Kept& kept, mc::Digester& d) {
    const mc::DigestValues values = d.finish();
    for (std::size_t i = 0; i < kFields.size(); ++i) {
        if (!kept.fields[i]) continue;
        const std::string v = mc::format_digest_field(*kept.fields[i], values);
        apr_table_unset(r->err_headers_out, kFields[i]);
        if (v.empty()) {
            apr_table_unset(r->headers_out, kFields[i]);
            continue;
        }
        apr_table_set(r->headers_out, kFields[i], v.c_str());
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "digests made again for the compressed body");
}

// Feeds every data bucket of `bb` to `d`; false when one cannot be read. A file over 256 KiB is
// copied in pieces, not mapped (mc_brigade.h), as compression reads it after this.
bool digest_brigade(request_rec* r, apr_bucket_brigade* bb, mc::Digester& d) {
    const auto update = [&d](std::span<const std::byte> in, bool /*last*/) {
        d.update(std::string_view(reinterpret_cast<const char*>(in.data()), in.size()));
        return APR_SUCCESS;
    };
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (APR_BUCKET_IS_METADATA(e)) continue;
        if (is_large_file(e)) {
            if (read_file_in_pieces(r, e, update) != APR_SUCCESS) return false;
            continue;
        }
        const char* data = nullptr;
        apr_size_t len = 0;
        if (read_bucket(e, &data, &len, APR_BLOCK_READ) != APR_SUCCESS) return false;
        d.update(std::string_view(data, len));
    }
    return true;
}

}  // namespace

void keep_digests_of_body(request_rec* r, apr_bucket_brigade* bb) {
    Kept* kept = parse_fields(r);
    if (kept == nullptr) return;
    mc::Digester d(kept->algorithms());
    if (digest_brigade(r, bb, d)) keep_matching(r, kept, d.finish());  // else: not kept
}

void keep_digests_of_file(request_rec* r) {
    Kept* kept = parse_fields(r);
    if (kept == nullptr) return;
    apr_file_t* fd = nullptr;
    if (apr_file_open(&fd, r->filename, APR_READ | APR_BINARY, 0, r->pool) != APR_SUCCESS) return;
    mc::Digester d(kept->algorithms());
    const bool read = digest_file(fd, -1, d);
    apr_file_close(fd);
    if (read) keep_matching(r, kept, d.finish());
}

void put_digests(request_rec* r, std::string_view body) {
    const Kept* kept = kept_of(r);
    if (kept == nullptr) return;
    mc::Digester d(kept->algorithms());
    d.update(body);
    set_fields(r, *kept, d);
}

void put_digests(request_rec* r, apr_bucket_brigade* bb) {
    const Kept* kept = kept_of(r);
    if (kept == nullptr) return;
    mc::Digester d(kept->algorithms());
    if (digest_brigade(r, bb, d)) set_fields(r, *kept, d);  // else: dropped
}

void put_digests(request_rec* r, apr_file_t* fd, apr_off_t length) {
    const Kept* kept = kept_of(r);
    if (kept == nullptr) return;
    mc::Digester d(kept->algorithms());
    apr_off_t start = 0;
    const bool read = digest_file(fd, length, d);
    apr_file_seek(fd, APR_SET, &start);
    if (read) set_fields(r, *kept, d);
}

}  // namespace mc::httpd
