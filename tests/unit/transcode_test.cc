// SPDX-License-Identifier: Apache-2.0
// MultiCompressTranscode's decision.
#include "mc/transcode.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using mc::Coding;

mc::ResponseView view(const char* ce, const char* ae, int status = 200) {
    mc::ResponseView v;
    v.status = status;
    v.content_encoding = ce;
    v.accept_encoding = ae != nullptr ? ae : "";
    v.accept_encoding_present = ae != nullptr;
    return v;
}

struct Case {
    const char* ce;
    const char* ae;  // nullptr: no Accept-Encoding
    bool varies;
    bool decode;
    Coding from;
};

TEST(TranscodeTest, Table) {
    const mc::Config cfg;
    for (const Case& c : std::vector<Case>{
             {"br", "gzip", true, true, Coding::kBrotli},
             {"zstd", "gzip, br", true, true, Coding::kZstd},
             {"br", "identity", true, true, Coding::kBrotli},
             {"br", nullptr, true, true, Coding::kBrotli},  // no header: no coding accepted
             {"br", "", true, true, Coding::kBrotli},
             {"br", "gzip, br;q=0", true, true, Coding::kBrotli},
             {"gzip", "br", true, true, Coding::kGzip},
             {"x-gzip", "identity", true, true, Coding::kGzip},
             {"deflate", "gzip", true, true, Coding::kDeflate},
             {"BR", "gzip", true, true, Coding::kBrotli},
             {"identity, br", "gzip", true, true, Coding::kBrotli},
             // the client accepts it
             {"br", "gzip, br", true, false, Coding::kBrotli},
             {"br", "*", true, false, Coding::kBrotli},
             {"gzip", "x-gzip", true, false, Coding::kGzip},
             {"zstd", "zstd;q=0.1", true, false, Coding::kZstd},
             // not one coding we decode
             {"", "gzip", false, false, Coding::kIdentity},
             {"identity", "gzip", false, false, Coding::kIdentity},
             {"dcz", "gzip", false, false, Coding::kIdentity},
             {"compress", "gzip", false, false, Coding::kIdentity},
             {"gzip, br", "identity", false, false, Coding::kIdentity},
             {"br, br", "identity", false, false, Coding::kIdentity},
         }) {
        const mc::TranscodeVerdict t = mc::transcode_verdict(view(c.ce, c.ae), cfg);
        EXPECT_EQ(t.varies, c.varies) << c.ce << " / " << (c.ae ? c.ae : "(none)");
        EXPECT_EQ(t.decode, c.decode) << c.ce << " / " << (c.ae ? c.ae : "(none)");
        if (c.varies) {
            EXPECT_EQ(t.from, c.from) << c.ce;
        }
    }
}

TEST(TranscodeTest, OnlyWholeResponses) {
    const mc::Config cfg;
    for (const int status : {101, 204, 304, 206}) {
        EXPECT_FALSE(mc::transcode_verdict(view("br", "gzip", status), cfg).decode) << status;
    }
    for (const int status : {200, 404, 500}) {
        EXPECT_TRUE(mc::transcode_verdict(view("br", "gzip", status), cfg).decode) << status;
    }
    mc::ResponseView v = view("br", "gzip");
    v.has_content_range = true;
    EXPECT_FALSE(mc::transcode_verdict(v, cfg).decode);
}

TEST(TranscodeTest, NoTransform) {
    mc::Config cfg;
    mc::ResponseView v = view("br", "gzip");
    v.response_cache_control = "public, no-transform";
    EXPECT_FALSE(mc::transcode_verdict(v, cfg).decode);
    EXPECT_TRUE(mc::transcode_verdict(v, cfg).varies);
    v.response_cache_control = "";
    v.request_cache_control = "no-transform";
    EXPECT_FALSE(mc::transcode_verdict(v, cfg).decode);
    cfg.no_transform = mc::NoTransformMode::kIgnore;
    EXPECT_TRUE(mc::transcode_verdict(v, cfg).decode);
}

}  // namespace
