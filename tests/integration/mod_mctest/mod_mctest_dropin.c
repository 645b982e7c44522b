/* SPDX-License-Identifier: Apache-2.0 */
/* mod_mctest_dropin: test-only handlers for the drop-in tests (tests/integration/test_3[1-9]x_*.py),
 * ideas from mod_h2test and Debian's mod_bucketeer. Never load it in production. It lives
 * beside mod_mctest.c (the "mctest" handler of test_650) and can be loaded with it.
 *
 * SetHandler mctest-echo      reads the request body with ap_get_brigade until EOS (never
 *                             trusting Content-Length, which the DEFLATE input filter removes)
 *   ?mode=echo (default)      200, the body as read (application/octet-stream)
 *   ?mode=sum                 200, text "length=N\nsha256=HEX\n" only (bounded memory)
 *   Both set X-Mctest-Length, X-Mctest-Sha256, and X-Mctest-Request-CE / -CL: the request's
 *   Content-Encoding / Content-Length after the body was read ("-" when absent). A read error
 *   returns ap_map_http_request_error(rv, HTTP_BAD_REQUEST), so 413 and 400 are visible.
 *
 * SetHandler mctest-shapes    sends a body in the bucket shape the query asks for
 *   shape=heap (default)      the body in one heap bucket, EOS in the same brigade
 *         bytes1              1-byte heap buckets (pass=K: ap_pass_brigade every K buckets)
 *         flush               parts=N pieces, each followed by FLUSH, a pass and delay=MS sleep
 *         file                file=REL (under the document root) as a file bucket, from off=N,
 *                             len=N bytes (default: to the end)
 *         mmap                the same through an mmap bucket (both: eos=alone passes EOS
 *                             in a brigade of its own)
 *         eosalone            the data in one brigade (chunk=N bytes per bucket), EOS alone
 *         aftereos            the body and EOS, then a brigade with more data and another EOS
 *         big                 mb=N MiB in 64 KiB heap buckets, one pass per bucket
 *         range               status 206 with Content-Range: bytes 0-(size-1)/(2*size)
 *   size=N                    body length (default 20000); the body is mc_bodies.mctest_body(N)
 *   status=204|304            no body (304 with the etag= value or "mctest-dropin")
 *   ct=TYPE etag=V cc=V ce=V ceerr=V  Content-Type, ETag, Cache-Control, Content-Encoding in
 *                             headers_out, Content-Encoding in err_headers_out (URL-decoded)
 *   cd=V rd=V ud=V cderr=V    Content-Digest, Repr-Digest, Unencoded-Digest in headers_out,
 *                             Content-Digest in err_headers_out (URL-decoded)
 *   cl=1                      Content-Length before the body
 *   cond=1                    evaluate If-None-Match & co. with ap_meets_conditions (returns
 *                             its 304 / 412 like the default handler)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* httpd.h first: the other httpd headers depend on it */
#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"

#include "apr_buckets.h"
#include "apr_file_io.h"
#include "apr_mmap.h"
#include "apr_strings.h"
#include "apr_time.h"

#include "dropin_sha256.h"

module AP_MODULE_DECLARE_DATA mctest_dropin_module;

#define DROPIN_LINE_LEN 60 /* "%07ld mctest: the quick brown fox jumps over the lazy dog\n" */
#define DROPIN_MAX_SIZE ((apr_off_t)512 * 1024 * 1024)
#define DROPIN_ECHO_MAX ((apr_off_t)64 * 1024 * 1024)
#define DROPIN_BIG_BUCKET 65536

/* ---- query parsing */

static apr_table_t *parse_args(request_rec *r) {
    apr_table_t *t = apr_table_make(r->pool, 8);
    char *args, *state = NULL, *tok;
    if (!r->args) return t;
    args = apr_pstrdup(r->pool, r->args);
    for (tok = apr_strtok(args, "&", &state); tok; tok = apr_strtok(NULL, "&", &state)) {
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = '\0';
            ap_unescape_url(eq + 1);
            apr_table_setn(t, tok, eq + 1);
        } else {
            apr_table_setn(t, tok, "1");
        }
    }
    return t;
}

static const char *arg(apr_table_t *t, const char *key, const char *dflt) {
    const char *v = apr_table_get(t, key);
    return v ? v : dflt;
}

static apr_off_t arg_off(apr_table_t *t, const char *key, apr_off_t dflt, apr_off_t max) {
    const char *v = apr_table_get(t, key);
    apr_off_t n = v ? apr_atoi64(v) : dflt;
    if (n < 0) n = 0;
    if (n > max) n = max;
    return n;
}

