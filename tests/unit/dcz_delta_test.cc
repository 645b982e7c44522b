// SPDX-License-Identifier: Apache-2.0
// Deltas made off the request path (mc/dcz_delta.h): sidecar names, the header check, and bodies
// that decode, stay within the dcz window and are never larger than the live frame or
// `zstd --patch-from`'s.
#include "mc/dcz_delta.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getCParams
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <memory>
#include <string>

#include "decode.h"
#include "mc/encoder.h"
#include "mc/sink.h"

namespace {

using mc_test::as_bytes;

std::shared_ptr<const mc::DictionaryBytes> dict_of(const std::string& bytes) {
    auto d = std::make_shared<mc::DictionaryBytes>();
    d->bytes = bytes;
    d->hash = mc::sha256(as_bytes(bytes));
    return d;
}

TEST(DczDelta, SidecarNames) {
    const mc::DictionaryHash h = mc::sha256(as_bytes(std::string_view("v1")));
    const std::string suffix = mc::delta_sidecar_suffix(h);
    EXPECT_EQ(suffix, ".dcz-" + mc::hash_hex(h).substr(0, 16));
    const std::string path = "/var/www/assets/app.3f9a1c2b.js" + suffix;
    const auto parsed = mc::parse_delta_sidecar_name(path);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->source, "/var/www/assets/app.3f9a1c2b.js");
    EXPECT_EQ(parsed->hex, mc::hash_hex(h).substr(0, 16));
    EXPECT_TRUE(mc::parse_delta_sidecar_name("a.js.dcz-0123456789abcdef"));
    EXPECT_FALSE(mc::parse_delta_sidecar_name("a.js.dcz-0123456789ABCDEF"));   // uppercase
    EXPECT_FALSE(mc::parse_delta_sidecar_name("a.js.dcz-0123456789abcde"));    // 15 digits
    EXPECT_FALSE(mc::parse_delta_sidecar_name("a.js.dcz-0123456789abcdef0"));  // 17 digits
    EXPECT_FALSE(mc::parse_delta_sidecar_name("a.js.dcz-0123456789abcdeg"));
    EXPECT_FALSE(mc::parse_delta_sidecar_name(".dcz-0123456789abcdef"));  // no FILE
    EXPECT_FALSE(mc::parse_delta_sidecar_name("dir/.dcz-0123456789abcdef"));
    EXPECT_FALSE(mc::parse_delta_sidecar_name("a.js.br"));
}

TEST(DczDelta, BodyNamesItsDictionary) {
    const mc::DictionaryHash h = mc::sha256(as_bytes(std::string_view("v1")));
    const mc::DictionaryHash other = mc::sha256(as_bytes(std::string_view("v2")));
    const auto header = mc::dcz_header(h);
    std::string body(reinterpret_cast<const char*>(header.data()), header.size());
    body += "frame";
    EXPECT_TRUE(mc::dcz_body_names(as_bytes(body), h));
    EXPECT_FALSE(mc::dcz_body_names(as_bytes(body), other));
    EXPECT_FALSE(mc::dcz_body_names(as_bytes(body.substr(0, 39)), h));  // cut short
}

// A release of a minified bundle: functions whose constants change a little between versions.
std::string bundle(int version, std::size_t n) {
    std::string s;
    for (int i = 0; s.size() < n; ++i) {
        s += "function f" + std::to_string(i) + "(a){return a*" + std::to_string(i * 7919 % 10007) +
             ";}/*" + (i % 89 == 0 ? "v" + std::to_string(version) : std::string("v1")) + "*/\n";
    }
    return s;
}

// A release of a stylesheet: rules drawn from a small vocabulary (short repeats everywhere, as in
// a CSS framework), the next release the same with a rule added now and then.
std::string stylesheet(int version, std::size_t n) {
    static const char* const kSelectors[] = {".btn",   ".card",  ".nav",   ".row",   ".col",
                                             ".alert", ".badge", ".modal", ".form",  ".table",
                                             ".list",  ".text",  ".bg",    ".border"};
    static const char* const kProperties[] = {
        "margin", "padding",   "color",         "display",  "flex",       "width",
        "height", "font-size", "border-radius", "position", "line-height"};
    static const char* const kValues[] = {
        "0",      "1rem",  "auto",     "none",    "inherit",           "100%",
        "50%",    "block", "relative", "#0d6efd", "var(--bs-primary)", "0.25rem",
        "#6c757d"};
    std::uint64_t x = 7;
    auto next = [&x] {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::size_t>(x >> 33);
    };
    std::string s;
    for (int i = 1; s.size() < n; ++i) {
        s += kSelectors[next() % std::size(kSelectors)];
        s += "-" + std::to_string(next() % 12) + "{";
        for (std::size_t k = 1 + next() % 4; k > 0; --k) {
            s += kProperties[next() % std::size(kProperties)];
            s += ':';
            s += kValues[next() % std::size(kValues)];
            s += ';';
        }
        s += '}';
        if (i % 997 == 0 && version > 1) s += ".v" + std::to_string(version) + "{}";
    }
    return s;
}

