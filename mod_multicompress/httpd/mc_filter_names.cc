// SPDX-License-Identifier: Apache-2.0
// The filter table: which filter records are ours and which codings each offers.
#include "mc_filter_names.h"

#include <algorithm>
#include <array>

namespace mc::httpd {
namespace {

constexpr mc::CodingSet kAll{mc::Coding::kGzip, mc::Coding::kDeflate, mc::Coding::kBrotli,
                             mc::Coding::kZstd, mc::Coding::kDcz};

struct CompressFilter {
    const char* name;
    mc::CodingSet codings;
};

// One row per filter name; the engine is the same for all.
constexpr std::array<CompressFilter, 4> kFilters{{
    {"DEFLATE", {mc::Coding::kGzip, mc::Coding::kDeflate}},
    {"BROTLI_COMPRESS", {mc::Coding::kBrotli}},
    {"ZSTD", {mc::Coding::kZstd, mc::Coding::kDcz}},  // dcz is zstd with a dictionary
    {"MULTICOMPRESS", kAll},
}};

// Set once in register_hooks, read-only afterwards.
Engine g_engine = nullptr;
std::array<const ap_filter_rec_t*, kFilters.size()> g_records{};

template <std::size_t I>
apr_status_t out_filter(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    return g_engine(f, bb, kFilters[I].codings);
}

constexpr std::array<ap_out_filter_func, kFilters.size()> kFuncs{&out_filter<0>, &out_filter<1>,
                                                                 &out_filter<2>, &out_filter<3>};

}  // namespace

void register_compress_filters(Engine engine) {
    g_engine = engine;
    for (std::size_t i = 0; i < kFilters.size(); ++i) {
        // httpd keeps one record per name for the process (a second registration of the name
        // rewrites it in place), so the address stays the registered one.
        g_records[i] =
            ap_register_output_filter(kFilters[i].name, kFuncs[i], nullptr, AP_FTYPE_CONTENT_SET);
    }
}

bool is_compress_filter_record(const ap_filter_rec_t* frec) {
    return frec != nullptr &&
           std::find(g_records.begin(), g_records.end(), frec) != g_records.end();
}

mc::CodingSet codings_of(const ap_filter_rec_t* frec) {
    if (frec == nullptr) return {};
    const ap_out_filter_func fn = frec->filter_func.out_func;
    for (std::size_t i = 0; i < kFilters.size(); ++i) {
        if (fn == kFuncs[i]) return kFilters[i].codings;
    }
    return {};
}

}  // namespace mc::httpd
