// SPDX-License-Identifier: Apache-2.0
// Server-side choice of a content coding (RFC 9110 §12.5.3, ties by server order).
#include "mc/negotiate.h"

namespace mc {

Coding negotiate(const AcceptEncoding& accept, std::span<const Coding> server_order,
                 CodingSet allowed) {
    if (!accept.present()) return Coding::kIdentity;  // docs/contract.md: no header, no compression
    Coding best = Coding::kIdentity;
    int best_q = 0;
    for (const Coding c : server_order) {
        if (c == Coding::kIdentity || !allowed.has(c)) continue;
        const int q = accept.weight(c);
        if (q > best_q) {  // strictly greater: ties keep the earlier (preferred) coding
            best = c;
            best_q = q;
        }
    }
    if (best == Coding::kIdentity) return best;
    // A client that explicitly prefers identity over every coding gets identity.
    const int identity_q = accept.explicit_weight(Coding::kIdentity);
    if (identity_q > best_q) return Coding::kIdentity;
    return best;
}

}  // namespace mc
