// SPDX-License-Identifier: Apache-2.0
// Directive handlers: parse with the core, report errors naming the directive (httpd adds the
// file and line), and the per-directory create/merge that lets a section inherit what it does
// not set.
#include "mc_config.h"

#include <apr_strings.h>
#include <http_log.h>

#include <new>
#include <string_view>

#include "mc/config.h"
#include "mc_dictionary.h"
#include "mc_saving.h"
#include "mc_socache.h"
#include "mc_transcode.h"
#include "mc_log.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

mc::Config& cfg_of(void* mconfig) {
    return *static_cast<mc::Config*>(mconfig);
}

const char* fail(cmd_parms* cmd, mc::Status st, const char* arg) {
    return apr_psprintf(cmd->pool, "%s: %s (got '%s')", cmd->cmd->name, st.reason(), arg);
}

const char* fail_ranged(cmd_parms* cmd, const char* what, const char* enc, mc::Range r,
                        const char* arg) {
    return apr_psprintf(cmd->pool, "%s: %s for %s must be a whole number from %d to %d (got '%s')",
                        cmd->cmd->name, what, enc, r.min, r.max, arg);
}

// Every handler httpd calls is noexcept; exceptions (std::bad_alloc) end here.
template <class F>
const char* guarded(cmd_parms* cmd, F&& body) noexcept {
    try {
        return body();
    } catch (...) {
        return apr_psprintf(cmd->pool, "%s: internal error while parsing", cmd->cmd->name);
    }
}

const char* set_encodings(cmd_parms* cmd, void* mconfig, int argc, char* const argv[]) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::Config& cfg = cfg_of(mconfig);
        if (argc < 1)
            return apr_psprintf(cmd->pool, "%s: needs at least one encoding", cmd->cmd->name);
        cfg.order_count = 0;
        for (int i = 0; i < argc; ++i) {
            if (mc::Status st = mc::add_encoding(cfg, argv[i]); !st.is_ok()) {
                return fail(cmd, st, argv[i]);
            }
        }
        return nullptr;
    });
}

// "ENC N" directives: the encoding, then a number in that encoding's range.
using EncodingSetter = mc::Status (*)(mc::Config&, std::string_view, std::string_view);

const char* set_per_encoding(cmd_parms* cmd, void* mconfig, const char* enc, const char* value,
                             EncodingSetter set, mc::Range (*range_of)(mc::Coding),
                             const char* what) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::Coding c{};
        if (mc::Status st = mc::parse_encoding(enc, c); !st.is_ok()) return fail(cmd, st, enc);
        if (!set(cfg_of(mconfig), enc, value).is_ok()) {
            return fail_ranged(cmd, what, enc, range_of(c), value);
        }
        return nullptr;
    });
}

const char* set_level(cmd_parms* cmd, void* mconfig, const char* enc, const char* value) noexcept {
    return set_per_encoding(cmd, mconfig, enc, value, &mc::set_level, &mc::level_range, "level");
}

const char* set_window(cmd_parms* cmd, void* mconfig, const char* enc, const char* value) noexcept {
    if (mc::iequals(enc, "dcz")) {
        return apr_psprintf(cmd->pool,
                            "%s: dcz has no window setting: it follows the dictionary "
                            "(RFC 9842)",
                            cmd->cmd->name);
    }
    return set_per_encoding(cmd, mconfig, enc, value, &mc::set_window, &mc::window_range,
                            "log2 window");
}

// Parses a size or count into `out`; the directive's own range is in `lo`..`hi`.
const char* size_into(cmd_parms* cmd, const char* arg, std::int64_t lo, std::int64_t hi,
                      std::int64_t& out) {
    if (mc::Status st = mc::parse_size(arg, lo, hi, out); !st.is_ok()) {
        return apr_psprintf(cmd->pool,
                            "%s: expects a size from %" APR_INT64_T_FMT " to %" APR_INT64_T_FMT
                            " bytes, digits with an optional K, M or G (got '%s')",
                            cmd->cmd->name, static_cast<apr_int64_t>(lo),
                            static_cast<apr_int64_t>(hi), arg);
    }
    return nullptr;
}

