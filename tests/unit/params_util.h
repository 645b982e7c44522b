// SPDX-License-Identifier: Apache-2.0
// Test helper for the parameter tests (params_test.cc, params_window_test.cc): EncoderParams in
// one call. Header-only; unit tests only.
#pragma once

#include <cstdint>

#include "mc/coding.h"
#include "mc/params.h"

namespace mc_test {

inline mc::EncoderParams params(mc::Coding c, int level, std::int64_t size_hint = -1,
                                int window = 0, int mem_level = 0) {
    mc::EncoderParams p;
    p.coding = c;
    p.level = level;
    p.size_hint = size_hint;
    p.window_log = window;
    p.mem_level = mem_level;
    return p;
}

}  // namespace mc_test