std::string decode(const std::string& frame, const std::string& dict) {
    ZSTD_DCtx* d = ZSTD_createDCtx();
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, mc::dcz_max_window_log(dict.size()));
    ZSTD_DCtx_refPrefix(d, dict.data(), dict.size());
    std::string out(ZSTD_getFrameContentSize(frame.data(), frame.size()), '\0');
    const std::size_t n =
        ZSTD_decompressDCtx(d, out.data(), out.size(), frame.data(), frame.size());
    ZSTD_freeDCtx(d);
    EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
    out.resize(ZSTD_isError(n) ? 0 : n);
    return out;
}

// `zstd -L --no-check --patch-from=DICT` as zstd 1.5.4's programs/fileio.c sets it up.
std::size_t cli_size(const std::string& body, const std::string& dict, int level) {
    unsigned highbit = 0;
    while ((std::size_t{2} << highbit) <= body.size()) ++highbit;
    const ZSTD_compressionParameters cp = ZSTD_getCParams(level, body.size(), dict.size());
    const unsigned cycle = cp.chainLog - (cp.strategy >= ZSTD_btlazy2 ? 1 : 0);
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, static_cast<int>(highbit + 1));
    if (highbit + 1 > cycle) ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, 1);
    ZSTD_CCtx_refPrefix(c, dict.data(), dict.size());
    std::string out(ZSTD_compressBound(body.size()), '\0');
    const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), body.data(), body.size());
    ZSTD_freeCCtx(c);
    return n;
}

struct Pair {
    const char* name;
    std::string old_release;
    std::string new_release;
};

class DczDeltaBody : public ::testing::TestWithParam<int> {};

TEST_P(DczDeltaBody, DecodesAndIsTheSmallerOfLiveAndPatchFrom) {
    const int level = GetParam();
    const Pair pairs[] = {
        {"bundle", bundle(1, 90000), bundle(2, 91000)},
        {"stylesheet", stylesheet(1, 200000), stylesheet(2, 200000)},
    };
    bool patch_from_won = false;
    for (const Pair& pair : pairs) {
        SCOPED_TRACE(pair.name);
        auto prepared = mc::PreparedDictionary::make(dict_of(pair.old_release), level);
        ASSERT_TRUE(prepared.is_ok());
        const mc::PreparedDictionary& dict = *prepared.value();
        auto made = mc::make_dcz_delta(dict, as_bytes(pair.new_release));
        ASSERT_TRUE(made.is_ok()) << made.status().reason();
        const std::string& body = made.value().body;
        patch_from_won = patch_from_won || made.value().patch_from;

        ASSERT_TRUE(mc::dcz_body_names(as_bytes(body), dict.hash()));
        const std::string frame = body.substr(mc::kDczHeaderSize);
        EXPECT_EQ(decode(frame, pair.old_release), pair.new_release);
        ZSTD_frameHeader fh{};
        ASSERT_EQ(ZSTD_getFrameHeader(&fh, frame.data(), frame.size()), 0u);
        EXPECT_LE(fh.windowSize, std::uint64_t{1} << mc::dcz_max_window_log(dict.size()));
        EXPECT_EQ(fh.frameContentSize, pair.new_release.size());
        EXPECT_EQ(fh.checksumFlag, 0u);

        // Never larger than what the module sends live...
        mc::EncoderParams p;
        p.coding = mc::Coding::kDcz;
        p.level = level;
        p.dictionary = &dict;
        p.size_hint = static_cast<std::int64_t>(pair.new_release.size());
        p.exact_size = true;
        auto enc = mc::make_encoder(p);
        ASSERT_TRUE(enc.is_ok());
        mc::StringSink live;
        ASSERT_TRUE(
            enc.value()->write(as_bytes(pair.new_release), mc::Flush::kFinish, live).is_ok());
        EXPECT_LE(body.size(), live.data().size());
        // ...nor than `zstd --patch-from` at the same level.
        EXPECT_LE(frame.size(), cli_size(pair.new_release, pair.old_release, level));
        EXPECT_LT(body.size() * 20, pair.new_release.size());
    }
    // At the fast levels --patch-from's long-distance matching wins on the stylesheet.
    if (level == 3) {
        EXPECT_TRUE(patch_from_won);
    }
}

INSTANTIATE_TEST_SUITE_P(Levels, DczDeltaBody, ::testing::Values(3, 19));

}  // namespace
