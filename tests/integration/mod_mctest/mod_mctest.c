/* SPDX-License-Identifier: Apache-2.0 */
/* mod_mctest: a test-only handler that sends odd bucket shapes through the output filters
 * (ideas from mod_h2test and mod_bucketeer). Never load it in production.
 *
 *   SetHandler mctest
 *   GET /any?size=N&chunk=N&flush=N&pass=N&eos=alone&cl=1&kind=heap|transient|pool|immortal
 *           &flushfirst=1&delay=MS&status=204|304&ct=TYPE
 *
 * size   body length (default 10000, at most 64 MiB); the body is mctest_body() in mc_bodies.py:
 *        lines "%07d mctest: the quick brown fox jumps over the lazy dog\n", cut at size
 * chunk  bytes per data bucket (default 8192); chunk=1 sends 1-byte buckets
 * flush  a FLUSH bucket after every N data buckets
 * pass   ap_pass_brigade after every N data buckets (0: one brigade for the whole body)
 * eos    "alone": EOS is passed in a brigade of its own
 * cl     set Content-Length before the body
 * kind   bucket type: heap (copy), transient (a scratch buffer that is overwritten after
 *        each pass, so a filter that keeps a transient bucket without setting it aside
 *        sends corrupt data), pool, immortal
 * flushfirst  a FLUSH bucket before any data
 * delay  milliseconds to sleep after every pass
 * status 204 or 304: no body
 * vary, vary2  Vary header lines the handler adds to r->headers_out (as an application
 *        would, before any output filter runs)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* httpd.h first: the other httpd headers depend on it */
#include "httpd.h"
#include "http_config.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"

#include "apr_buckets.h"
#include "apr_strings.h"
#include "apr_time.h"

module AP_MODULE_DECLARE_DATA mctest_module;

#define MCTEST_MAX_SIZE (64 * 1024 * 1024)

typedef struct {
    apr_off_t size;
    apr_size_t chunk;
    int flush_every;
    int pass_every;
    int eos_alone;
    int cl;
    int flush_first;
    int delay_ms;
    int status;
    const char *kind;
    const char *ctype;
    const char *vary;
    const char *vary2;
} mctest_params;

static const char *get_arg(apr_table_t *t, const char *key, const char *dflt) {
    const char *v = apr_table_get(t, key);
    return v ? v : dflt;
}

static void parse_params(request_rec *r, mctest_params *p) {
    apr_table_t *t = apr_table_make(r->pool, 8);
    if (r->args) {
        char *args = apr_pstrdup(r->pool, r->args);
        char *state = NULL;
        for (char *tok = apr_strtok(args, "&", &state); tok; tok = apr_strtok(NULL, "&", &state)) {
            char *eq = strchr(tok, '=');
            if (eq) {
                *eq = '\0';
                ap_unescape_url(eq + 1);
                apr_table_setn(t, tok, eq + 1);
            } else {
                apr_table_setn(t, tok, "1");
            }
        }
    }
    p->size = apr_atoi64(get_arg(t, "size", "10000"));
    if (p->size < 0) p->size = 0;
    if (p->size > MCTEST_MAX_SIZE) p->size = MCTEST_MAX_SIZE;
    p->chunk = (apr_size_t)apr_atoi64(get_arg(t, "chunk", "8192"));
    if (p->chunk < 1) p->chunk = 1;
    p->flush_every = atoi(get_arg(t, "flush", "0"));
    p->pass_every = atoi(get_arg(t, "pass", "0"));
    p->eos_alone = strcmp(get_arg(t, "eos", ""), "alone") == 0;
    p->cl = atoi(get_arg(t, "cl", "0"));
    p->flush_first = atoi(get_arg(t, "flushfirst", "0"));
    p->delay_ms = atoi(get_arg(t, "delay", "0"));
    p->status = atoi(get_arg(t, "status", "200"));
    p->kind = get_arg(t, "kind", "heap");
    p->ctype = get_arg(t, "ct", "text/html");
    p->vary = get_arg(t, "vary", NULL);
    p->vary2 = get_arg(t, "vary2", NULL);
}