const char* set_min_length(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return size_into(cmd, arg, 0, std::int64_t{1} << 40, cfg_of(mconfig).min_length);
    });
}

const char* set_buffer_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return size_into(cmd, arg, mc::kMinBufferSize, mc::kMaxBufferSize,
                         cfg_of(mconfig).buffer_size);
    });
}

const char* set_etag(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::Status st = mc::parse_etag_mode(arg, cfg_of(mconfig).etag); !st.is_ok()) {
            return fail(cmd, st, arg);
        }
        return nullptr;
    });
}

const char* set_no_transform(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        const std::string_view v(arg);
        if (mc::iequals(v, "Honor")) {
            cfg_of(mconfig).no_transform = mc::NoTransformMode::kHonor;
        } else if (mc::iequals(v, "Ignore")) {
            cfg_of(mconfig).no_transform = mc::NoTransformMode::kIgnore;
        } else {
            return fail(cmd, {mc::Code::kInvalidArgument, "expects Honor or Ignore"}, arg);
        }
        return nullptr;
    });
}

const char* set_cpu_budget(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::Status st = mc::parse_cpu_budget(arg, cfg_of(mconfig).cpu_budget); !st.is_ok()) {
            return fail(cmd, st, arg);
        }
        return nullptr;
    });
}

const char* set_cross_site(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::Status st = mc::parse_cross_site_mode(arg, cfg_of(mconfig).cross_site);
            !st.is_ok()) {
            return fail(cmd, st, arg);
        }
        return nullptr;
    });
}

const char* set_note(cmd_parms* cmd, void* mconfig, const char* kind, const char* name) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::NoteKind k{};
        if (mc::Status st = mc::parse_note_kind(kind, k); !st.is_ok()) return fail(cmd, st, kind);
        cfg_of(mconfig).notes[static_cast<std::size_t>(k)] = apr_pstrdup(cmd->pool, name);
        return nullptr;
    });
}

// cmd_data of DeflateFilterNote and BrotliFilterNote: which module's notes a line sets.
char g_deflate_notes = 0;
char g_brotli_notes = 0;
void* const kDeflateNotes = &g_deflate_notes;
void* const kBrotliNotes = &g_brotli_notes;

// DeflateFilterNote / BrotliFilterNote: "[Input|Output|Ratio] name"; a bare name is the ratio.
// Each keeps its own names (cmd->info), set only for its module's codings (see set_notes).
const char* set_compat_note(cmd_parms* cmd, void* mconfig, const char* a1,
                            const char* a2) noexcept {
    return guarded(cmd, [&]() -> const char* {
        const char* kind = a2 == nullptr ? "ratio" : a1;
        const char* name = a2 == nullptr ? a1 : a2;
        mc::NoteKind k{};
        const mc::Status st = mc::parse_note_kind(kind, k);
        if (!st.is_ok() || static_cast<std::size_t>(k) >= mc::kCompatNoteKinds) {
            return fail(cmd, {mc::Code::kInvalidArgument, "expects Input, Output or Ratio"}, kind);
        }
        mc::Config& cfg = cfg_of(mconfig);
        auto& names = cmd->info == kBrotliNotes ? cfg.brotli_notes : cfg.deflate_notes;
        names[static_cast<std::size_t>(k)] = apr_pstrdup(cmd->pool, name);
        return nullptr;
    });
}

const char* set_inflate_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return size_into(cmd, arg, 0, std::int64_t{1} << 50, cfg_of(mconfig).inflate_limit);
    });
}

// mod_deflate: 0 means "as LimitRequestBody" (kInflateLimitAsRequestBody), not unlimited.
const char* deflate_inflate_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        if (const char* err = size_into(cmd, arg, 0, std::int64_t{1} << 50, v)) return err;
        cfg_of(mconfig).inflate_limit = v == 0 ? mc::kInflateLimitAsRequestBody : v;
        return nullptr;
    });
}

const char* set_int32(cmd_parms* cmd, const char* arg, std::int64_t lo, std::int64_t hi,
                      std::int32_t& out) {
    std::int64_t v = 0;
    if (!mc::parse_int(arg, lo, hi, v).is_ok()) {
        return apr_psprintf(cmd->pool, "%s: expects a whole number from %d to %d (got '%s')",
                            cmd->cmd->name, static_cast<int>(lo), static_cast<int>(hi), arg);
    }
    out = static_cast<std::int32_t>(v);
    return nullptr;
}

