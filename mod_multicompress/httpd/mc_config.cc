// SPDX-License-Identifier: Apache-2.0
// The per-directory configuration: create/merge, and the handlers of the MultiCompress*
// directives every section may set (parsed with the core, written as mc_directive_args.h says).
#include "mc_config.h"

#include <apr_strings.h>

#include <new>

#include "mc_directive_args.h"
#include "mc_directives.h"
#include "mc_socache.h"

namespace mc::httpd {

using directive::config;
using directive::fail;
using directive::guarded;

void* create_dir_config(apr_pool_t* p, char* /*dir*/) noexcept {
    // Config is trivially destructible: placement-new into the pool needs no cleanup.
    return new (apr_palloc(p, sizeof(mc::Config))) mc::Config();
}

void* merge_dir_config(apr_pool_t* p, void* base, void* add) noexcept {
    return new (apr_palloc(p, sizeof(mc::Config))) mc::Config(
        mc::merge(*static_cast<const mc::Config*>(base), *static_cast<const mc::Config*>(add)));
}

const char* set_encodings(cmd_parms* cmd, void* mconfig, int argc, char* const argv[]) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::Config& cfg = config(mconfig);
        if (argc < 1) return fail(cmd, "needs at least one encoding", "");
        cfg.order_count = 0;
        for (int i = 0; i < argc; ++i) {
            if (mc::Status st = mc::add_encoding(cfg, argv[i]); !st.is_ok()) {
                return fail(cmd, st, argv[i]);
            }
        }
        return nullptr;
    });
}

const char* set_level(cmd_parms* cmd, void* mconfig, const char* enc, const char* value) noexcept {
    return guarded(cmd, [&] {
        return directive::per_encoding(cmd, mconfig, enc, value, &mc::set_level, &mc::level_range,
                                       "level");
    });
}

const char* set_window(cmd_parms* cmd, void* mconfig, const char* enc, const char* value) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::iequals(enc, "dcz")) {
            return fail(cmd, "dcz has no window setting: it follows the dictionary (RFC 9842)",
                        enc);
        }
        return directive::per_encoding(cmd, mconfig, enc, value, &mc::set_window, &mc::window_range,
                                       "log2 window");
    });
}

const char* set_min_length(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::size(cmd, arg, 0, std::int64_t{1} << 40, config(mconfig).min_length);
    });
}

const char* set_buffer_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::size(cmd, arg, mc::kMinBufferSize, mc::kMaxBufferSize,
                               config(mconfig).buffer_size);
    });
}

const char* set_etag(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::Status st = mc::parse_etag_mode(arg, config(mconfig).etag); !st.is_ok()) {
            return fail(cmd, st, arg);
        }
        return nullptr;
    });
}

const char* set_note(cmd_parms* cmd, void* mconfig, const char* kind, const char* name) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::NoteKind k{};
        if (mc::Status st = mc::parse_note_kind(kind, k); !st.is_ok()) return fail(cmd, st, kind);
        config(mconfig).notes[static_cast<std::size_t>(k)] = apr_pstrdup(cmd->pool, name);
        return nullptr;
    });
}

const char* set_no_transform(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        int which = 0;
        if (const char* err = directive::keyword(cmd, arg, {"Honor", "Ignore"}, which)) return err;
        config(mconfig).no_transform =
            which == 0 ? mc::NoTransformMode::kHonor : mc::NoTransformMode::kIgnore;
        return nullptr;
    });
}

const char* set_cpu_budget(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::Status st = mc::parse_cpu_budget(arg, config(mconfig).cpu_budget); !st.is_ok()) {
            return fail(cmd, st, arg);
        }
        return nullptr;
    });
}

const char* set_cross_site(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::Status st = mc::parse_cross_site_mode(arg, config(mconfig).cross_site);
            !st.is_ok()) {
            return fail(cmd, st, arg);
        }
        return nullptr;
    });
}

const char* set_inflate_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::size(cmd, arg, 0, std::int64_t{1} << 50, config(mconfig).inflate_limit);
    });
}

const char* set_inflate_ratio(cmd_parms* cmd, void* mconfig, const char* ratio,
                              const char* burst) noexcept {
    return guarded(cmd, [&]() -> const char* {
        mc::Config& cfg = config(mconfig);
        if (const char* err = directive::whole_into(cmd, ratio, 1, 1000000, cfg.inflate_ratio))
            return err;
        if (burst == nullptr) return nullptr;
        return directive::whole_into(cmd, burst, 0, 1000000, cfg.inflate_burst);
    });
}

const char* set_inflate_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::size(cmd, arg, mc::kMinInflateWindow, mc::kMaxInflateWindow,
                               config(mconfig).inflate_window);
    });
}

const char* set_min_saving(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&]() -> const char* {
        if (mc::Status st = mc::parse_min_saving(arg, config(mconfig).min_saving); !st.is_ok()) {
            return fail(cmd, st, arg);
        }
        return nullptr;
    });
}

const char* set_transcode(cmd_parms* cmd, void* mconfig, int on) noexcept {
    return guarded(cmd, [&]() -> const char* {
        config(mconfig).transcode = on != 0 ? mc::Toggle::kOn : mc::Toggle::kOff;
        return nullptr;
    });
}

const char* set_static(cmd_parms* cmd, void* mconfig, int on) noexcept {
    return guarded(cmd, [&]() -> const char* {
        config(mconfig).static_files = on != 0 ? mc::Toggle::kOn : mc::Toggle::kOff;
        return nullptr;
    });
}

const char* set_cache(cmd_parms* cmd, void* mconfig, int on) noexcept {
    return guarded(cmd, [&]() -> const char* {
        config(mconfig).cache = on != 0 ? mc::Toggle::kOn : mc::Toggle::kOff;
        if (on != 0) note_cache_wanted(cmd);
        return nullptr;
    });
}

const char* set_cache_max_entry(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return guarded(cmd, [&] {
        return directive::size(cmd, arg, 1, std::int64_t{64} << 20,
                               config(mconfig).cache_max_entry);
    });
}

const char* set_cache_level(cmd_parms* cmd, void* mconfig, const char* enc,
                            const char* value) noexcept {
    return guarded(cmd, [&] {
        return directive::per_encoding(cmd, mconfig, enc, value, &mc::set_cache_level,
                                       &mc::level_range, "level");
    });
}

}  // namespace mc::httpd
