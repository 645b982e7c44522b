// SPDX-License-Identifier: Apache-2.0
// Request bodies in a coding the DEFLATE input filter does not decode get 415 Unsupported Media
// Type with an Accept-Encoding that lists the codings it does decode (RFC 9110 §15.5.16), where
// mod_deflate hands them to the handler still encoded.
#pragma once

#include <httpd.h>
#include <util_filter.h>

namespace mc::httpd {

/// Before the handler reads the body, `f` being our input filter: HTTP_UNSUPPORTED_MEDIA_TYPE
/// (with Accept-Encoding set) when the outermost coding of its Content-Encoding is not one we
/// decode, else DECLINED. Refusing removes `f`, so that httpd discards the body as it came.
/// Subrequests, requests without a body and Content-Range bodies are left alone, as the input
/// filter leaves them.
int refuse_unsupported_coding(ap_filter_t* f);

/// The same check from the input filter, for a body read before the handler ran (another
/// module's hook): sends the 415 down the output filters as HTTP_IN sends its errors, sets *rv
/// to AP_FILTER_ERROR and returns true (also on every later read); false when the coding is one
/// we decode or there is none.
bool refused_in_filter(ap_filter_t* f, apr_status_t* rv);

}  // namespace mc::httpd
