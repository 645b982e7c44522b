// SPDX-License-Identifier: Apache-2.0
// 415 for request bodies in codings the DEFLATE input filter does not decode.
#include "mc_request_coding.h"

#include <apr_strings.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>

#include <string>

#include "mc/request_coding.h"
#include "mc_counters.h"
#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

constexpr const char* kRefusedKey = "multicompress-refused-coding";

// The coding of the request body, when it is one we would refuse.
bool unsupported(request_rec* r) {
    if (r->main != nullptr || apr_table_get(r->headers_in, "Content-Range") != nullptr ||
        !ap_request_has_body(r)) {
        return false;
    }
    const char* ce = apr_table_get(r->headers_in, "Content-Encoding");
    if (ce == nullptr) return false;
    const mc::RequestCoding rc = mc::outer_request_coding(ce);
    if (rc.kind != mc::RequestCoding::Kind::kUnsupported) return false;
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                  MC_LOGNO(00330) "request body in Content-Encoding %s, which is not decoded "
                                  "here: 415",
                  ap_escape_logitem(r->pool, rc.token.c_str()));
    count(mc::metrics::Event::kInflateUnsupported);
    // RFC 9110 §15.5.16: the codings that would have been accepted. err_headers_out: it is kept
    // on the error response.
    apr_table_setn(r->err_headers_out, "Accept-Encoding",
                   apr_pstrmemdup(r->pool, mc::kDecodedRequestCodings.data(),
                                  mc::kDecodedRequestCodings.size()));
    return true;
}

bool refused_already(request_rec* r) {
    void* refused = nullptr;
    apr_pool_userdata_get(&refused, kRefusedKey, r->pool);
    return refused != nullptr;
}

}  // namespace

int refuse_unsupported_coding(ap_filter_t* f) {
    // Refused from the input filter already (another module read the body first): its 415 went
    // out; AP_FILTER_ERROR tells httpd not to send another.
    if (refused_already(f->r)) return AP_FILTER_ERROR;
    if (!unsupported(f->r)) return DECLINED;
    ap_remove_input_filter(f);
    return HTTP_UNSUPPORTED_MEDIA_TYPE;
}

bool refused_in_filter(ap_filter_t* f, apr_status_t* rv) {
    request_rec* r = f->r;
    if (!refused_already(r)) {
        if (!unsupported(r)) return false;
        apr_pool_userdata_setn(r, kRefusedKey, nullptr, r->pool);
        // As HTTP_IN reports a bad body (bail_out_on_error): the error response goes out through
        // the output filters; the unread body cannot be trusted to frame the next request.
        apr_bucket_brigade* bb = apr_brigade_create(r->pool, f->c->bucket_alloc);
        APR_BRIGADE_INSERT_TAIL(bb, ap_bucket_error_create(HTTP_UNSUPPORTED_MEDIA_TYPE, nullptr,
                                                           r->pool, f->c->bucket_alloc));
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
        r->connection->keepalive = AP_CONN_CLOSE;
        ap_pass_brigade(r->output_filters, bb);
    }
    *rv = AP_FILTER_ERROR;
    return true;
}

}  // namespace mc::httpd