const char* set_inflate_ratio(cmd_parms* cmd, void* mconfig, const char* ratio,
                              const char* burst) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::Config& cfg = cfg_of(mconfig);
        if (const char* err = set_int32(cmd, ratio, 1, 1000000, cfg.inflate_ratio)) return err;
        if (burst != nullptr) return set_int32(cmd, burst, 0, 1000000, cfg.inflate_burst);
        return nullptr;
    });
}

const char* set_static(cmd_parms* /*cmd*/, void* mconfig, int on) noexcept {
    cfg_of(mconfig).static_files = on != 0 ? mc::Toggle::kOn : mc::Toggle::kOff;
    return nullptr;
}

const char* set_cache(cmd_parms* cmd, void* mconfig, int on) noexcept {
    cfg_of(mconfig).cache = on != 0 ? mc::Toggle::kOn : mc::Toggle::kOff;
    if (on != 0) note_cache_wanted(cmd);
    return nullptr;
}

const char* set_cache_max_entry(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return size_into(cmd, arg, 1, std::int64_t{64} << 20, cfg_of(mconfig).cache_max_entry);
    });
}

const char* set_cache_level(cmd_parms* cmd, void* mconfig, const char* enc,
                            const char* value) noexcept {
    return set_per_encoding(cmd, mconfig, enc, value, &mc::set_cache_level, &mc::level_range,
                            "level");
}

// ---- mod_deflate / mod_brotli compatibility: same argument, same meaning.

const char* deflate_level(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::Config& cfg = cfg_of(mconfig);
        if (!mc::set_level(cfg, "gzip", arg).is_ok()) {
            return fail_ranged(cmd, "level", "gzip", mc::level_range(mc::Coding::kGzip), arg);
        }
        return nullptr;
    });
}

const char* deflate_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        // mod_deflate takes 1–15; zlib's gzip wrapper needs at least 9 (it used 9 for 8 too).
        if (!mc::parse_int(arg, 1, 15, v).is_ok()) {
            return apr_psprintf(cmd->pool, "%s: expects a whole number from 1 to 15 (got '%s')",
                                cmd->cmd->name, arg);
        }
        cfg_of(mconfig).window[mc::index(mc::Coding::kGzip)] =
            static_cast<std::int16_t>(v < 9 ? 9 : v);
        return nullptr;
    });
}

const char* deflate_mem_level(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int32_t v = 0;
        if (const char* err = set_int32(cmd, arg, 1, 9, v)) return err;
        cfg_of(mconfig).mem_level = static_cast<std::int16_t>(v);
        return nullptr;
    });
}

const char* deflate_buffer_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        if (const char* err = size_into(cmd, arg, 1, mc::kMaxBufferSize, v)) return err;
        // mod_deflate allows tiny buffers; below 1 KiB only costs calls, so round up.
        cfg_of(mconfig).buffer_size = v < mc::kMinBufferSize ? mc::kMinBufferSize : v;
        return nullptr;
    });
}

const char* brotli_quality(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (!mc::set_level(cfg_of(mconfig), "br", arg).is_ok()) {
            return fail_ranged(cmd, "quality", "br", mc::level_range(mc::Coding::kBrotli), arg);
        }
        return nullptr;
    });
}

const char* brotli_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (!mc::set_window(cfg_of(mconfig), "br", arg).is_ok()) {
            return fail_ranged(cmd, "log2 window", "br", mc::window_range(mc::Coding::kBrotli),
                               arg);
        }
        return nullptr;
    });
}

const char* brotli_block(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        // mod_brotli: 0 (library default) or 16–24.
        if (!mc::parse_int(arg, 0, mc::kBrotliBlockRange.max, v).is_ok() ||
            (v != 0 && v < mc::kBrotliBlockRange.min)) {
            return apr_psprintf(cmd->pool,
                                "%s: expects 0 or a whole number from 16 to 24 (got '%s')",
                                cmd->cmd->name, arg);
        }
        cfg_of(mconfig).brotli_lgblock = static_cast<std::int16_t>(v);
        return nullptr;
    });
}

