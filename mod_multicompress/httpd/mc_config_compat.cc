// SPDX-License-Identifier: Apache-2.0
// mod_deflate's and mod_brotli's directives: the same argument means the same as there, so a
// configuration keeps working when the LoadModule line changes (docs/contract.md).
#include <apr_strings.h>

#include "mc_directive_args.h"
#include "mc_directives.h"

namespace mc::httpd {

using directive::config;
using directive::fail;
using directive::guarded;

namespace {

// cmd_data of DeflateFilterNote and BrotliFilterNote: which module's notes a line sets.
char g_deflate_notes = 0;
char g_brotli_notes = 0;

}  // namespace

void* const kDeflateNotes = &g_deflate_notes;
void* const kBrotliNotes = &g_brotli_notes;

const char* deflate_level(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::per_encoding(cmd, mconfig, "gzip", arg, &mc::set_level, &mc::level_range,
                                       "level");
    });
}

const char* deflate_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        // mod_deflate takes 1-15; zlib's gzip wrapper needs at least 9 (it used 9 for 8 too).
        if (const char* err = directive::whole(cmd, arg, 1, 15, v)) return err;
        config(mconfig).window[mc::index(mc::Coding::kGzip)] =
            static_cast<std::int16_t>(v < 9 ? 9 : v);
        return nullptr;
    });
}

const char* deflate_mem_level(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::whole_into(cmd, arg, mc::kMemLevelRange.min, mc::kMemLevelRange.max,
                                     config(mconfig).mem_level);
    });
}

const char* deflate_buffer_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        if (const char* err = directive::size(cmd, arg, 1, mc::kMaxBufferSize, v)) return err;
        // mod_deflate allows tiny buffers; below 1 KiB only costs calls, so round up.
        config(mconfig).buffer_size = v < mc::kMinBufferSize ? mc::kMinBufferSize : v;
        return nullptr;
    });
}

// mod_deflate: 0 means "as LimitRequestBody" (kInflateLimitAsRequestBody), not unlimited.
const char* deflate_inflate_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        if (const char* err = directive::size(cmd, arg, 0, std::int64_t{1} << 50, v)) return err;
        config(mconfig).inflate_limit = v == 0 ? mc::kInflateLimitAsRequestBody : v;
        return nullptr;
    });
}

const char* inflate_ratio_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::whole_into(cmd, arg, 1, 1000000, config(mconfig).inflate_ratio);
    });
}

const char* inflate_ratio_burst(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::whole_into(cmd, arg, 0, 1000000, config(mconfig).inflate_burst);
    });
}

const char* brotli_quality(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::per_encoding(cmd, mconfig, "br", arg, &mc::set_level, &mc::level_range,
                                       "quality");
    });
}

const char* brotli_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::per_encoding(cmd, mconfig, "br", arg, &mc::set_window, &mc::window_range,
                                       "log2 window");
    });
}

const char* brotli_block(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        std::int64_t v = 0;
        // mod_brotli: 0 (library default) or 16-24.
        if (!mc::parse_int(arg, 0, mc::kBrotliBlockRange.max, v).is_ok() ||
            (v != 0 && v < mc::kBrotliBlockRange.min)) {
            return fail(cmd, "expects 0 or a whole number from 16 to 24", arg);
        }
        config(mconfig).brotli_lgblock = static_cast<std::int16_t>(v);
        return nullptr;
    });
}

// "[Input|Output|Ratio] name"; a bare name is the ratio. Each module keeps its own names, set
// only for its codings (mc_filter.cc, set_notes).
const char* set_compat_note(cmd_parms* cmd, void* mconfig, const char* a1,
                            const char* a2) noexcept {
    return guarded(cmd, [&]() -> const char* {
        const char* kind = a2 == nullptr ? "ratio" : a1;
        const char* name = a2 == nullptr ? a1 : a2;
        mc::NoteKind k{};
        const mc::Status st = mc::parse_note_kind(kind, k);
        if (!st.is_ok() || static_cast<std::size_t>(k) >= mc::kCompatNoteKinds) {
            return fail(cmd, "expects Input, Output or Ratio", kind);
        }
        mc::Config& cfg = config(mconfig);
        auto& names = cmd->info == kBrotliNotes ? cfg.brotli_notes : cfg.deflate_notes;
        names[static_cast<std::size_t>(k)] = apr_pstrdup(cmd->pool, name);
        return nullptr;
    });
}

}  // namespace mc::httpd
