// SPDX-License-Identifier: Apache-2.0
// MultiCompressTranscode: whether a response that its handler or backend already encoded, in a
// coding the client did not accept, is decoded (and then compressed again as any response).
#pragma once

#include "mc/coding.h"
#include "mc/config.h"
#include "mc/policy.h"

namespace mc {

struct TranscodeVerdict {
    /// The response is encoded in one coding we decode: what the client gets depends on its
    /// Accept-Encoding, so Vary must say so whatever `decode` is.
    bool varies = false;
    bool decode = false;  ///< decode it: the client does not accept `from`
    Coding from = Coding::kIdentity;
    const char* reason = "";
};

/// Reads the status, Content-Range, Content-Encoding, Cache-Control and Accept-Encoding of `v`.
/// Only a whole response (not 1xx, 204, 304, 206 or one with Content-Range) in exactly one coding
/// we decode (gzip or x-gzip, deflate, br, zstd; "identity" tokens and empty list members
/// skipped) is considered; it is decoded when the client gives that coding no weight above 0
/// (RFC 9110 §12.5.3: no Accept-Encoding at all accepts no coding here, as for compression) and
/// no-transform does not forbid it (MultiCompressNoTransform).
TranscodeVerdict transcode_verdict(const ResponseView& v, const Config& cfg);

}  // namespace mc
