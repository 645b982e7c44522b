// SPDX-License-Identifier: Apache-2.0
// The outermost coding of a request body's Content-Encoding.
#include "mc/request_coding.h"

#include <vector>

namespace mc {

RequestCoding outer_request_coding(std::string_view content_encoding) {
    // The list members that are codings (not "identity", not empty), in order.
    std::vector<std::string_view> codings;
    while (true) {
        const std::size_t comma = content_encoding.find(',');
        const std::string_view item = trim_ows(content_encoding.substr(0, comma));
        if (!item.empty() && !iequals(item, "identity")) codings.push_back(item);
        if (comma == std::string_view::npos) break;
        content_encoding.remove_prefix(comma + 1);
    }
    RequestCoding out;
    if (codings.empty()) return out;
    const std::string_view outer = codings.back();
    const auto c = parse_coding(outer);
    if (!c || *c == Coding::kDcz) {
        out.kind = RequestCoding::Kind::kUnsupported;
        out.token = std::string(outer);
        return out;
    }
    out.kind = RequestCoding::Kind::kDecode;
    out.coding = *c;
    for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
        if (i > 0) out.rest += ", ";
        out.rest += codings[i];
    }
    return out;
}

}  // namespace mc
