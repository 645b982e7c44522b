// SPDX-License-Identifier: Apache-2.0
// Parsing of the Accept-Encoding request header (RFC 9110 §12.5.3).
#pragma once

#include <array>
#include <string_view>

#include "mc/coding.h"

namespace mc {

/// Weights are kept in thousandths: q=1 is 1000, q=0.5 is 500, q=0 is 0.
inline constexpr int kQMax = 1000;
/// A coding the header does not mention.
inline constexpr int kQUnset = -1;

/// The parsed header. Entries that cannot be parsed are ignored, never an error.
///
/// Choices where the RFC is silent:
///  - a coding listed more than once takes its lowest weight (a client that says q=0 for a
///    coding anywhere never gets it);
///  - parameters other than q are ignored; an invalid q (e.g. "0.0000", "1.5", "1e-1") drops the
///    entry as if it were not there; whitespace around "=" is tolerated ("q = 0" still refuses);
///    quoted parameter values are not parsed (no client sends them in Accept-Encoding);
///  - several header lines are joined with ", " before parsing (httpd does that for us).
class AcceptEncoding {
public:
    /// `present` is false when the request had no Accept-Encoding header at all.
    static AcceptEncoding parse(std::string_view header, bool present = true);

    /// The weight the client gives to `c` after applying "*" (RFC 9110 §12.5.3):
    /// explicit weight, else the weight of "*", else 0 for codings. For identity the default is
    /// acceptable (1000) unless "identity;q=0" or "*;q=0" without an explicit identity entry.
    [[nodiscard]] int weight(Coding c) const;

    /// The explicit weight of `c` (kQUnset when not listed).
    [[nodiscard]] int explicit_weight(Coding c) const { return q_[index(c)]; }
    /// The weight of "*" (kQUnset when not listed).
    [[nodiscard]] int star_weight() const { return star_; }
    [[nodiscard]] bool present() const { return present_; }

private:
    std::array<int, kCodingCount> q_{kQUnset, kQUnset, kQUnset, kQUnset, kQUnset, kQUnset};
    int star_ = kQUnset;
    bool present_ = false;
};

/// Parses an RFC 9110 qvalue ("0", "0.", "0.5", "0.123", "1", "1.", "1.000") into thousandths.
/// Returns kQUnset when invalid.
int parse_qvalue(std::string_view s);

}  // namespace mc