/* ---- the body: fixed-width lines, so any byte range can be made on its own */

static void fill_body(char *dst, apr_off_t off, apr_size_t len) {
    char line[DROPIN_LINE_LEN + 24];
    apr_size_t done = 0;
    while (done < len) {
        apr_off_t pos = off + (apr_off_t)done;
        long k = (long)(pos / DROPIN_LINE_LEN) % 10000000L; /* 7 digits: 600 MB of lines */
        apr_size_t in_line = (apr_size_t)(pos % DROPIN_LINE_LEN);
        apr_size_t take = DROPIN_LINE_LEN - in_line;
        snprintf(line, sizeof(line), "%07ld mctest: the quick brown fox jumps over the lazy dog\n", k);
        if (take > len - done) take = len - done;
        memcpy(dst + done, line + in_line, take);
        done += take;
    }
}

static apr_bucket *body_bucket(apr_bucket_alloc_t *ba, apr_off_t off, apr_size_t len) {
    char *buf = apr_bucket_alloc(len ? len : 1, ba);
    fill_body(buf, off, len);
    return apr_bucket_heap_create(buf, len, apr_bucket_free, ba);
}

static apr_status_t pass(request_rec *r, apr_bucket_brigade *bb) {
    apr_status_t rv = ap_pass_brigade(r->output_filters, bb);
    apr_brigade_cleanup(bb);
    return rv;
}

/* ---- mctest-echo */

static int echo_handler(request_rec *r) {
    apr_table_t *args = parse_args(r);
    const int sum_only = strcmp(arg(args, "mode", "echo"), "sum") == 0;
    apr_bucket_alloc_t *ba = r->connection->bucket_alloc;
    apr_bucket_brigade *in = apr_brigade_create(r->pool, ba);
    apr_bucket_brigade *body = apr_brigade_create(r->pool, ba);
    dropin_sha256 sha;
    apr_off_t total = 0;
    int seen_eos = 0;
    const char *hex, *ce, *cl;

    dropin_sha256_init(&sha);
    while (!seen_eos) {
        apr_status_t rv = ap_get_brigade(r->input_filters, in, AP_MODE_READBYTES, APR_BLOCK_READ,
                                         65536);
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_INFO, rv, r,
                          "mctest-echo: reading the body failed after %" APR_OFF_T_FMT " bytes",
                          total);
            apr_brigade_cleanup(in);
            return ap_map_http_request_error(rv, HTTP_BAD_REQUEST);
        }
        while (!APR_BRIGADE_EMPTY(in)) {
            apr_bucket *e = APR_BRIGADE_FIRST(in);
            const char *data;
            apr_size_t len;
            if (APR_BUCKET_IS_EOS(e)) {
                seen_eos = 1;
                apr_bucket_delete(e);
                continue;
            }
            if (APR_BUCKET_IS_METADATA(e)) {
                apr_bucket_delete(e);
                continue;
            }
            rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
            if (rv != APR_SUCCESS) {
                apr_brigade_cleanup(in);
                return ap_map_http_request_error(rv, HTTP_BAD_REQUEST);
            }
            dropin_sha256_update(&sha, (const unsigned char *)data, len);
            total += (apr_off_t)len;
            if (sum_only || total > DROPIN_ECHO_MAX) {
                apr_bucket_delete(e);
                continue;
            }
            /* the input filters' buckets may be transient: keep a copy in the request pool */
            APR_BUCKET_REMOVE(e);
            if (apr_bucket_setaside(e, r->pool) != APR_SUCCESS) {
                apr_bucket_destroy(e);
                APR_BRIGADE_INSERT_TAIL(body, apr_bucket_pool_create(apr_pmemdup(r->pool, data, len),
                                                                     len, r->pool, ba));
            } else {
                APR_BRIGADE_INSERT_TAIL(body, e);
            }
        }
    }
    if (!sum_only && total > DROPIN_ECHO_MAX) return HTTP_REQUEST_ENTITY_TOO_LARGE;

    hex = dropin_sha256_hex(&sha, r->pool);
    ce = apr_table_get(r->headers_in, "Content-Encoding");
    cl = apr_table_get(r->headers_in, "Content-Length");
    apr_table_setn(r->headers_out, "X-Mctest-Length", apr_off_t_toa(r->pool, total));
    apr_table_setn(r->headers_out, "X-Mctest-Sha256", hex);
    apr_table_setn(r->headers_out, "X-Mctest-Request-CE", ce ? ce : "-");
    apr_table_setn(r->headers_out, "X-Mctest-Request-CL", cl ? cl : "-");
    if (sum_only) {
        ap_set_content_type(r, "text/plain");
        apr_brigade_cleanup(body);
        const char *text = apr_psprintf(r->pool, "length=%" APR_OFF_T_FMT "\nsha256=%s\n", total, hex);
        APR_BRIGADE_INSERT_TAIL(body, apr_bucket_pool_create(text, strlen(text), r->pool, ba));
    } else {
        ap_set_content_type(r, arg(args, "ct", "application/octet-stream"));
    }
    APR_BRIGADE_INSERT_TAIL(body, apr_bucket_eos_create(ba));
    return pass(r, body) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

