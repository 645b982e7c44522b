// SPDX-License-Identifier: Apache-2.0
// Site dictionaries (RFC 9842): `MultiCompressDictionary URL-PATH FILE match=PATTERN [dest=D]...
// [id=ID]` serves FILE at URL-PATH as a dictionary, announces it with `Link:
// <URL-PATH>; rel="compression-dictionary"` on the responses PATTERN covers, and holds it for
// dcz, for static and dynamic responses alike.
#pragma once

#include <httpd.h>

#include <memory>
#include <string_view>

#include "mc/dictionary.h"

namespace mc::httpd {

/// The site dictionary of `r`'s virtual host whose hash is `h`, or nullptr.
std::shared_ptr<const mc::DictionaryBytes> site_dictionary(const request_rec* r,
                                                           const mc::DictionaryHash& h);
/// Whether a site dictionary of `r`'s virtual host covers `path` (its match pattern).
bool site_dictionary_covers(const request_rec* r, std::string_view path);

/// handler hook: GET/HEAD of a site dictionary's URL-PATH: its bytes, Use-As-Dictionary, a long
/// cache lifetime, validators. DECLINED for every other request.
int serve_site_dictionary(request_rec* r) noexcept;
/// fixups hook: the Link that makes a browser fetch the dictionary, on the responses it covers.
int announce_site_dictionary(request_rec* r) noexcept;

}  // namespace mc::httpd
