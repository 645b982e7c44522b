// SPDX-License-Identifier: Apache-2.0
// Sidecars (FILE.zst / FILE.br / FILE.gz next to FILE): finding one that may be sent instead of
// compressing FILE (docs/contract.md "Sidecars and the cache: what may be sent").
#pragma once

#include <httpd.h>
#include <apr_file_io.h>

#include "mc/coding.h"
#include "mc/dictionary.h"
#include "mc_request_state.h"

namespace mc::httpd {

/// A sidecar found sendable.
struct Sidecar {
    const char* path = nullptr;
    apr_finfo_t finfo{};       ///< the target's, when a symlink is allowed
    apr_file_t* fd = nullptr;  ///< open for reading (in r->pool)
    /// How the default handler would open it at its own URL (APR_SENDFILE_ENABLED as
    /// EnableSendfile says there).
    apr_int32_t open_flags = APR_READ | APR_BINARY;
    bool sent_before = false;  ///< this child sent it for this version of FILE (no lstat made)
};

/// The sidecar of `coding` for `r`'s file, when it may be sent: a direct request for its own URL
/// by this client would get those very bytes with a 200 (translate_name, map_to_storage, the
/// symlink Options, every access rule, its handler), it is at least as new as FILE, the server
/// can open it, and (zstd) every frame needs at most an 8 MiB window. False otherwise: the reason
/// at trace1; an unreadable or undecodable one is warned about once per version of the file.
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

/// translate_name and post_perdir_config hook: keeps the sidecar lookup's subrequest quiet (its
/// refusals are the answer the handler asked for, not errors to log for every request).
int quiet_sidecar_probe(request_rec* r) noexcept;

}  // namespace mc::httpd