/* ---- mctest-shapes */

static void set_headers(request_rec *r, apr_table_t *args) {
    const char *v;
    ap_set_content_type(r, arg(args, "ct", "text/html"));
    if ((v = apr_table_get(args, "etag")) != NULL) apr_table_setn(r->headers_out, "ETag", v);
    if ((v = apr_table_get(args, "cc")) != NULL) apr_table_setn(r->headers_out, "Cache-Control", v);
    if ((v = apr_table_get(args, "ce")) != NULL) {
        apr_table_setn(r->headers_out, "Content-Encoding", v);
    }
    if ((v = apr_table_get(args, "ceerr")) != NULL) {
        apr_table_setn(r->err_headers_out, "Content-Encoding", v);
    }
    if ((v = apr_table_get(args, "cd")) != NULL) apr_table_setn(r->headers_out, "Content-Digest", v);
    if ((v = apr_table_get(args, "rd")) != NULL) apr_table_setn(r->headers_out, "Repr-Digest", v);
    if ((v = apr_table_get(args, "ud")) != NULL) {
        apr_table_setn(r->headers_out, "Unencoded-Digest", v);
    }
    if ((v = apr_table_get(args, "cderr")) != NULL) {
        apr_table_setn(r->err_headers_out, "Content-Digest", v);
    }
}

static int open_doc(request_rec *r, apr_table_t *args, apr_file_t **fd, apr_off_t *off,
                    apr_off_t *len) {
    const char *rel = apr_table_get(args, "file");
    const char *path;
    apr_finfo_t fi;
    apr_status_t rv;
    if (rel == NULL || strstr(rel, "..") != NULL) return HTTP_BAD_REQUEST;
    path = apr_pstrcat(r->pool, ap_document_root(r), "/", rel, NULL);
    rv = apr_file_open(fd, path, APR_FOPEN_READ | APR_FOPEN_BINARY, APR_OS_DEFAULT, r->pool);
    if (rv != APR_SUCCESS) return HTTP_NOT_FOUND;
    if (apr_file_info_get(&fi, APR_FINFO_SIZE, *fd) != APR_SUCCESS) return HTTP_INTERNAL_SERVER_ERROR;
    *off = arg_off(args, "off", 0, fi.size);
    *len = arg_off(args, "len", fi.size - *off, fi.size - *off);
    return OK;
}

