// SPDX-License-Identifier: Apache-2.0
// The module's directive table (cmds[]); the handlers live with the feature they configure.
#include "mc_directives.h"

#include "mc_directive_args.h"

namespace mc::httpd {

using directive::fn;
using directive::kEverywhere;

const command_rec kCommands[] = {
    {"MultiCompressEncodings", fn(set_encodings), nullptr, kEverywhere, TAKE_ARGV,
     "Enabled encodings in the server's order of preference: zstd br gzip deflate dcz"},
    {"MultiCompressLevel", fn(set_level), nullptr, kEverywhere, TAKE2,
     "Encoding and level: gzip 1-9, br 0-11, zstd 1-19, dcz 1-19"},
    {"MultiCompressUseAsDictionary", fn(set_use_as_dictionary), nullptr, kEverywhere, TAKE_ARGV,
     "PATTERN [dest=DEST]... [id=ID], or Off: offer responses here as dictionaries (RFC 9842)"},
    {"MultiCompressDictionaryMaxSize", fn(set_dictionary_max_size), nullptr, kEverywhere, TAKE1,
     "Largest response offered as a dictionary (default 4M)"},
    {"MultiCompressDictionary", fn(set_site_dictionary), nullptr, RSRC_CONF, TAKE_ARGV,
     "URL-PATH FILE match=PATTERN [dest=DEST]... [id=ID]: serve FILE as a site dictionary"},
    {"MultiCompressWindow", fn(set_window), nullptr, kEverywhere, TAKE2,
     "Encoding and log2 window: gzip 9-15, br 10-24, zstd 10-23"},
    {"MultiCompressMinLength", fn(set_min_length), nullptr, kEverywhere, TAKE1,
     "Bodies known to be shorter are sent unchanged (default 256)"},
    {"MultiCompressBufferSize", fn(set_buffer_size), nullptr, kEverywhere, TAKE1,
     "Size of the output chunks passed down the filter chain (default 8192)"},
    {"MultiCompressAlterETag", fn(set_etag), nullptr, kEverywhere, TAKE1,
     "AddSuffix (default), NoChange or Remove"},
    {"MultiCompressNote", fn(set_note), nullptr, kEverywhere, TAKE2,
     "ratio|input|output|encoding|source and a note name for LogFormat %{name}n"},
    {"MultiCompressNoTransform", fn(set_no_transform), nullptr, kEverywhere, TAKE1,
     "Honor (default) or Ignore Cache-Control: no-transform"},
    // Measured and kept for the whole server: the main server's value is the budget; a virtual
    // host may turn it Off for itself (docs/contract.md "Under load").
    {"MultiCompressCPUBudget", fn(set_cpu_budget), nullptr, RSRC_CONF, TAKE1,
     "Off (default) or the share of the machine's CPUs live compression may use, e.g. 50%"},
    {"MultiCompressCrossSite", fn(set_cross_site), nullptr, kEverywhere, TAKE1,
     "Compress (default) or Identity: no compression for credentialed cross-site requests"},
    {"MultiCompressMinSaving", fn(set_min_saving), nullptr, kEverywhere, TAKE1,
     "Off or the least saving, in percent, worth compressing a body for (default 5%)"},
    {"MultiCompressTranscode", fn(set_transcode), nullptr, kEverywhere, FLAG,
     "On: decode a response encoded in a coding the client does not accept (default Off)"},
    {"MultiCompressInflateLimit", fn(set_inflate_limit), nullptr, kEverywhere, TAKE1,
     "Most bytes an inflated request body may reach (0: unlimited)"},
    {"MultiCompressInflateRatio", fn(set_inflate_ratio), nullptr, kEverywhere, TAKE12,
     "Most output/input ratio while inflating, and how many times it may be exceeded"},
    {"MultiCompressInflateWindow", fn(set_inflate_window), nullptr, kEverywhere, TAKE1,
     "Largest br or zstd window a request body may need (default 1M, 32K-16M)"},
    {"MultiCompressStatic", fn(set_static), nullptr, kEverywhere, FLAG,
     "On: send a fresh FILE.zst / FILE.br / FILE.gz instead of compressing FILE"},
    {"MultiCompressCache", fn(set_cache), nullptr, kEverywhere, FLAG,
     "On: keep compressed bodies of static files in the cache store"},
    {"MultiCompressCacheStore", fn(set_cache_store), nullptr, RSRC_CONF, TAKE1,
     "socache provider[:args] for the cache, as SSLSessionCache (default shmcb)"},
    {"MultiCompressCacheSecret", fn(set_cache_secret), nullptr, RSRC_CONF, TAKE1,
     "File holding the fleet's secret: cache entries carry and need an HMAC-SHA256 with it"},
    {"MultiCompressCacheMaxEntry", fn(set_cache_max_entry), nullptr, kEverywhere, TAKE1,
     "Largest compressed body the cache keeps (default 1M)"},
    {"MultiCompressCacheLevel", fn(set_cache_level), nullptr, kEverywhere, TAKE2,
     "Encoding and level of the stronger copy made off the request path (br 11, zstd 19, gzip 9)"},
    {"MultiCompressCacheLocal", fn(set_cache_local), nullptr, RSRC_CONF, TAKE1,
     "Bytes of verified cache entries and sidecars read whole each child keeps in its own "
     "memory, or Off (default 8M)"},
    // mod_deflate
    {"DeflateCompressionLevel", fn(deflate_level), nullptr, kEverywhere, TAKE1,
     "gzip level 1-9 (as mod_deflate)"},
    {"DeflateWindowSize", fn(deflate_window), nullptr, kEverywhere, TAKE1,
     "gzip log2 window 1-15 (as mod_deflate)"},
    {"DeflateMemLevel", fn(deflate_mem_level), nullptr, kEverywhere, TAKE1,
     "zlib memLevel 1-9 (as mod_deflate)"},
    {"DeflateBufferSize", fn(deflate_buffer_size), nullptr, kEverywhere, TAKE1,
     "Output buffer size (as mod_deflate)"},
    {"DeflateFilterNote", fn(set_compat_note), kDeflateNotes, kEverywhere, TAKE12,
     "[Input|Output|Ratio] note name (as mod_deflate)"},
    {"DeflateAlterETag", fn(set_etag), nullptr, kEverywhere, TAKE1,
     "AddSuffix, NoChange or Remove (as mod_deflate)"},
    {"DeflateInflateLimitRequestBody", fn(deflate_inflate_limit), nullptr, kEverywhere, TAKE1,
     "Most bytes of an inflated request body (as mod_deflate)"},
    {"DeflateInflateRatioLimit", fn(inflate_ratio_limit), nullptr, kEverywhere, TAKE1,
     "Most inflation ratio of a request body (as mod_deflate)"},
    {"DeflateInflateRatioBurst", fn(inflate_ratio_burst), nullptr, kEverywhere, TAKE1,
     "How many times the ratio may be exceeded (as mod_deflate)"},
    // mod_brotli
    {"BrotliCompressionQuality", fn(brotli_quality), nullptr, kEverywhere, TAKE1,
     "br quality 0-11 (as mod_brotli)"},
    {"BrotliCompressionWindow", fn(brotli_window), nullptr, kEverywhere, TAKE1,
     "br log2 window 10-24 (as mod_brotli)"},
    {"BrotliCompressionMaxInputBlock", fn(brotli_block), nullptr, kEverywhere, TAKE1,
     "br log2 input block 16-24 (as mod_brotli)"},
    {"BrotliFilterNote", fn(set_compat_note), kBrotliNotes, kEverywhere, TAKE12,
     "[Input|Output|Ratio] note name (as mod_brotli)"},
    {"BrotliAlterETag", fn(set_etag), nullptr, kEverywhere, TAKE1,
     "AddSuffix, NoChange or Remove (as mod_brotli)"},
    {nullptr, nullptr, nullptr, 0, RAW_ARGS, nullptr},
};

}  // namespace mc::httpd
