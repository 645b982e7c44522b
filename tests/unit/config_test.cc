// SPDX-License-Identifier: Apache-2.0
// Directive argument parsing. Effective defaults and merge (a section inherits what it does not
// set): config_merge_test.cc.
#include "mc/config.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mc/coding.h"
#include "mc/params.h"

namespace {

using mc::Code;
using mc::Coding;
using mc::Config;
using mc::ETagMode;
using mc::NoteKind;
using mc::NoTransformMode;
using mc::Status;
using mc::Toggle;

constexpr std::int64_t kK = 1024;
constexpr std::int64_t kM = 1024 * 1024;
constexpr std::int64_t kG = 1024 * 1024 * 1024;

// A rejection must say why: the adapter prints the reason after the directive name.
void expect_rejected(const Status& st, const char* reason_part) {
    EXPECT_FALSE(st.is_ok());
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    ASSERT_NE(st.reason(), nullptr);
    EXPECT_STRNE(st.reason(), "");
    EXPECT_STRNE(st.reason(), "ok");
    EXPECT_NE(std::string(st.reason()).find(reason_part), std::string::npos)
        << "reason \"" << st.reason() << "\" does not mention \"" << reason_part << '"';
}

// ---- parse_int

TEST(ParseIntTest, AcceptsDigitsWithinRange) {
    struct Ok {
        const char* in;
        std::int64_t min, max, out;
    };
    for (const Ok& c : std::vector<Ok>{{"0", 0, 10, 0},
                                       {"10", 0, 10, 10},
                                       {"5", 5, 5, 5},
                                       {"007", 0, 10, 7},
                                       {"9223372036854775807", 0, INT64_MAX, INT64_MAX}}) {
        std::int64_t v = -99;
        EXPECT_TRUE(mc::parse_int(c.in, c.min, c.max, v).is_ok()) << c.in;
        EXPECT_EQ(v, c.out) << c.in;
    }
}

TEST(ParseIntTest, RejectsWithReasonAndLeavesOutputAlone) {
    struct Bad {
        const char* in;
        std::int64_t min, max;
        const char* reason;
    };
    for (const Bad& c : std::vector<Bad>{{"", 0, 10, "number"},
                                         {"11", 0, 10, "range"},
                                         {"4", 5, 10, "range"},
                                         {"-1", -5, 10, "digits"},
                                         {"+1", 0, 10, "digits"},
                                         {" 1", 0, 10, "digits"},
                                         {"1 ", 0, 10, "digits"},
                                         {"0x10", 0, 100, "digits"},
                                         {"1.0", 0, 10, "digits"},
                                         {"1e3", 0, 10000, "digits"},
                                         {"abc", 0, 10, "digits"},
                                         {"9223372036854775808", 0, INT64_MAX, "range"},
                                         {"99999999999999999999999", 0, INT64_MAX, "range"}}) {
        SCOPED_TRACE(c.in);
        std::int64_t v = 42;
        expect_rejected(mc::parse_int(c.in, c.min, c.max, v), c.reason);
        EXPECT_EQ(v, 42);
    }
}

// ---- parse_size: K/M/G are binary units

TEST(ParseSizeTest, AcceptsUnits) {
    struct Ok {
        const char* in;
        std::int64_t out;
    };
    for (const Ok& c : std::vector<Ok>{{"0", 0},
                                       {"512", 512},
                                       {"1K", kK},
                                       {"1k", kK},
                                       {"64K", 64 * kK},
                                       {"8M", 8 * kM},
                                       {"8m", 8 * kM},
                                       {"1G", kG},
                                       {"2g", 2 * kG},
                                       {"1048576", kM}}) {
        std::int64_t v = -1;
        EXPECT_TRUE(mc::parse_size(c.in, 0, INT64_MAX, v).is_ok()) << c.in;
        EXPECT_EQ(v, c.out) << c.in;
    }
}

TEST(ParseSizeTest, RejectsBadSizes) {
    for (const char* in : {"", "K", "M", "1KB", "1.5M", "-1", "-1K", "1T", " 1K", "1K ", "K1",
                           "1 K", "0x1K", "ten"}) {
        SCOPED_TRACE(in);
        std::int64_t v = 7;
        const Status st = mc::parse_size(in, 0, INT64_MAX, v);
        EXPECT_FALSE(st.is_ok());
        EXPECT_STRNE(st.reason(), "ok");
        EXPECT_EQ(v, 7);
    }
}

TEST(ParseSizeTest, ChecksBoundsAfterTheUnit) {
    std::int64_t v = 0;
    // MultiCompressBufferSize bounds.
    EXPECT_TRUE(mc::parse_size("1K", mc::kMinBufferSize, mc::kMaxBufferSize, v).is_ok());
    EXPECT_EQ(v, 1024);
    EXPECT_TRUE(mc::parse_size("16M", mc::kMinBufferSize, mc::kMaxBufferSize, v).is_ok());
    EXPECT_EQ(v, 16 * kM);
    expect_rejected(mc::parse_size("1023", mc::kMinBufferSize, mc::kMaxBufferSize, v), "range");
    expect_rejected(mc::parse_size("16385K", mc::kMinBufferSize, mc::kMaxBufferSize, v), "range");
    expect_rejected(mc::parse_size("1G", mc::kMinBufferSize, mc::kMaxBufferSize, v), "range");
    expect_rejected(mc::parse_size("0", 1, 100, v), "range");
    // No overflow: huge multiples are out of range, not wrapped.
    expect_rejected(mc::parse_size("9000000000G", 0, INT64_MAX, v), "range");
    expect_rejected(mc::parse_size("8589934592G", 0, INT64_MAX, v), "range");
    EXPECT_TRUE(mc::parse_size("8589934591G", 0, INT64_MAX, v).is_ok());
    EXPECT_EQ(v, 8589934591 * kG);
}

// ---- Encodings

TEST(ParseEncodingTest, CanonicalTokensCaseInsensitive) {
    struct Ok {
        const char* in;
        Coding out;
    };
    for (const Ok& c : std::vector<Ok>{{"zstd", Coding::kZstd},
                                       {"ZSTD", Coding::kZstd},
                                       {"br", Coding::kBrotli},
                                       {"Br", Coding::kBrotli},
                                       {"gzip", Coding::kGzip},
                                       {"GZip", Coding::kGzip},
                                       {"deflate", Coding::kDeflate},
                                       {"DEFLATE", Coding::kDeflate}}) {
        Coding out = Coding::kIdentity;
        EXPECT_TRUE(mc::parse_encoding(c.in, out).is_ok()) << c.in;
        EXPECT_EQ(out, c.out) << c.in;
    }
}

TEST(ParseEncodingTest, RejectsUnknownTokensWithReason) {
    for (const char* in : {"identity", "x-gzip", "compress", "brotli", "zstandard", "*", "",
                           "gzip ", " gzip", "gzip,br", "g zip"}) {
        SCOPED_TRACE(in);
        Coding out = Coding::kZstd;
        expect_rejected(mc::parse_encoding(in, out), "unknown encoding");
        EXPECT_EQ(out, Coding::kZstd);
    }
}

TEST(AddEncodingTest, KeepsOrder) {
    Config cfg;
    for (const char* t : {"gzip", "zstd", "deflate", "br"}) {
        ASSERT_TRUE(mc::add_encoding(cfg, t).is_ok()) << t;
    }
    ASSERT_EQ(cfg.order_count, 4);
    const std::vector<Coding> got(cfg.encodings().begin(), cfg.encodings().end());
    EXPECT_EQ(got, (std::vector<Coding>{Coding::kGzip, Coding::kZstd, Coding::kDeflate,
                                        Coding::kBrotli}));
}

TEST(AddEncodingTest, RejectsDuplicatesAndUnknown) {
    Config cfg;
    ASSERT_TRUE(mc::add_encoding(cfg, "br").is_ok());
    ASSERT_TRUE(mc::add_encoding(cfg, "gzip").is_ok());
    expect_rejected(mc::add_encoding(cfg, "br"), "twice");
    expect_rejected(mc::add_encoding(cfg, "GZIP"), "twice");
    expect_rejected(mc::add_encoding(cfg, "lzma"), "unknown encoding");
    expect_rejected(mc::add_encoding(cfg, "x-gzip"), "unknown encoding");
    // Rejected tokens leave the list as it was.
    ASSERT_EQ(cfg.order_count, 2);
    EXPECT_EQ(cfg.encodings()[0], Coding::kBrotli);
    EXPECT_EQ(cfg.encodings()[1], Coding::kGzip);
    // Filling all four and repeating one stays in bounds.
    ASSERT_TRUE(mc::add_encoding(cfg, "zstd").is_ok());
    ASSERT_TRUE(mc::add_encoding(cfg, "deflate").is_ok());
    for (const char* t : {"zstd", "br", "gzip", "deflate"}) {
        expect_rejected(mc::add_encoding(cfg, t), "twice");
    }
    EXPECT_EQ(cfg.order_count, 4);
}

// ---- Levels and windows: docs/contract.md ranges

struct RangeCase {
    const char* enc;
    Coding coding;
    int lo, hi;
};

TEST(SetLevelTest, RangesPerEncoding) {
    for (const RangeCase& c : std::vector<RangeCase>{{"gzip", Coding::kGzip, 1, 9},
                                                     {"deflate", Coding::kDeflate, 1, 9},
                                                     {"br", Coding::kBrotli, 0, 11},
                                                     {"zstd", Coding::kZstd, 1, 19}}) {
        SCOPED_TRACE(c.enc);
        Config cfg;
        for (int v = c.lo; v <= c.hi; ++v) {
            ASSERT_TRUE(mc::set_level(cfg, c.enc, std::to_string(v)).is_ok()) << v;
            EXPECT_EQ(cfg.level[mc::index(c.coding)], v);
            EXPECT_EQ(cfg.level_for(c.coding), v);
        }
        expect_rejected(mc::set_level(cfg, c.enc, std::to_string(c.lo - 1)),
                        c.lo == 0 ? "digits" : "range");
        expect_rejected(mc::set_level(cfg, c.enc, std::to_string(c.hi + 1)), "range");
        expect_rejected(mc::set_level(cfg, c.enc, "high"), "digits");
        expect_rejected(mc::set_level(cfg, c.enc, ""), "number");
        EXPECT_EQ(cfg.level[mc::index(c.coding)], c.hi) << "a rejected value changed the level";
    }
}

TEST(SetLevelTest, RejectsUnknownEncoding) {
    Config cfg;
    expect_rejected(mc::set_level(cfg, "lz4", "1"), "unknown encoding");
    expect_rejected(mc::set_level(cfg, "identity", "1"), "unknown encoding");
    for (const auto l : cfg.level) EXPECT_EQ(l, -1);
}

TEST(SetWindowTest, RangesPerEncoding) {
    for (const RangeCase& c : std::vector<RangeCase>{{"gzip", Coding::kGzip, 9, 15},
                                                     {"deflate", Coding::kDeflate, 9, 15},
                                                     {"br", Coding::kBrotli, 10, 24},
                                                     {"zstd", Coding::kZstd, 10, 23}}) {
        SCOPED_TRACE(c.enc);
        Config cfg;
        for (int v = c.lo; v <= c.hi; ++v) {
            ASSERT_TRUE(mc::set_window(cfg, c.enc, std::to_string(v)).is_ok()) << v;
            EXPECT_EQ(cfg.window_for(c.coding), v);
        }
        expect_rejected(mc::set_window(cfg, c.enc, std::to_string(c.lo - 1)), "range");
        expect_rejected(mc::set_window(cfg, c.enc, std::to_string(c.hi + 1)), "range");
        expect_rejected(mc::set_window(cfg, c.enc, "-1"), "digits");
        EXPECT_EQ(cfg.window_for(c.coding), c.hi);
    }
    // zstd stays within the 8 MiB browsers accept (RFC 9659).
    Config cfg;
    expect_rejected(mc::set_window(cfg, "zstd", "24"), "range");
    expect_rejected(mc::set_window(cfg, "zstd", "27"), "range");
    expect_rejected(mc::set_window(cfg, "x-gzip", "12"), "unknown encoding");
}

// ---- Keyword arguments

TEST(ParseEtagModeTest, Keywords) {
    struct Ok {
        const char* in;
        ETagMode out;
    };
    for (const Ok& c : std::vector<Ok>{{"AddSuffix", ETagMode::kAddSuffix},
                                       {"addsuffix", ETagMode::kAddSuffix},
                                       {"NoChange", ETagMode::kNoChange},
                                       {"NOCHANGE", ETagMode::kNoChange},
                                       {"Remove", ETagMode::kRemove},
                                       {"remove", ETagMode::kRemove}}) {
        ETagMode m = ETagMode::kUnset;
        EXPECT_TRUE(mc::parse_etag_mode(c.in, m).is_ok()) << c.in;
        EXPECT_EQ(m, c.out) << c.in;
    }
    for (const char* in : {"", "Add", "Suffix", "On", "Off", "AddSuffix ", "Unset"}) {
        ETagMode m = ETagMode::kNoChange;
        expect_rejected(mc::parse_etag_mode(in, m), "AddSuffix");
        EXPECT_EQ(m, ETagMode::kNoChange);
    }
}

TEST(ParseNoteKindTest, Keywords) {
    struct Ok {
        const char* in;
        NoteKind out;
    };
    for (const Ok& c : std::vector<Ok>{{"ratio", NoteKind::kRatio},
                                       {"Ratio", NoteKind::kRatio},
                                       {"input", NoteKind::kInput},
                                       {"INPUT", NoteKind::kInput},
                                       {"output", NoteKind::kOutput},
                                       {"encoding", NoteKind::kEncoding},
                                       {"Encoding", NoteKind::kEncoding},
                                       {"source", NoteKind::kSource}}) {
        NoteKind k = NoteKind::kRatio;
        EXPECT_TRUE(mc::parse_note_kind(c.in, k).is_ok()) << c.in;
        EXPECT_EQ(k, c.out) << c.in;
    }
    for (const char* in : {"", "bytes", "instream", "ratio ", "in"}) {
        NoteKind k = NoteKind::kOutput;
        expect_rejected(mc::parse_note_kind(in, k), "ratio");
        EXPECT_EQ(k, NoteKind::kOutput);
    }
}

TEST(ParseToggleTest, OnOff) {
    struct Ok {
        const char* in;
        Toggle out;
    };
    for (const Ok& c : std::vector<Ok>{{"On", Toggle::kOn},
                                       {"on", Toggle::kOn},
                                       {"ON", Toggle::kOn},
                                       {"Off", Toggle::kOff},
                                       {"off", Toggle::kOff}}) {
        Toggle t = Toggle::kUnset;
        EXPECT_TRUE(mc::parse_toggle(c.in, t).is_ok()) << c.in;
        EXPECT_EQ(t, c.out) << c.in;
    }
    for (const char* in : {"", "yes", "no", "1", "0", "true", "Onn", "O", " On"}) {
        SCOPED_TRACE(in);
        Toggle t = Toggle::kUnset;
        expect_rejected(mc::parse_toggle(in, t), "On or Off");
        EXPECT_EQ(t, Toggle::kUnset);
    }
}

TEST(SetCacheLevelTest, RangesPerEncodingAndDefaults) {
    // MultiCompressCacheLevel: same ranges as MultiCompressLevel; defaults br 11, zstd 19, gzip 9.
    const Config defaults;
    EXPECT_EQ(defaults.cache_level_for(Coding::kBrotli), 11);
    EXPECT_EQ(defaults.cache_level_for(Coding::kZstd), 19);
    EXPECT_EQ(defaults.cache_level_for(Coding::kGzip), 9);
    for (const RangeCase& c : std::vector<RangeCase>{{"gzip", Coding::kGzip, 1, 9},
                                                     {"deflate", Coding::kDeflate, 1, 9},
                                                     {"br", Coding::kBrotli, 0, 11},
                                                     {"zstd", Coding::kZstd, 1, 19}}) {
        SCOPED_TRACE(c.enc);
        Config cfg;
        for (int v = c.lo; v <= c.hi; ++v) {
            ASSERT_TRUE(mc::set_cache_level(cfg, c.enc, std::to_string(v)).is_ok()) << v;
            EXPECT_EQ(cfg.cache_level_for(c.coding), v);
        }
        expect_rejected(mc::set_cache_level(cfg, c.enc, std::to_string(c.hi + 1)), "range");
        expect_rejected(mc::set_cache_level(cfg, c.enc, "max"), "digits");
        EXPECT_EQ(cfg.cache_level_for(c.coding), c.hi);
        // The request-path level is separate.
        EXPECT_EQ(cfg.level_for(c.coding), mc::default_level(c.coding));
    }
    Config cfg;
    expect_rejected(mc::set_cache_level(cfg, "identity", "1"), "unknown encoding");
}

}  // namespace