static int shapes_handler(request_rec *r) {
    apr_table_t *args = parse_args(r);
    const char *shape = arg(args, "shape", "heap");
    const int status = atoi(arg(args, "status", "200"));
    apr_off_t size = arg_off(args, "size", 20000, DROPIN_MAX_SIZE);
    apr_bucket_alloc_t *ba = r->connection->bucket_alloc;
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, ba);
    apr_off_t off;

    set_headers(r, args);
    if (apr_table_get(args, "cond") != NULL) {
        /* the request's validators against the ETag above, as the default handler does */
        const int st = ap_meets_conditions(r);
        if (st != OK) return st;
    }
    if (status == HTTP_NO_CONTENT || status == HTTP_NOT_MODIFIED) {
        r->status = status;
        if (status == HTTP_NOT_MODIFIED && apr_table_get(r->headers_out, "ETag") == NULL) {
            apr_table_setn(r->headers_out, "ETag", "\"mctest-dropin\"");
        }
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(ba));
        return pass(r, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
    }

    if (strcmp(shape, "file") == 0 || strcmp(shape, "mmap") == 0) {
        apr_file_t *fd = NULL;
        apr_off_t start = 0, len = 0;
        int st = open_doc(r, args, &fd, &start, &len);
        if (st != OK) return st;
        if (apr_table_get(args, "cl")) ap_set_content_length(r, len);
        if (shape[0] == 'f') {
            apr_brigade_insert_file(bb, fd, start, len, r->pool);
        } else {
#if APR_HAS_MMAP
            apr_mmap_t *mm = NULL;
            if (len == 0) return HTTP_BAD_REQUEST;
            /* mmap offsets must be page-aligned: map from 0, the bucket starts at `start` */
            if (apr_mmap_create(&mm, fd, 0, (apr_size_t)(start + len), APR_MMAP_READ, r->pool) !=
                APR_SUCCESS) {
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_mmap_create(mm, start, (apr_size_t)len, ba));
#else
            return HTTP_NOT_IMPLEMENTED;
#endif
        }
        if (apr_table_get(args, "eos") != NULL && pass(r, bb) != APR_SUCCESS) {
            return AP_FILTER_ERROR; /* eos=alone: the length is not known from the first brigade */
        }
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(ba));
        return pass(r, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
    }

    if (strcmp(shape, "big") == 0) {
        size = arg_off(args, "mb", 16, 512) * 1024 * 1024;
    }
    if (apr_table_get(args, "cl")) ap_set_content_length(r, size);

    if (strcmp(shape, "range") == 0) {
        r->status = HTTP_PARTIAL_CONTENT;
        apr_table_setn(r->headers_out, "Content-Range",
                       apr_psprintf(r->pool, "bytes 0-%" APR_OFF_T_FMT "/%" APR_OFF_T_FMT,
                                    size - 1, size * 2));
        APR_BRIGADE_INSERT_TAIL(bb, body_bucket(ba, 0, (apr_size_t)size));
    } else if (strcmp(shape, "bytes1") == 0) {
        const long every = atol(arg(args, "pass", "0"));
        for (off = 0; off < size; ++off) {
            APR_BRIGADE_INSERT_TAIL(bb, body_bucket(ba, off, 1));
            if (every > 0 && (off + 1) % every == 0 && pass(r, bb) != APR_SUCCESS) {
                return AP_FILTER_ERROR;
            }
        }
    } else if (strcmp(shape, "flush") == 0) {
        const apr_off_t parts = arg_off(args, "parts", 2, 1000);
        const apr_off_t delay = arg_off(args, "delay", 500, 10000);
        const apr_off_t step = parts > 0 ? (size + parts - 1) / parts : size;
        for (off = 0; off < size; off += step) {
            const apr_off_t n = size - off < step ? size - off : step;
            APR_BRIGADE_INSERT_TAIL(bb, body_bucket(ba, off, (apr_size_t)n));
            APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(ba));
            if (pass(r, bb) != APR_SUCCESS) return AP_FILTER_ERROR;
            if (off + n < size) apr_sleep(apr_time_from_msec(delay));
        }
    } else if (strcmp(shape, "eosalone") == 0 || strcmp(shape, "big") == 0) {
        const int big = shape[0] == 'b';
        const apr_off_t chunk = big ? DROPIN_BIG_BUCKET : arg_off(args, "chunk", 4096, 1 << 24);
        for (off = 0; off < size; off += chunk) {
            const apr_off_t n = size - off < chunk ? size - off : (chunk > 0 ? chunk : 1);
            APR_BRIGADE_INSERT_TAIL(bb, body_bucket(ba, off, (apr_size_t)n));
            if (big && pass(r, bb) != APR_SUCCESS) return AP_FILTER_ERROR;
        }
        if (!APR_BRIGADE_EMPTY(bb) && pass(r, bb) != APR_SUCCESS) return AP_FILTER_ERROR;
    } else if (strcmp(shape, "aftereos") == 0) {
        static const char garbage[] = "DATA-AFTER-EOS must never reach the client\n";
        APR_BRIGADE_INSERT_TAIL(bb, body_bucket(ba, 0, (apr_size_t)size));
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(ba));
        if (pass(r, bb) != APR_SUCCESS) return AP_FILTER_ERROR;
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_immortal_create(garbage, sizeof(garbage) - 1, ba));
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(ba));
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_immortal_create(garbage, sizeof(garbage) - 1, ba));
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(ba));
        (void)pass(r, bb); /* whatever the chain says: the response is over */
        return OK;
    } else { /* heap */
        APR_BRIGADE_INSERT_TAIL(bb, body_bucket(ba, 0, (apr_size_t)size));
    }
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(ba));
    return pass(r, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

static int dropin_handler(request_rec *r) {
    if (!r->handler) return DECLINED;
    if (strcmp(r->handler, "mctest-echo") == 0) return echo_handler(r);
    if (strcmp(r->handler, "mctest-shapes") == 0) return shapes_handler(r);
    return DECLINED;
}

static void register_hooks(apr_pool_t *pool) {
    (void)pool;
    ap_hook_handler(dropin_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

module AP_MODULE_DECLARE_DATA mctest_dropin_module = {
    STANDARD20_MODULE_STUFF, NULL, NULL, NULL, NULL, NULL, register_hooks, 0,
};
