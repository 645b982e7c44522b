// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress --train-dictionary: a site dictionary and what it saves.
#pragma once

#include <atomic>
#include <cstddef>

#include "pc_console.h"
#include "pc_options.h"

namespace mc::precompress {

/// Most bytes of input the trainer reads (zdict's COVER needs about 12 bytes of memory per
/// byte); from a larger input an evenly spread selection of files is taken.
inline constexpr std::size_t kMaxTrainingBytes = 32 * 1024 * 1024;

/// Trains a dictionary from the files under `o.roots` (by `o.types`, none under `o.min_size`,
/// SSI files left out unless `o.include_ssi`, byte-identical files once) into `o.train_output`:
/// the files are put in the order of their content's SHA-256, the first `o.holdout_percent` %
/// held back, the rest trained on (mc::train_raw_dictionary: raw content, the same input gives
/// the same bytes), and the held-back files compressed with zstd-3 and br-11 without it and
/// dcz-3 and dcz-19 with it, for the report. Returns the exit status (0; 1 when it could not
/// train or write; 2 for an unusable root).
int train_dictionary(const Options& o, Console& console, const std::atomic<bool>& stop);

}  // namespace mc::precompress
