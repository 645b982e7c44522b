// SPDX-License-Identifier: Apache-2.0
// Header rules: Vary merging, ETag suffixes, list tokens.
#pragma once

#include <string>
#include <string_view>

#include "mc/coding.h"
#include "mc/config.h"

namespace mc {

/// True when the comma-separated header `list` holds `token` (case-insensitive, OWS trimmed,
/// parameters after ';' or '=' ignored). Used for Vary and Cache-Control.
bool list_has_token(std::string_view list, std::string_view token);

/// True when a Content-Encoding value means "not encoded": empty or only "identity".
bool is_identity_encoding(std::string_view content_encoding);

/// The ETag to send with a response compressed as `c` (ETag suffix as mod_deflate, PR 39727):
/// `"abc"` → `"abc-zstd"`, `W/"abc"` → `W/"abc-zstd"`. kNoChange keeps it, kRemove returns "".
/// A value that is not a quoted entity-tag, or that already ends in one of our suffixes, is
/// returned unchanged for kAddSuffix.
std::string alter_etag(std::string_view etag, Coding c, ETagMode mode);

/// Removes our "-gzip" / "-deflate" / "-br" / "-zstd" suffixes from every entity-tag of an
/// If-None-Match / If-Match value, so httpd compares it with the file's own ETag (httpd bug
/// 45023). `*` and tags without a suffix are kept. Returns the input unchanged when nothing is
/// stripped.
std::string strip_etag_suffixes(std::string_view validators);

}  // namespace mc