static char *make_body(apr_pool_t *pool, apr_off_t size) {
    char *buf = apr_palloc(pool, (apr_size_t)size + 128);
    apr_off_t off = 0;
    long k = 0;
    while (off < size) {
        off += sprintf(buf + off, "%07ld mctest: the quick brown fox jumps over the lazy dog\n",
                       k++);
    }
    return buf;
}

static apr_status_t pass(request_rec *r, apr_bucket_brigade *bb, int delay_ms) {
    apr_status_t rv = ap_pass_brigade(r->output_filters, bb);
    apr_brigade_cleanup(bb);
    if (delay_ms > 0) apr_sleep(apr_time_from_msec(delay_ms));
    return rv;
}

static int mctest_handler(request_rec *r) {
    if (!r->handler || strcmp(r->handler, "mctest") != 0) return DECLINED;
    mctest_params p;
    parse_params(r, &p);
    ap_set_content_type(r, p.ctype);
    if (p.vary) apr_table_addn(r->headers_out, "Vary", p.vary);
    if (p.vary2) apr_table_addn(r->headers_out, "Vary", p.vary2);
    apr_bucket_alloc_t *ba = r->connection->bucket_alloc;
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, ba);

    if (p.status == HTTP_NO_CONTENT || p.status == HTTP_NOT_MODIFIED) {
        r->status = p.status;
        apr_table_setn(r->headers_out, "ETag", "\"mctest\"");
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(ba));
        return pass(r, bb, 0) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
    }
    if (p.cl) ap_set_content_length(r, p.size);

    const char *body = make_body(r->pool, p.size);
    const int transient = strcmp(p.kind, "transient") == 0;
    const apr_size_t group = p.chunk * (apr_size_t)(p.pass_every > 0 ? p.pass_every : 1);
    const apr_size_t scratch_size = p.pass_every > 0 ? group : (apr_size_t)p.size + 1;
    char *scratch = transient ? apr_palloc(r->pool, scratch_size) : NULL;
    apr_size_t scratch_off = 0;

    if (p.flush_first) APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(ba));
    apr_off_t off = 0;
    int n = 0;
    while (off < p.size) {
        apr_size_t len = p.chunk;
        if ((apr_off_t)len > p.size - off) len = (apr_size_t)(p.size - off);
        apr_bucket *b;
        if (transient) {
            memcpy(scratch + scratch_off, body + off, len);
            b = apr_bucket_transient_create(scratch + scratch_off, len, ba);
            scratch_off += len;
        } else if (strcmp(p.kind, "pool") == 0) {
            b = apr_bucket_pool_create(body + off, len, r->pool, ba);
        } else if (strcmp(p.kind, "immortal") == 0) {
            b = apr_bucket_immortal_create(body + off, len, ba);
        } else {
            b = apr_bucket_heap_create(body + off, len, NULL, ba);
        }
        APR_BRIGADE_INSERT_TAIL(bb, b);
        off += (apr_off_t)len;
        ++n;
        if (p.flush_every > 0 && n % p.flush_every == 0) {
            APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(ba));
        }
        if (p.pass_every > 0 && n % p.pass_every == 0) {
            if (pass(r, bb, p.delay_ms) != APR_SUCCESS) return AP_FILTER_ERROR;
            if (transient) {
                /* what a careless filter kept now reads garbage */
                memset(scratch, '#', scratch_off);
                scratch_off = 0;
            }
        }
    }
    if (p.eos_alone && !APR_BRIGADE_EMPTY(bb)) {
        if (pass(r, bb, p.delay_ms) != APR_SUCCESS) return AP_FILTER_ERROR;
    }
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(ba));
    return pass(r, bb, 0) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

static void register_hooks(apr_pool_t *pool) {
    (void)pool;
    ap_hook_handler(mctest_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

module AP_MODULE_DECLARE_DATA mctest_module = {
    STANDARD20_MODULE_STUFF, NULL, NULL, NULL, NULL, NULL, register_hooks, 0,
};
