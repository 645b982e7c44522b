/* SPDX-License-Identifier: Apache-2.0 */
/* mod_mc_libfloor: bench-only. The least a compressing module inside this Apache can cost: a
 * handler that reads the requested file in one read() and answers it with the compression
 * library's one call, nothing else (no negotiation, no headers beyond Content-Encoding and Vary,
 * no ETag, no checks). bench/vs_nginx.py --lib-floor loads it into a third Apache (`library
 * floor`) beside mod_multicompress and nginx: what this Apache, its threads and its per-request
 * cost leave of a live response, measured in the same rounds, where bench/run's floor adds
 * bench_encoders' hot-loop time of the call to plain Apache's.
 *
 *   MCLibFloor br 4 | gzip 6 | zstd 3
 *
 * Each with the library's default allocator and the parameters mod_multicompress gives a whole
 * body of this length (mc::tune in params.cc), so the bytes are ours': br BrotliEncoderCompress,
 * the window the smallest of 10..22 bits that holds the body; gzip libdeflate's gzip call with
 * a compressor kept per thread (as ours keeps them); zstd ZSTD_compress2 with a new context, the
 * window the smallest from 10 bits that holds the body, capped at the level's own. */
#include <httpd.h>
#include <http_config.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <apr_strings.h>

#include <brotli/encode.h>
#include <libdeflate.h>
#include <zstd.h>

#include <stdlib.h>
#include <string.h>

module AP_MODULE_DECLARE_DATA mc_libfloor_module;

enum libfloor_coding { LIBFLOOR_OFF, LIBFLOOR_BR, LIBFLOOR_GZIP, LIBFLOOR_ZSTD };

typedef struct {
    enum libfloor_coding coding;
    int level;
} libfloor_conf;

/* Indexed by libfloor_coding: the directive's word and the Content-Encoding. */
static const char *const coding_token[] = {"", "br", "gzip", "zstd"};

static void *create_server_conf(apr_pool_t *p, server_rec *s)
{
    libfloor_conf *c = apr_pcalloc(p, sizeof(*c));
    (void)s;
    c->coding = LIBFLOOR_OFF;
    return c;
}

static const char *set_libfloor(cmd_parms *cmd, void *dummy, const char *coding, const char *level)
{
    libfloor_conf *c = ap_get_module_config(cmd->server->module_config, &mc_libfloor_module);
    int i;
    (void)dummy;
    for (i = LIBFLOOR_BR; i <= LIBFLOOR_ZSTD; ++i) {
        if (strcmp(coding, coding_token[i]) == 0) {
            c->coding = (enum libfloor_coding)i;
            c->level = atoi(level);
            return NULL;
        }
    }
    return "MCLibFloor: br, gzip or zstd";
}

/* mod_multicompress's brotli window for a body of n bytes (params.cc, window_for_length). */
static int brotli_window(apr_size_t n)
{
    int w = 10;
    while (w < 22 && ((apr_size_t)1 << w) - 16 < n) {
        ++w;
    }
    return w;
}

/* mod_multicompress's zstd window for a body of n bytes at a level (params.cc: the level's own
 * window from libzstd's table for large inputs, shrunk to the body). */
static int zstd_window(apr_size_t n, int level)
{
    int cap = level <= 1 ? 19 : level == 2 ? 20 : level <= 8 ? 21 : level <= 16 ? 22 : 23;
    int w = 10;
    while (w < cap && ((apr_size_t)1 << w) < n) {
        ++w;
    }
    return w;
}

static int libfloor_handler(request_rec *r)
{
    libfloor_conf *c = ap_get_module_config(r->server->module_config, &mc_libfloor_module);
    const char *accept;
    apr_file_t *fd;
    apr_size_t len;
    apr_size_t got = 0;
    char *in;
    char *out;
    size_t out_len;
    apr_bucket_brigade *bb;

    if (c->coding == LIBFLOOR_OFF || r->main != NULL || r->method_number != M_GET ||
        r->finfo.filetype != APR_REG || r->finfo.size > (1 << 24)) {
        return DECLINED;
    }
    accept = apr_table_get(r->headers_in, "Accept-Encoding");
    if (accept == NULL || ap_strstr_c(accept, coding_token[c->coding]) == NULL) {
        return DECLINED;
    }
    len = (apr_size_t)r->finfo.size;
    if (apr_file_open(&fd, r->filename, APR_READ, APR_OS_DEFAULT, r->pool) != APR_SUCCESS) {
        return HTTP_FORBIDDEN;
    }
    in = apr_palloc(r->pool, len + 1);
    if (apr_file_read_full(fd, in, len, &got) != APR_SUCCESS || got != len) {
        apr_file_close(fd);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_file_close(fd);

    if (c->coding == LIBFLOOR_BR) {
        out_len = BrotliEncoderMaxCompressedSize(len);
        out = apr_palloc(r->pool, out_len);
        if (!BrotliEncoderCompress(c->level, brotli_window(len), BROTLI_MODE_GENERIC, len,
                                   (const uint8_t *)in, &out_len, (uint8_t *)out)) {
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    else if (c->coding == LIBFLOOR_ZSTD) {
        ZSTD_CCtx *z = ZSTD_createCCtx();
        if (z == NULL) {
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, c->level);
        ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog, zstd_window(len, c->level));
        out_len = ZSTD_compressBound(len);
        out = apr_palloc(r->pool, out_len);
        out_len = ZSTD_compress2(z, out, out_len, in, len);
        ZSTD_freeCCtx(z);
        if (ZSTD_isError(out_len)) {
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    else {
        /* One compressor per thread, kept (as ours keeps them): libdeflate clears its tables on
         * every call, so a kept one costs only the call. */
        static _Thread_local struct libdeflate_compressor *z = NULL;
        static _Thread_local int z_level = -1;
        if (z == NULL || z_level != c->level) {
            if (z != NULL) {
                libdeflate_free_compressor(z);
            }
            z = libdeflate_alloc_compressor(c->level);
            z_level = c->level;
        }
        if (z == NULL) {
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        out_len = libdeflate_gzip_compress_bound(z, len);
        out = apr_palloc(r->pool, out_len);
        out_len = libdeflate_gzip_compress(z, in, len, out, out_len);
        if (out_len == 0) {
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    apr_table_setn(r->headers_out, "Content-Encoding", coding_token[c->coding]);
    apr_table_setn(r->headers_out, "Vary", "Accept-Encoding");
    ap_set_content_length(r, (apr_off_t)out_len);
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_pool_create(out, out_len, r->pool,
                                                       r->connection->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(r->connection->bucket_alloc));
    return ap_pass_brigade(r->output_filters, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

static void register_hooks(apr_pool_t *p)
{
    (void)p;
    ap_hook_handler(libfloor_handler, NULL, NULL, APR_HOOK_REALLY_FIRST);
}

static const command_rec libfloor_cmds[] = {
    AP_INIT_TAKE2("MCLibFloor", set_libfloor, NULL, RSRC_CONF,
                  "MCLibFloor br|gzip|zstd LEVEL: answer GET for files with the library's "
                  "one call"),
    {NULL}
};

AP_DECLARE_MODULE(mc_libfloor) = {
    STANDARD20_MODULE_STUFF, NULL, NULL, create_server_conf, NULL, libfloor_cmds, register_hooks, 0
};
