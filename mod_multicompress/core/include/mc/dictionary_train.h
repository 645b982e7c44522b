// SPDX-License-Identifier: Apache-2.0
// Training a site dictionary (RFC 9842) from sample responses with libzstd's zdict.h.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "mc/status.h"

namespace mc {

/// Smallest and largest dictionary train_raw_dictionary() makes (zdict needs a few KB; a
/// dictionary is sent to every client that uses it, once).
inline constexpr std::size_t kMinTrainedDictionary = 1024;
inline constexpr std::size_t kMaxTrainedDictionary = 16 * 1024 * 1024;

/// Trains a dictionary of at most `size` bytes on `samples` (one per response, e.g. one per page)
/// with zstd's COVER algorithm (ZDICT_optimizeTrainFromBuffer_cover: segments of d = 8, the
/// segment size k chosen from its default candidates by how well each compresses the samples,
/// one thread) and returns its content alone: RFC 9842 dictionaries are raw bytes, and zstd's
/// dictionary format (magic number, id, entropy tables) is not a dcz dictionary (browsers reject
/// it). The content zdict puts last is the most useful (nearest the body, smallest offsets); when
/// it holds more than `size` bytes the start is dropped. The same samples in the same order give
/// the same bytes. Fails when zdict cannot train (too little input: give it at least about ten
/// times `size`, in more than a handful of samples), saying why.
Result<std::string> train_raw_dictionary(std::span<const std::string_view> samples,
                                         std::size_t size);

}  // namespace mc
