// SPDX-License-Identifier: Apache-2.0
// Decoding bodies with mod_deflate's limits, so a decompression bomb stops after a bounded amount
// of output, and (request bodies) a bounded window: what the request-body filter
// (mc_inflate_in) and the INFLATE output filter (mc_inflate_out) share.
#pragma once

#include <httpd.h>
#include <apr_buckets.h>

#include <cstddef>
#include <memory>

#include "mc/coding.h"
#include "mc/decoder.h"
#include "mc_bucket_sink.h"

namespace mc::httpd {

/// Decoded data goes into heap buckets of this size: APR's own, which with their header fill an
/// 8 KiB allocator node (8192 bytes would take a 12 KiB one).
constexpr std::size_t kInflateChunk = APR_BUCKET_BUFF_SIZE;

/// One body being decoded.
struct InflateCtx {
    InflateCtx(apr_bucket_brigade* raw_bb, apr_bucket_brigade* out_bb,
               std::unique_ptr<mc::Decoder> d)
        : raw(raw_bb), out(out_bb), sink(out_bb, kInflateChunk), decoder(std::move(d)) {}
    apr_bucket_brigade* raw;  ///< input read from below (input filter only)
    apr_bucket_brigade* out;  ///< decoded data not yet handed on
    BucketSink sink;
    std::unique_ptr<mc::Decoder> decoder;
    mc::Coding coding = mc::Coding::kIdentity;
    bool eos = false;
    bool headers_done = false;
    const char* rest_encoding = nullptr;  ///< the request's codings left once ours is removed
};

/// The decoder's limits for `r`: a request body's (MultiCompressInflateLimit or LimitRequestBody,
/// the ratio, MultiCompressInflateWindow), or a response's (the ratio).
mc::InflateLimits limits_for(const request_rec* r, bool request_body);

/// Decodes one data bucket into ctx->out. APR_ENOSPC for a crossed limit (httpd maps it to 413),
/// APR_EGENERAL for corrupt data (400); both logged, the decoder freed.
apr_status_t decode_bucket(request_rec* r, InflateCtx* ctx, apr_bucket* e, const char* what);

}  // namespace mc::httpd
