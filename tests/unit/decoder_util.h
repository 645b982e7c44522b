// SPDX-License-Identifier: Apache-2.0
// Test helper for the mc::Decoder tests (decoder_test.cc, decoder_members_test.cc): bodies,
// streams made by our encoders, and a decoder that must be made. Header-only; unit tests only.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "decode.h"
#include "mc/decoder.h"
#include "mc/encoder.h"
#include "mc/sink.h"

namespace mc_test {

inline constexpr mc::InflateLimits kNoLimits{0, 0, 0};

inline std::string compress(mc::Coding c, std::string_view body, int level = 3) {
    mc::EncoderParams p;
    p.coding = c;
    p.level = level;
    mc::StringSink sink;
    const auto n = mc::compress_all(p, as_bytes(body), sink);
    EXPECT_TRUE(n.is_ok()) << n.status().reason();
    return sink.take();
}

inline std::string text(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::string s;
    while (s.size() < n) s += "line " + std::to_string(rng() % 1000) + " of the request body\n";
    s.resize(n);
    return s;
}

inline std::string noise(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& ch : s) ch = static_cast<char>(rng() >> 24);
    return s;
}

inline std::unique_ptr<mc::Decoder> decoder(mc::Coding c,
                                            const mc::InflateLimits& limits = kNoLimits) {
    auto d = mc::make_decoder(c, limits);
    EXPECT_TRUE(d.is_ok()) << d.status().reason();
    return d.is_ok() ? std::move(d).value() : nullptr;
}

}  // namespace mc_test