const char* inflate_ratio_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd,
                   [&] { return set_int32(cmd, arg, 1, 1000000, cfg_of(mconfig).inflate_ratio); });
}

const char* inflate_ratio_burst(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd,
                   [&] { return set_int32(cmd, arg, 0, 1000000, cfg_of(mconfig).inflate_burst); });
}

// C++ sees cmd_func as `const char* (*)()`: cast like every C++ httpd module does.
template <class F>
cmd_func fn(F* f) {
    // Through void(*)(), the generic function pointer type GCC accepts without a warning.
    return reinterpret_cast<cmd_func>(reinterpret_cast<void (*)()>(f));
}

constexpr int kWhere = RSRC_CONF | ACCESS_CONF | OR_FILEINFO;

}  // namespace

const command_rec kCommands[] = {
    {"MultiCompressEncodings", fn(set_encodings), nullptr, kWhere, TAKE_ARGV,
     "Enabled encodings in the server's order of preference: zstd br gzip deflate dcz"},
    {"MultiCompressLevel", fn(set_level), nullptr, kWhere, TAKE2,
     "Encoding and level: gzip 1-9, br 0-11, zstd 1-19, dcz 1-19"},
    {"MultiCompressUseAsDictionary", fn(set_use_as_dictionary), nullptr, kWhere, TAKE_ARGV,
     "PATTERN [dest=DEST]... [id=ID], or Off: offer responses here as dictionaries (RFC 9842)"},
    {"MultiCompressDictionaryMaxSize", fn(set_dictionary_max_size), nullptr, kWhere, TAKE1,
     "Largest response offered as a dictionary (default 4M)"},
    {"MultiCompressWindow", fn(set_window), nullptr, kWhere, TAKE2,
     "Encoding and log2 window: gzip 9-15, br 10-24, zstd 10-23"},
    {"MultiCompressMinLength", fn(set_min_length), nullptr, kWhere, TAKE1,
     "Bodies known to be shorter are sent unchanged (default 256)"},
    {"MultiCompressBufferSize", fn(set_buffer_size), nullptr, kWhere, TAKE1,
     "Size of the output chunks passed down the filter chain (default 8192)"},
    {"MultiCompressAlterETag", fn(set_etag), nullptr, kWhere, TAKE1,
     "AddSuffix (default), NoChange or Remove"},
    {"MultiCompressNote", fn(set_note), nullptr, kWhere, TAKE2,
     "ratio|input|output|encoding and a note name for LogFormat %{name}n"},
    {"MultiCompressNoTransform", fn(set_no_transform), nullptr, kWhere, TAKE1,
     "Honor (default) or Ignore Cache-Control: no-transform"},
    // Measured and kept for the whole server: the main server's value is the budget; a virtual
    // host may turn it Off for itself (docs/contract.md "Under load").
    {"MultiCompressCPUBudget", fn(set_cpu_budget), nullptr, RSRC_CONF, TAKE1,
     "Off (default) or the share of the machine's CPUs live compression may use, e.g. 50%"},
    {"MultiCompressCrossSite", fn(set_cross_site), nullptr, kWhere, TAKE1,
     "Compress (default) or Identity: no compression for credentialed cross-site requests"},
    {"MultiCompressMinSaving", fn(set_min_saving), nullptr, kWhere, TAKE1,
     "Off or the least saving, in percent, worth compressing a body for (default 5%)"},
    {"MultiCompressTranscode", fn(set_transcode), nullptr, kWhere, FLAG,
     "On: decode a response encoded in a coding the client does not accept (default Off)"},
    {"MultiCompressInflateLimit", fn(set_inflate_limit), nullptr, kWhere, TAKE1,
     "Most bytes an inflated request body may reach (0: unlimited)"},
    {"MultiCompressInflateRatio", fn(set_inflate_ratio), nullptr, kWhere, TAKE12,
     "Most output/input ratio while inflating, and how many times it may be exceeded"},
    {"MultiCompressStatic", fn(set_static), nullptr, kWhere, FLAG,
     "On: send a fresh FILE.zst / FILE.br / FILE.gz instead of compressing FILE"},
    {"MultiCompressCache", fn(set_cache), nullptr, kWhere, FLAG,
     "On: keep compressed bodies of static files in the cache store"},
    {"MultiCompressCacheStore", fn(set_cache_store), nullptr, RSRC_CONF, TAKE1,
     "socache provider[:args] for the cache, as SSLSessionCache (default shmcb)"},
    {"MultiCompressCacheSecret", fn(set_cache_secret), nullptr, RSRC_CONF, TAKE1,
     "File holding the fleet's secret: cache entries carry and need an HMAC-SHA256 with it"},
    {"MultiCompressCacheMaxEntry", fn(set_cache_max_entry), nullptr, kWhere, TAKE1,
     "Largest compressed body the cache keeps (default 1M)"},
    {"MultiCompressCacheLevel", fn(set_cache_level), nullptr, kWhere, TAKE2,
     "Encoding and level of the stronger copy made off the request path (br 11, zstd 19, gzip 9)"},
    // mod_deflate
    {"DeflateCompressionLevel", fn(deflate_level), nullptr, kWhere, TAKE1,
     "gzip level 1-9 (as mod_deflate)"},
    {"DeflateWindowSize", fn(deflate_window), nullptr, kWhere, TAKE1,
     "gzip log2 window 1-15 (as mod_deflate)"},
    {"DeflateMemLevel", fn(deflate_mem_level), nullptr, kWhere, TAKE1,
     "zlib memLevel 1-9 (as mod_deflate)"},
    {"DeflateBufferSize", fn(deflate_buffer_size), nullptr, kWhere, TAKE1,
     "Output buffer size (as mod_deflate)"},
    {"DeflateFilterNote", fn(set_compat_note), kDeflateNotes, kWhere, TAKE12,
     "[Input|Output|Ratio] note name (as mod_deflate)"},
    {"DeflateAlterETag", fn(set_etag), nullptr, kWhere, TAKE1,
     "AddSuffix, NoChange or Remove (as mod_deflate)"},
    {"DeflateInflateLimitRequestBody", fn(deflate_inflate_limit), nullptr, kWhere, TAKE1,
     "Most bytes of an inflated request body (as mod_deflate)"},
    {"DeflateInflateRatioLimit", fn(inflate_ratio_limit), nullptr, kWhere, TAKE1,
     "Most inflation ratio of a request body (as mod_deflate)"},
    {"DeflateInflateRatioBurst", fn(inflate_ratio_burst), nullptr, kWhere, TAKE1,
     "How many times the ratio may be exceeded (as mod_deflate)"},
    // mod_brotli
    {"BrotliCompressionQuality", fn(brotli_quality), nullptr, kWhere, TAKE1,
     "br quality 0-11 (as mod_brotli)"},
    {"BrotliCompressionWindow", fn(brotli_window), nullptr, kWhere, TAKE1,
     "br log2 window 10-24 (as mod_brotli)"},
    {"BrotliCompressionMaxInputBlock", fn(brotli_block), nullptr, kWhere, TAKE1,
     "br log2 input block 16-24 (as mod_brotli)"},
    {"BrotliFilterNote", fn(set_compat_note), kBrotliNotes, kWhere, TAKE12,
     "[Input|Output|Ratio] note name (as mod_brotli)"},
    {"BrotliAlterETag", fn(set_etag), nullptr, kWhere, TAKE1,
     "AddSuffix, NoChange or Remove (as mod_brotli)"},
    {nullptr, nullptr, nullptr, 0, RAW_ARGS, nullptr},
};

void* create_dir_config(apr_pool_t* p, char* /*dir*/) noexcept {
    // Config is trivially destructible: placement-new into the pool needs no cleanup.
    return new (apr_palloc(p, sizeof(mc::Config))) mc::Config();
}

void* merge_dir_config(apr_pool_t* p, void* base, void* add) noexcept {
    return new (apr_palloc(p, sizeof(mc::Config))) mc::Config(
        mc::merge(*static_cast<const mc::Config*>(base), *static_cast<const mc::Config*>(add)));
}

}  // namespace mc::httpd
