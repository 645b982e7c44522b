// SPDX-License-Identifier: Apache-2.0
// MultiCompressUseAsDictionary and MultiCompressDictionaryMaxSize, and the patterns they offer.
#include "mc_dictionary_config.h"

#include <apr_strings.h>
#include <http_core.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "mc/config.h"
#include "mc/dictionary.h"
#include "mc/hashed_name.h"
#include "mc/headers.h"
#include "mc_config.h"
#include "mc_directive_args.h"
#include "mc_directives.h"
#include "mc_site_dictionary.h"
#include "mc_socache.h"

namespace mc::httpd {
namespace {

using directive::config;
using directive::fail;

// Every pattern the configuration offers (for Vary on the URLs they cover). Written while the
// configuration is read, read-only while requests run; .htaccess patterns only count for their
// own directory (dictionary_may_apply checks the request's own configuration too).
std::vector<std::string> g_patterns;
bool g_patterns_fresh = false;

apr_status_t forget_patterns(void*) noexcept {
    g_patterns.clear();
    g_patterns_fresh = false;
    return APR_SUCCESS;
}

void note_pattern(cmd_parms* cmd, const char* pattern) {
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_RUN_MPM) return;  // .htaccess
    if (!g_patterns_fresh) {
        // A restart reads the configuration again: start over with it.
        g_patterns.clear();
        apr_pool_cleanup_register(cmd->pool, nullptr, forget_patterns, apr_pool_cleanup_null);
        g_patterns_fresh = true;
    }
    if (std::find(g_patterns.begin(), g_patterns.end(), pattern) == g_patterns.end()) {
        g_patterns.emplace_back(pattern);
    }
}

}  // namespace

const char* set_use_as_dictionary(cmd_parms* cmd, void* mconfig, int argc,
                                  char* const argv[]) noexcept {
    return directive::guarded(cmd, [&]() -> const char* {
        mc::Config& cfg = config(mconfig);
        if (argc < 1) return fail(cmd, "needs a pattern or Off", "");
        if (argc == 1 && mc::iequals(argv[0], "Off")) {
            cfg.use_as_dictionary = mc::Toggle::kOff;
            cfg.dictionary_match = nullptr;
            return nullptr;
        }
        const bool automatic = mc::iequals(argv[0], "auto");
        if (!automatic) {
            if (mc::Status st = mc::check_dictionary_pattern(argv[0]); !st.is_ok())
                return fail(cmd, st, argv[0]);
        }
        std::string dests;
        const char* id = nullptr;
        for (int i = 1; i < argc; ++i) {
            const std::string_view a = argv[i];
            if (a.starts_with("dest=")) {
                const std::string_view d = directive::option_value(a, "dest=");
                if (mc::Status st = mc::check_dictionary_dest(d); !st.is_ok())
                    return fail(cmd, st, argv[i]);
                if (!dests.empty()) dests += ' ';
                dests += d;
            } else if (a.starts_with("id=") && automatic) {
                return fail(cmd, "auto takes each dictionary's id from its file name", argv[i]);
            } else if (a.starts_with("id=") && id == nullptr) {
                const std::string_view v = directive::option_value(a, "id=");
                if (mc::Status st = mc::check_dictionary_id(v); !st.is_ok())
                    return fail(cmd, st, argv[i]);
                id = apr_pstrmemdup(cmd->pool, v.data(), v.size());
            } else {
                return fail(cmd, "expects dest=DESTINATION or one id=ID after the pattern",
                            argv[i]);
            }
        }
        cfg.use_as_dictionary = mc::Toggle::kOn;
        cfg.dictionary_match =
            automatic ? mc::kAutoDictionaryMatch.data() : apr_pstrdup(cmd->pool, argv[0]);
        cfg.dictionary_dests = apr_pstrdup(cmd->pool, dests.c_str());
        cfg.dictionary_id = id != nullptr ? apr_pstrdup(cmd->pool, id) : nullptr;
        if (!automatic) note_pattern(cmd, argv[0]);
        note_cache_wanted(cmd);  // dictionaries live in the store
        return nullptr;
    });
}

const char* set_dictionary_max_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    return directive::guarded(cmd, [&] {
        return directive::size(cmd, arg, 1, static_cast<std::int64_t>(mc::kMaxDictionarySize),
                               config(mconfig).dictionary_max_size);
    });
}

bool dictionary_may_apply(const request_rec* r) {
    const char* path = r->parsed_uri.path != nullptr ? r->parsed_uri.path : r->uri;
    if (path == nullptr) return false;
    const mc::Config& cfg = dir_config(r);
    // auto: a hashed bundle's family members are each other's dictionaries.
    if (cfg.dictionary_auto() && mc::parse_hashed_name(path)) return true;
    if (site_dictionary_covers(r, path)) return true;
    if (cfg.offers_dictionary() && mc::pattern_matches(cfg.dictionary_match, path)) return true;
    return std::any_of(g_patterns.begin(), g_patterns.end(),
                       [&](const std::string& p) { return mc::pattern_matches(p, path); });
}

}  // namespace mc::httpd
