// SPDX-License-Identifier: Apache-2.0
// MultiCompressMinSaving and MultiCompressTranscode: parsing, defaults, merge (config_test.cc's
// fill_all/expect_same/all_fields cover them with every other field).
#include <gtest/gtest.h>

#include <cstdint>

#include "mc/config.h"

namespace {

using mc::Config;
using mc::Toggle;

TEST(ConfigParseTest, MinSaving) {
    std::int16_t v = -1;
    EXPECT_TRUE(mc::parse_min_saving("Off", v).is_ok());
    EXPECT_EQ(v, 0);
    EXPECT_TRUE(mc::parse_min_saving("off", v).is_ok());
    EXPECT_EQ(v, 0);
    EXPECT_TRUE(mc::parse_min_saving("10", v).is_ok());
    EXPECT_EQ(v, 10);
    EXPECT_TRUE(mc::parse_min_saving("1%", v).is_ok());
    EXPECT_EQ(v, 1);
    EXPECT_TRUE(mc::parse_min_saving("99%", v).is_ok());
    EXPECT_EQ(v, 99);
    for (const char* bad : {"", "0", "100", "5%%", "%", "-5", "2.5", "on", "5 %"}) {
        std::int16_t keep = 7;
        EXPECT_FALSE(mc::parse_min_saving(bad, keep).is_ok()) << bad;
        EXPECT_EQ(keep, 7) << bad;
    }
    Config cfg;
    EXPECT_EQ(cfg.min_saving_value(), mc::kDefaultMinSaving);
    cfg.min_saving = 0;
    EXPECT_EQ(cfg.min_saving_value(), 0) << "Off";
    // A section that says Off stops the parent's percentage, and the other way round.
    Config parent;
    parent.min_saving = 30;
    EXPECT_EQ(mc::merge(parent, cfg).min_saving_value(), 0);
    EXPECT_EQ(mc::merge(cfg, parent).min_saving_value(), 30);
    EXPECT_EQ(mc::merge(parent, Config{}).min_saving_value(), 30);
}

TEST(ConfigParseTest, TranscodeIsOffUnlessOn) {
    Config cfg;
    EXPECT_FALSE(cfg.transcode_on());
    Config on;
    on.transcode = Toggle::kOn;
    EXPECT_TRUE(mc::merge(cfg, on).transcode_on());
    Config off;
    off.transcode = Toggle::kOff;
    EXPECT_FALSE(mc::merge(on, off).transcode_on());
    EXPECT_TRUE(mc::merge(on, Config{}).transcode_on());
}

}  // namespace
