// SPDX-License-Identifier: Apache-2.0
// MC_FUZZ_CHECK: an invariant check that stays on in release builds (assert() does not).
#pragma once

#include <cstdio>
#include <cstdlib>

/// Aborts with the failed condition, so libFuzzer saves the input and CTest fails the replay.
#define MC_FUZZ_CHECK(cond)                                                                   \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                     \
        }                                                                                     \
    } while (0)
