// SPDX-License-Identifier: Apache-2.0
// MultiCompressTranscode's decision, free of httpd types.
#include "mc/transcode.h"

#include "mc/accept_encoding.h"
#include "mc/headers.h"

namespace mc {

namespace {

// The one coding of a Content-Encoding value, when it names exactly one besides "identity".
std::optional<Coding> single_coding(std::string_view ce) {
    std::optional<Coding> found;
    while (true) {
        const std::size_t comma = ce.find(',');
        const std::string_view item = trim_ows(ce.substr(0, comma));
        if (!item.empty() && !iequals(item, "identity")) {
            const auto c = parse_coding(item);
            if (!c || found) return std::nullopt;  // unknown, or a second coding
            found = c;
        }
        if (comma == std::string_view::npos) break;
        ce.remove_prefix(comma + 1);
    }
    return found;
}

}  // namespace

TranscodeVerdict transcode_verdict(const ResponseView& v, const Config& cfg) {
    TranscodeVerdict t;
    if (v.status < 200 || v.status == 204 || v.status == 304 || v.status == 206 ||
        v.has_content_range) {
        t.reason = "no whole body";
        return t;
    }
    const auto c = single_coding(v.content_encoding);
    // dcz needs the client's dictionary: only the client can decode it.
    if (!c || *c == Coding::kDcz) {
        t.reason = "not in one coding we decode";
        return t;
    }
    t.varies = true;
    t.from = *c;
    const AcceptEncoding accept =
        AcceptEncoding::parse(v.accept_encoding, v.accept_encoding_present);
    if (accept.weight(*c) > 0) {
        t.reason = "the client accepts its coding";
        return t;
    }
    if (cfg.honor_no_transform() && (list_has_token(v.request_cache_control, "no-transform") ||
                                     list_has_token(v.response_cache_control, "no-transform"))) {
        t.reason = "Cache-Control: no-transform";
        return t;
    }
    t.decode = true;
    t.reason = "the client does not accept its coding";
    return t;
}

}  // namespace mc
