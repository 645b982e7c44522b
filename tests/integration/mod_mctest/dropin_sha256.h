/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 (FIPS 180-4) for mod_mctest_dropin (dropin_sha256.c): the hex digest of a request
 * body, so the module links nothing but httpd/APR. */
#ifndef DROPIN_SHA256_H
#define DROPIN_SHA256_H

#include "apr.h"
#include "apr_pools.h"

typedef struct {
    apr_uint32_t h[8];
    apr_uint64_t total;
    unsigned char block[64];
    apr_size_t used;
} dropin_sha256;

void dropin_sha256_init(dropin_sha256* s);
void dropin_sha256_update(dropin_sha256* s, const unsigned char* p, apr_size_t n);
/* Finishes the digest; the 64 hex digits, allocated from pool. */
const char* dropin_sha256_hex(dropin_sha256* s, apr_pool_t* pool);

#endif
