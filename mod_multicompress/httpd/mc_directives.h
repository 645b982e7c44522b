// SPDX-License-Identifier: Apache-2.0
// The directive table and, by the file that owns each, the handlers it names: the one header
// through which the table reaches every feature's directives (so the table pulls in no
// feature's header).
#pragma once

#include <httpd.h>
#include <http_config.h>

namespace mc::httpd {

/// The module's cmds[] (mc_directives.cc).
extern const command_rec kCommands[];

// ---- mc_config.cc: the MultiCompress* directives of every section
const char* set_encodings(cmd_parms* cmd, void* mconfig, int argc, char* const argv[]) noexcept;
const char* set_level(cmd_parms* cmd, void* mconfig, const char* enc, const char* value) noexcept;
const char* set_window(cmd_parms* cmd, void* mconfig, const char* enc, const char* value) noexcept;
const char* set_min_length(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_buffer_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_etag(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_note(cmd_parms* cmd, void* mconfig, const char* kind, const char* name) noexcept;
const char* set_no_transform(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_cpu_budget(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_cross_site(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_inflate_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_inflate_ratio(cmd_parms* cmd, void* mconfig, const char* ratio,
                              const char* burst) noexcept;
const char* set_inflate_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_min_saving(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_transcode(cmd_parms* cmd, void* mconfig, int on) noexcept;
const char* set_static(cmd_parms* cmd, void* mconfig, int on) noexcept;
const char* set_cache(cmd_parms* cmd, void* mconfig, int on) noexcept;
const char* set_cache_max_entry(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_cache_level(cmd_parms* cmd, void* mconfig, const char* enc,
                            const char* value) noexcept;

// ---- mc_config_compat.cc: mod_deflate's and mod_brotli's directives, with their meaning
const char* deflate_level(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* deflate_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* deflate_mem_level(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* deflate_buffer_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* deflate_inflate_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* inflate_ratio_limit(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* inflate_ratio_burst(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* brotli_quality(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* brotli_window(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* brotli_block(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
/// DeflateFilterNote / BrotliFilterNote ([Input|Output|Ratio] name): cmd->info says whose.
const char* set_compat_note(cmd_parms* cmd, void* mconfig, const char* a1, const char* a2) noexcept;
extern void* const kDeflateNotes;
extern void* const kBrotliNotes;

// ---- mc_socache.cc: the store (server and virtual host)
const char* set_cache_store(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;
const char* set_cache_secret(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;

// ---- mc_hit_tier.cc: each child's tier of verified cache entries (main server)
const char* set_cache_local(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;

// ---- mc_dictionary_config.cc: compression dictionaries (RFC 9842)
const char* set_use_as_dictionary(cmd_parms* cmd, void* mconfig, int argc,
                                  char* const argv[]) noexcept;
const char* set_dictionary_max_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept;

// ---- mc_site_dictionary.cc: site dictionaries (server and virtual host)
const char* set_site_dictionary(cmd_parms* cmd, void* mconfig, int argc,
                                char* const argv[]) noexcept;

}  // namespace mc::httpd
