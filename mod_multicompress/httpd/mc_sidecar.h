// SPDX-License-Identifier: Apache-2.0
// Sidecars (FILE.zst / FILE.br / FILE.gz next to FILE): finding one that may be sent instead of
// compressing FILE (docs/contract.md "Sidecars and the cache: what may be sent").
#pragma once

#include <httpd.h>
#include <apr_file_io.h>

#include <cstdint>
#include <string_view>

#include "mc/coding.h"
#include "mc/dictionary.h"
#include "mc/hit_tier.h"
#include "mc_request_state.h"

namespace mc::httpd {

/// A sidecar found sendable.
struct Sidecar {
    const char* path = nullptr;
    apr_finfo_t finfo{};       ///< the target's, when a symlink is allowed
    apr_file_t* fd = nullptr;  ///< open for reading (in r->pool); nullptr when `kept`
    /// Its bytes as this child kept them for this version of it (MultiCompressCacheLocal), held
    /// until r->pool is cleared: found after the same lookup, with its checks known to pass.
    mc::TierBody* kept = nullptr;
    /// How the default handler would open it at its own URL (APR_SENDFILE_ENABLED as
    /// EnableSendfile says there).
    apr_int32_t open_flags = APR_READ | APR_BINARY;
    bool sent_before = false;  ///< this child sent it for this version of FILE (no lstat made)
};

/// The sidecar of `coding` for `r`'s file, when it may be sent: a direct request for its own URL
/// by this client would get those very bytes with a 200 (translate_name, map_to_storage, the
/// symlink Options, every access rule, its handler), it is at least as new as FILE, the server
/// can open it (or read this very version of it before: `kept`), and (zstd) every frame needs at
/// most an 8 MiB window. False otherwise: the reason at trace1; an unreadable or undecodable one
/// is warned about once per version of the file.
bool find_sidecar(request_rec* r, mc::Coding coding, Sidecar& out);

/// Where the delta sidecar against the dictionary the request names (st.named, which must be
/// set) would be: `path` is FILE + `.dcz-HEX16` (in r->pool), `suffix` its tail; both nullptr
/// when no such file is there at all. One lstat, none when this child sent it for this version
/// of FILE before; find_delta_sidecar checks. Looked for once per request (kept in `st`: a
/// conditional request asks before the handler does).
const DeltaSidecarPath& delta_sidecar_there(request_rec* r, RequestState& st);

/// The delta sidecar made at deploy time against the dictionary the request names (`there`
/// from delta_sidecar_there, a whole dcz body): the same checks as every sidecar, and its dcz
/// header names exactly `named`, and its zstd frame's window is one the client keeps (at most
/// max(8 MiB, 1.25 x the dictionary) with `dictionary_size`, else 8 MiB). A sidecar whose header
/// names another dictionary is never sent (logged once per file version).
bool find_delta_sidecar(request_rec* r, const mc::DictionaryHash& named,
                        const DeltaSidecarPath& there, std::size_t dictionary_size, Sidecar& out);

/// How the module sends a sidecar of `size` bytes to `r`'s client. kFirst: smaller than one
/// bucket buffer (a delta is a few hundred bytes), read whole before its headers are set, so it
/// goes out with them in one writev, where a file bucket would cost an lseek before its read, or
/// TCP_CORK on and off around its own sendfile. kForBody: up to kReadWholeBytes, read whole once
/// its body is to be sent (not for a HEAD or a 304), where the child's tier would keep it
/// (keep_sidecar: later hits open nothing; with sendfile on a 13 KB sidecar hit costs 79 against
/// 91 us of CPU, bench/hits_perf.py --sendfile) or over TLS: mod_ssl reads every byte anyway, and
/// HTTP/2 cuts a file bucket into frames, each read with an lseek() and a read() (a 187 KB
/// sidecar: 20 of each per response; 411 against 363 us of CPU per hit, a 28 KB one 196 against
/// 186, in alternating rounds of bench/hits_perf.py --tls). kAsFile: a file bucket (sendfile as
/// EnableSendfile says).
enum class SidecarRead : std::uint8_t { kFirst, kForBody, kAsFile };
SidecarRead sidecar_read(const request_rec* r, apr_off_t size);

/// After `side` was read whole (`bytes`) from its open file: keeps a copy in the child's tier for
/// the next requests, when the file is still the version its lookup found (an fstat of the open
/// file), so a file replaced or rewritten meanwhile is never kept under the old version's name.
void keep_sidecar(request_rec* r, const Sidecar& side, std::string_view bytes);

/// translate_name and post_perdir_config hook: keeps the sidecar lookup's subrequest quiet (its
/// refusals are the answer the handler asked for, not errors to log for every request).
int quiet_sidecar_probe(request_rec* r) noexcept;

}  // namespace mc::httpd
