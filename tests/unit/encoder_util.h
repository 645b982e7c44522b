// SPDX-License-Identifier: Apache-2.0
// Test helper for the encoder tests (encoder_test.cc, encoder_api_test.cc): reproducible seeds,
// the inputs (empty, one byte, random, text, mixed, 10 MiB), and encoder parameters.
// Header-only; unit tests only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "mc/coding.h"
#include "mc/params.h"

namespace mc_test {

// ---- Seeds: fixed for reproducible CI, overridable to explore (MC_TEST_SEED=n).

inline std::uint32_t base_seed() {
    if (const char* env = std::getenv("MC_TEST_SEED")) {
        return static_cast<std::uint32_t>(std::strtoul(env, nullptr, 10));
    }
    return 0x6d63u;
}

// ---- Inputs

enum class Input { kEmpty, kOneByte, kRandom, kText, kMixed, kLarge };

inline const char* input_name(Input i) {
    switch (i) {
        case Input::kEmpty: return "empty";
        case Input::kOneByte: return "onebyte";
        case Input::kRandom: return "random";
        case Input::kText: return "text";
        case Input::kMixed: return "mixed";
        case Input::kLarge: return "10MiB";
    }
    return "?";
}

inline void append_random(std::string& s, std::size_t n, std::mt19937& rng) {
    const std::size_t start = s.size();
    s.resize(start + n);
    for (std::size_t i = 0; i < n; ++i) s[start + i] = static_cast<char>(rng() >> 24);
}

inline void append_text(std::string& s, std::size_t n, std::mt19937& rng) {
    static constexpr std::array<std::string_view, 16> kWords = {"<div class=\"item\">",
                                                                "</div>\n",
                                                                "the ",
                                                                "quick ",
                                                                "brown ",
                                                                "fox ",
                                                                "jumps ",
                                                                "over ",
                                                                "lazy ",
                                                                "dog ",
                                                                "multicompress ",
                                                                "{\"id\": ",
                                                                "\"name\": \"x\"}, ",
                                                                "zstd ",
                                                                "brotli ",
                                                                "gzip "};
    const std::size_t end = s.size() + n;
    while (s.size() < end) {
        s += kWords[rng() % kWords.size()];
        if (rng() % 16 == 0) s += std::to_string(rng() % 100000);
    }
    s.resize(end);
}

/// Text with stretches of random bytes, so blocks switch between compressed and stored.
inline void append_mixed(std::string& s, std::size_t n, std::mt19937& rng) {
    const std::size_t end = s.size() + n;
    while (s.size() < end) {
        const std::size_t left = end - s.size();
        const std::size_t len = std::min<std::size_t>(left, 1 + rng() % 40000);
        if (rng() % 4 == 0) {
            append_random(s, len, rng);
        } else {
            append_text(s, len, rng);
        }
    }
}

inline std::string make_input(Input kind, std::uint32_t seed) {
    std::mt19937 rng(seed ^ 0x9e3779b9u);
    std::string s;
    switch (kind) {
        case Input::kEmpty: break;
        case Input::kOneByte: s.push_back(static_cast<char>(rng())); break;
        case Input::kRandom: append_random(s, 96 * 1024, rng); break;
        case Input::kText: append_text(s, 128 * 1024, rng); break;
        case Input::kMixed: append_mixed(s, 128 * 1024, rng); break;
        case Input::kLarge: append_mixed(s, 10 * 1024 * 1024, rng); break;
    }
    return s;
}

inline mc::EncoderParams params_for(mc::Coding c, int level) {
    mc::EncoderParams p;
    p.coding = c;
    p.level = level;
    return p;
}

}  // namespace mc_test
