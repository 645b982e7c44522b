// SPDX-License-Identifier: Apache-2.0
// Library-level benchmark: what verifying a cache entry costs (mc::parse_entry), with the CRC-32
// alone and with the HMAC-SHA256 of MultiCompressCacheSecret, and what making one costs
// (mc::encode_entry). Bodies of 4 KiB, 100 KiB and 1 MiB (MultiCompressCacheMaxEntry's default).
// Counter: bytes_per_second (entry body MB/s).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mc/cache_entry.h"
#include "mc/coding.h"

namespace {

constexpr std::string_view kKey = "mc2-0123456789abcdef0123456789abcdef01234567";
constexpr std::string_view kSecret = "0123456789abcdef0123456789abcdef";

mc::EntryIdentity identity() {
    mc::EntryIdentity id;
    id.key = kKey;
    id.size = 1 << 20;
    id.mtime = 1'700'000'000'000'000;
    id.inode = 42;
    id.coding = mc::Coding::kBrotli;
    return id;
}

std::string body_of(std::size_t n) {
    std::string b(n, '\0');
    std::uint32_t x = 2463534242u;
    for (char& c : b) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x & 0xff);
    }
    return b;
}

void BM_Parse(benchmark::State& state, bool with_secret) {
    const std::string_view secret = with_secret ? kSecret : std::string_view{};
    const std::string e =
        mc::encode_entry(identity(), 11, body_of(static_cast<std::size_t>(state.range(0))), secret);
    for (auto _ : state) {
        auto p = mc::parse_entry(e, identity(), secret);
        benchmark::DoNotOptimize(p);
        if (!p.ok()) state.SkipWithError("entry refused");
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_Encode(benchmark::State& state, bool with_secret) {
    const std::string_view secret = with_secret ? kSecret : std::string_view{};
    const std::string body = body_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        std::string e = mc::encode_entry(identity(), 11, body, secret);
        benchmark::DoNotOptimize(e);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_Crc32(benchmark::State& state) {
    const std::string body = body_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(mc::entry_crc32(body));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

BENCHMARK_CAPTURE(BM_Parse, crc, false)->Arg(4 << 10)->Arg(100 << 10)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_Parse, crc_hmac, true)->Arg(4 << 10)->Arg(100 << 10)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_Encode, crc, false)->Arg(100 << 10);
BENCHMARK_CAPTURE(BM_Encode, crc_hmac, true)->Arg(100 << 10);
BENCHMARK(BM_Crc32)->Arg(4 << 10)->Arg(100 << 10)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
