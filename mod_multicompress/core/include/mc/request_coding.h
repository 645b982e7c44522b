// SPDX-License-Identifier: Apache-2.0
// A request body's Content-Encoding as the DEFLATE input filter reads it: the outermost coding,
// whether it is one we decode, and what the header says once it is removed.
#pragma once

#include <string>
#include <string_view>

#include "mc/coding.h"

namespace mc {

/// What the DEFLATE input filter does with a request body's Content-Encoding.
struct RequestCoding {
    enum class Kind : unsigned char {
        kNone,         ///< no coding: absent, empty, or only "identity" (and empty list members)
        kDecode,       ///< the outermost coding is one we decode: `coding`
        kUnsupported,  ///< the outermost coding is not one we decode: 415 (RFC 9110 §15.5.16)
    };
    Kind kind = Kind::kNone;
    Coding coding = Coding::kIdentity;
    /// kDecode: the codings under the outermost one, in order, as Content-Encoding keeps them
    /// once it is removed ("" when none is left).
    std::string rest;
    /// kUnsupported: the outermost token as sent.
    std::string token;
};

/// The codings are listed in the order they were applied (RFC 9110 §8.4), so the outermost is
/// the last. Tokens are case-insensitive; "x-gzip" is gzip; "identity" tokens and empty list
/// members are skipped (RFC 9110 §5.6.1: a recipient accepts empty list elements) and left out of
/// `rest`. Decoded: gzip, deflate (the zlib format), br, zstd; dcz (it needs a dictionary) and
/// every other token are kUnsupported.
RequestCoding outer_request_coding(std::string_view content_encoding);

/// The `Accept-Encoding` of a 415 for a request body's coding: the codings the DEFLATE input
/// filter decodes (RFC 9110 §12.5.3, as a response header).
inline constexpr std::string_view kDecodedRequestCodings = "gzip, deflate, br, zstd";

}  // namespace mc