TEST(ConfigParseTest, CrossSiteModes) {
    mc::CrossSiteMode m = mc::CrossSiteMode::kUnset;
    EXPECT_TRUE(mc::parse_cross_site_mode("Identity", m).is_ok());
    EXPECT_EQ(m, mc::CrossSiteMode::kIdentity);
    EXPECT_TRUE(mc::parse_cross_site_mode("compress", m).is_ok());
    EXPECT_EQ(m, mc::CrossSiteMode::kCompress);
    for (const char* bad : {"", "On", "identityx", "Off"}) {
        mc::CrossSiteMode keep = mc::CrossSiteMode::kIdentity;
        EXPECT_FALSE(mc::parse_cross_site_mode(bad, keep).is_ok()) << bad;
        EXPECT_EQ(keep, mc::CrossSiteMode::kIdentity) << "an error changes nothing: " << bad;
    }
    Config cfg;
    EXPECT_FALSE(cfg.cross_site_identity()) << "default: Compress";
    cfg.cross_site = mc::CrossSiteMode::kIdentity;
    EXPECT_TRUE(cfg.cross_site_identity());
}

TEST(ConfigParseTest, CpuBudget) {
    std::int16_t v = -1;
    EXPECT_TRUE(mc::parse_cpu_budget("Off", v).is_ok());
    EXPECT_EQ(v, 0);
    EXPECT_TRUE(mc::parse_cpu_budget("50", v).is_ok());
    EXPECT_EQ(v, 50);
    EXPECT_TRUE(mc::parse_cpu_budget("100%", v).is_ok());
    EXPECT_EQ(v, 100);
    for (const char* bad : {"", "0", "101", "50%%", "%", "-5", "1.5", "on"}) {
        std::int16_t keep = 7;
        EXPECT_FALSE(mc::parse_cpu_budget(bad, keep).is_ok()) << bad;
        EXPECT_EQ(keep, 7) << bad;
    }
    Config cfg;
    EXPECT_EQ(cfg.cpu_budget_share(), 0.0) << "default Off";
    cfg.cpu_budget = 25;
    EXPECT_DOUBLE_EQ(cfg.cpu_budget_share(), 0.25);
}
