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

/// ETag rules (MultiCompressAlterETag AddSuffix). Every representation gets its own validator,
/// and stripping is the exact inverse of altering, whatever the backend's tag looks like:
///
///   backend tag   identity             gzip / br / zstd / deflate
///   "v1"          "v1"                 "v1-gzip" / "v1-br" / ...
///   "v1-gzip"     "v1-gzip-identity"   "v1-gzip-gzip" / "v1-gzip-br" / ...
///   W/"v1-br"     W/"v1-br-identity"   W/"v1-br-gzip" / ...
///   "v1-identity" "v1-identity-identity" ...
///
/// A coded representation always gets its coding's suffix; an identity one keeps the tag
/// unless it already ends in one of our suffixes ("-gzip", "-deflate", "-br", "-zstd",
/// "-dcz-" and 8 hex digits, "-identity"), then it gets "-identity" too. So a tag that ends in one
/// of our suffixes always came from alter_etag, and strip_etag_suffixes (remove exactly one) gives
/// back the backend's tag exactly. Two different (tag, coding) pairs never give the same result.
/// httpd's own tags (hex digits and '-') never end in a suffix, so a static file's identity tag is
/// unchanged.
///
/// kNoChange keeps the tag; kRemove returns "" for a coded response and keeps an identity one.
/// A value that is not a quoted entity-tag is returned unchanged.
/// dcz: the suffix is "-dcz-" and `dcz_tag`, the first kDczEtagTagSize hex digits of the
/// dictionary's hash (dcz_etag_tag), so each dictionary gives its own validator; without a valid
/// `dcz_tag` a dcz tag is "" (none).
inline constexpr std::size_t kDczEtagTagSize = 8;
std::string alter_etag(std::string_view etag, Coding c, ETagMode mode,
                       std::string_view dcz_tag = {});

/// The coding an entity-tag made by alter_etag stands for: the one its suffix names, kIdentity
/// for "-identity" or no suffix.
Coding etag_coding(std::string_view etag);

/// Removes exactly one of our suffixes (see alter_etag) from every entity-tag of an
/// If-None-Match / If-Match value, so the handler or backend compares it with its own ETag
/// (httpd bug 45023). `*` and tags without a suffix are kept. Returns the input unchanged when
/// nothing is stripped.
std::string strip_etag_suffixes(std::string_view validators);

/// If-None-Match as the handler or backend should see it: each entity-tag whose coding
/// (etag_coding) is in `keep` with its suffix stripped, the others left out (they name a
/// representation this request will not get: a 304 for them would be wrong); `*` and items that
/// are not entity-tags as they are. "" when nothing is left (then send no If-None-Match). A dcz
/// tag is kept only for the dictionary `dcz_tag` names.
std::string rewrite_if_none_match(std::string_view validators, CodingSet keep,
                                  std::string_view dcz_tag = {});

/// Whether the entity-tag `etag` matches one of `validators` (an If-None-Match value) by the
/// weak comparison (RFC 9110 §8.8.3.2), or `validators` is `*`.
bool etag_in_list(std::string_view validators, std::string_view etag);

}  // namespace mc
