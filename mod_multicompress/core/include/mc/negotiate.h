// SPDX-License-Identifier: Apache-2.0
// Choosing a content coding from the client's weights and the server's preferences.
#pragma once

#include <span>

#include "mc/accept_encoding.h"
#include "mc/coding.h"

namespace mc {

/// Picks the coding to send: among `server_order` (enabled codings, the server's preference
/// order) restricted to `allowed`, the one with the highest client weight > 0; ties go to the
/// earlier entry of `server_order` (docs/contract.md). Identity is returned when the header is
/// absent, when nothing allowed is acceptable, or when the client explicitly weights identity
/// strictly higher than every acceptable coding.
Coding negotiate(const AcceptEncoding& accept, std::span<const Coding> server_order,
                 CodingSet allowed);

}  // namespace mc
