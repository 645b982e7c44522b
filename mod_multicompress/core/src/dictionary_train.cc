// SPDX-License-Identifier: Apache-2.0
// Site dictionaries: zdict's COVER trainer, keeping the content alone (RFC 9842 raw dictionaries).
#include "mc/dictionary_train.h"

#define ZDICT_STATIC_LINKING_ONLY  // ZDICT_optimizeTrainFromBuffer_cover
#include <zdict.h>

#include <algorithm>
#include <vector>

namespace mc {

namespace {

// Room for zstd's dictionary header (magic, id, entropy tables: about 200 bytes), which is
// trained and then dropped.
constexpr std::size_t kHeaderRoom = 1024;
// COVER's segment length; zstd's own default (`zstd --train-cover` tries 6 and 8; 8 did better
// on HTML and JavaScript here, bench/dictionary.py).
constexpr unsigned kCoverD = 8;
// Candidate segment sizes tried (zstd's default is 40; 4 gives 0.4 % larger bodies in a sixth of
// the time on the Apache manual).
constexpr unsigned kCoverSteps = 4;

}  // namespace

Result<std::string> train_raw_dictionary(std::span<const std::string_view> samples,
                                         std::size_t size) {
    if (size < kMinTrainedDictionary || size > kMaxTrainedDictionary) {
        return Status{Code::kInvalidArgument, "dictionary size out of range"};
    }
    std::string all;
    std::vector<std::size_t> sizes;
    std::size_t total = 0;
    for (const std::string_view s : samples) total += s.size();
    all.reserve(total);
    sizes.reserve(samples.size());
    for (const std::string_view s : samples) {
        if (s.empty()) continue;
        all.append(s);
        sizes.push_back(s.size());
    }
    if (sizes.empty()) return Status{Code::kInvalidArgument, "nothing to train on"};

    std::string trained(size + kHeaderRoom, '\0');
    ZDICT_cover_params_t params{};
    params.d = kCoverD;
    params.steps = kCoverSteps;
    params.nbThreads = 1;  // one thread: the same input gives the same dictionary
    const std::size_t n = ZDICT_optimizeTrainFromBuffer_cover(
        trained.data(), trained.size(), all.data(), sizes.data(),
        static_cast<unsigned>(sizes.size()), &params);
    if (ZDICT_isError(n)) {
        // zdict's names ("Src size is incorrect", "Error (generic)") mean too little input.
        return Status{Code::kInvalidArgument,
                      "zstd could not train a dictionary from this input (too little of it?)"};
    }
    const std::size_t header = ZDICT_getDictHeaderSize(trained.data(), n);
    if (ZDICT_isError(header) || header >= n) {
        return Status{Code::kLibraryError, "zstd made a dictionary without content"};
    }
    const std::size_t content = std::min(n - header, size);
    return trained.substr(n - content, content);
}

}  // namespace mc
