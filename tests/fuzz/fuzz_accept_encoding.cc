// SPDX-License-Identifier: Apache-2.0
// Fuzz target: Accept-Encoding parsing, negotiation and the first-call decision.
//
// Input: the header value, optionally followed by a NUL byte and control bytes that pick the
// server order, the allowed codings and the response seen by mc::decide(). Without a NUL the
// whole input is the header and the server uses the defaults, so plain-text seeds work.
//
// Invariants: no crash; every explicit weight is in [0, kQMax] or kQUnset; the chosen coding is
// identity, or allowed, in the server order, weighted > 0 and the best by RFC 9110 §12.5.3 with
// ties going to the server order; and a few metamorphic properties of the parser.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "mc/accept_encoding.h"
#include "mc/coding.h"
#include "mc/config.h"
#include "mc/headers.h"
#include "mc/negotiate.h"
#include "mc/policy.h"

namespace {

constexpr std::array<mc::Coding, mc::kCodingCount> kEveryCoding = {
    mc::Coding::kIdentity, mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli,
    mc::Coding::kZstd};

bool valid_weight(int q) {
    return q == mc::kQUnset || (q >= 0 && q <= mc::kQMax);
}

void check_parsed(const mc::AcceptEncoding& ae, bool present) {
    MC_FUZZ_CHECK(ae.present() == present);
    MC_FUZZ_CHECK(valid_weight(ae.star_weight()));
    for (const mc::Coding c : kEveryCoding) {
        MC_FUZZ_CHECK(valid_weight(ae.explicit_weight(c)));
        const int w = ae.weight(c);
        MC_FUZZ_CHECK(w >= 0 && w <= mc::kQMax);
        if (ae.explicit_weight(c) != mc::kQUnset) MC_FUZZ_CHECK(w == ae.explicit_weight(c));
    }
}

bool same_weights(const mc::AcceptEncoding& a, const mc::AcceptEncoding& b) {
    if (a.star_weight() != b.star_weight()) return false;
    return std::all_of(kEveryCoding.begin(), kEveryCoding.end(),
                       [&](mc::Coding c) { return a.explicit_weight(c) == b.explicit_weight(c); });
}

// The documented contract of mc::negotiate, checked against its result.
void check_negotiation(const mc::AcceptEncoding& ae, std::span<const mc::Coding> order,
                       mc::CodingSet allowed, mc::Coding chosen) {
    if (!ae.present()) {
        MC_FUZZ_CHECK(chosen == mc::Coding::kIdentity);
        return;
    }
    int best_q = 0;  // the highest weight > 0 among allowed codings of the server order
    for (const mc::Coding c : order) {
        if (c != mc::Coding::kIdentity && allowed.has(c)) best_q = std::max(best_q, ae.weight(c));
    }
    const int identity_q = ae.explicit_weight(mc::Coding::kIdentity);
    if (chosen == mc::Coding::kIdentity) {
        // Nothing acceptable, or identity explicitly preferred to everything acceptable.
        MC_FUZZ_CHECK(best_q == 0 || identity_q > best_q);
        return;
    }
    MC_FUZZ_CHECK(allowed.has(chosen));
    const auto first = std::find(order.begin(), order.end(), chosen);
    MC_FUZZ_CHECK(first != order.end());
    const int q = ae.weight(chosen);
    MC_FUZZ_CHECK(q > 0);
    MC_FUZZ_CHECK(q == best_q);
    MC_FUZZ_CHECK(identity_q <= q);
    // Ties go to the server order: nothing before it weighs as much.
    for (auto it = order.begin(); it != first; ++it) {
        if (*it != mc::Coding::kIdentity && allowed.has(*it)) MC_FUZZ_CHECK(ae.weight(*it) < q);
    }
}

// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
void check_qvalue(std::string_view s) {
    const int q = mc::parse_qvalue(s);
    MC_FUZZ_CHECK(valid_weight(q));
    bool grammar = !s.empty() && s.size() <= 5 && (s[0] == '0' || s[0] == '1') &&
                   (s.size() == 1 || s[1] == '.');
    int expect = grammar && s[0] == '1' ? mc::kQMax : 0;
    for (std::size_t i = 2; grammar && i < s.size(); ++i) {
        const bool digit = s[i] >= '0' && s[i] <= '9';
        grammar = digit && (s[0] == '0' || s[i] == '0');
        if (grammar) expect += (s[i] - '0') * (i == 2 ? 100 : i == 3 ? 10 : 1);
    }
    MC_FUZZ_CHECK(q == (grammar ? expect : mc::kQUnset));
}

std::string ascii_upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view header = input.substr(0, nul);
    const std::string_view control =
        nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1);
    FuzzedDataProvider fdp(reinterpret_cast<const std::uint8_t*>(control.data()), control.size());

    // Server side: defaults unless the control bytes say otherwise.
    std::vector<mc::Coding> order(mc::kAllCompressing.begin(), mc::kAllCompressing.end());
    mc::CodingSet allowed{mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli,
                          mc::Coding::kZstd};
    if (fdp.remaining_bytes() > 0) {
        // Any order, including duplicates and identity, which negotiate() must tolerate.
        order.resize(fdp.ConsumeIntegralInRange<std::size_t>(0, 6));
        for (mc::Coding& c : order) c = fdp.PickValueInArray(kEveryCoding);
        allowed = {};
        const auto bits = fdp.ConsumeIntegral<std::uint8_t>();
        for (const mc::Coding c : kEveryCoding) {
            if ((bits >> mc::index(c)) & 1u) allowed.add(c);
        }
    }
    const bool present = fdp.remaining_bytes() == 0 || fdp.ConsumeBool();

    check_qvalue(header);

    const mc::AcceptEncoding ae = mc::AcceptEncoding::parse(header, present);
    check_parsed(ae, present);
    const mc::Coding chosen = mc::negotiate(ae, order, allowed);
    check_negotiation(ae, order, allowed, chosen);

    // Metamorphic properties of the parser.
    const std::string header_s(header);
    // An empty list member is ignored.
    MC_FUZZ_CHECK(same_weights(mc::AcceptEncoding::parse(header_s + ",", present), ae));
    // Tokens, parameter names and q are case-insensitive.
    MC_FUZZ_CHECK(same_weights(mc::AcceptEncoding::parse(ascii_upper(header), present), ae));
    // q=0 anywhere means "never" (the lowest weight of a repeated coding wins).
    const mc::AcceptEncoding no_gzip = mc::AcceptEncoding::parse(header_s + ", gzip;q=0", present);
    check_parsed(no_gzip, present);
    MC_FUZZ_CHECK(no_gzip.explicit_weight(mc::Coding::kGzip) == 0);
    MC_FUZZ_CHECK(mc::negotiate(no_gzip, order, allowed) != mc::Coding::kGzip);
    // "*;q=0" adds nothing acceptable: only what the header names can still be chosen.
    const mc::AcceptEncoding no_star = mc::AcceptEncoding::parse(header_s + ",*;q=0", present);
    const mc::Coding strict = mc::negotiate(no_star, order, allowed);
    check_negotiation(no_star, order, allowed, strict);
    MC_FUZZ_CHECK(strict == mc::Coding::kIdentity || ae.explicit_weight(strict) > 0);

    // The first-call decision built on it.
    mc::ResponseView view;
    view.accept_encoding = header;
    view.accept_encoding_present = present;
    mc::Config cfg;
    mc::CodingSet filter_codings = allowed;
    if (fdp.remaining_bytes() > 0) {
        view.status = fdp.PickValueInArray({100, 200, 203, 204, 206, 304, 404, 500});
        view.has_content_range = fdp.ConsumeBool();
        view.request_has_range = fdp.ConsumeBool();
        view.body_length = fdp.ConsumeIntegralInRange<std::int64_t>(-1, 100000);
        view.env_no_gzip = fdp.ConsumeBool();
        view.env_no_brotli = fdp.ConsumeBool();
        view.env_no_zstd = fdp.ConsumeBool();
        view.env_gzip_only_text_html = fdp.ConsumeBool();
        view.env_force_gzip = fdp.ConsumeBool();
        view.content_type = fdp.PickValueInArray<std::string_view>(
            {"text/html", "Text/HTML; charset=utf-8", "text/css", ""});
        view.content_encoding =
            fdp.PickValueInArray<std::string_view>({"", "identity", "gzip", " identity , "});
        for (const mc::Coding c : order) {
            if (c != mc::Coding::kIdentity) (void)mc::add_encoding(cfg, mc::coding_token(c));
        }
    }
    const mc::Decision d = mc::decide(view, cfg, filter_codings);
    MC_FUZZ_CHECK(d.reason != nullptr);
    if (d.coding != mc::Coding::kIdentity) {
        MC_FUZZ_CHECK(filter_codings.has(d.coding));
        MC_FUZZ_CHECK(view.status >= 200 && view.status != 204 && view.status != 206 &&
                      view.status != 304);
        MC_FUZZ_CHECK(!view.has_content_range && !view.request_has_range && !view.env_no_gzip);
        MC_FUZZ_CHECK(mc::is_identity_encoding(view.content_encoding));
        MC_FUZZ_CHECK(!(view.env_no_brotli && d.coding == mc::Coding::kBrotli));
        MC_FUZZ_CHECK(!(view.env_no_zstd && d.coding == mc::Coding::kZstd));
        const auto enabled = cfg.encodings();
        if (!(view.env_force_gzip && d.coding == mc::Coding::kGzip)) {
            MC_FUZZ_CHECK(std::find(enabled.begin(), enabled.end(), d.coding) != enabled.end());
            MC_FUZZ_CHECK(ae.weight(d.coding) > 0);
        }
    }
    return 0;
}
