// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: families of content-hashed files and their dcz delta sidecars.
#include "pc_delta.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <system_error>

#include "mc/dcz_delta.h"
#include "mc/hashed_name.h"
#include "pc_options.h"

namespace mc::precompress {

namespace fs = std::filesystem;

namespace {

// Directory, stem, separator and extension: what the members of a family share.
std::optional<std::string> family_key(const fs::path& path) {
    const std::string name = path.filename().string();
    const std::optional<HashedName> h = parse_hashed_name(name);
    if (!h) return std::nullopt;
    std::error_code ec;
    fs::path dir = fs::absolute(path, ec).lexically_normal().parent_path();
    if (ec) dir = path.parent_path();
    std::string key = dir.string();
    key += '\0';
    key.append(h->stem);
    key += h->separator;
    key += '\0';
    key.append(h->ext);
    return key;
}

bool newer(const Source& a, const Source& b) {
    if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec > b.mtime.tv_sec;
    if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec > b.mtime.tv_nsec;
    return a.path.filename() < b.path.filename();
}

fs::path delta_path(const fs::path& file, const DictionaryHash& hash) {
    fs::path p = file;
    p += delta_sidecar_suffix(hash);
    return p;
}

std::span<const std::byte> bytes_of(const std::string& s) {
    return std::as_bytes(std::span(s.data(), s.size()));
}

}  // namespace

DeltaPlan plan_deltas(std::span<const Source> sources, const std::vector<bool>& wanted,
                      std::span<const fs::path> existing, unsigned n, bool force) {
    DeltaPlan plan;
    std::map<std::string, std::vector<std::size_t>> families;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        if (!wanted[i] || sources[i].size == 0) continue;
        if (std::optional<std::string> key = family_key(sources[i].path)) {
            families[*key].push_back(i);
        }
    }

    std::map<std::size_t, std::optional<DictionaryHash>> hashes;  // read once per dictionary
    auto hash_of = [&](std::size_t d) -> std::optional<DictionaryHash> {
        auto [it, added] = hashes.try_emplace(d);
        if (!added) return it->second;
        std::string bytes;
        struct stat st {};
        if (std::string err = read_whole(sources[d].path, bytes, st); !err.empty()) {
            plan.errors.push_back(std::move(err));
            plan.failed_files.push_back(d);
            return std::nullopt;
        }
        it->second = sha256(bytes_of(bytes));
        return it->second;
    };

    std::set<std::string> chosen;  // every delta sidecar that should exist
    for (auto& [key, members] : families) {
        if (members.size() < 2) continue;
        std::sort(members.begin(), members.end(),
                  [&](std::size_t a, std::size_t b) { return newer(sources[a], sources[b]); });
        for (const std::size_t f : members) {
            unsigned taken = 0;
            for (const std::size_t d : members) {
                if (taken == n) break;
                if (d == f) continue;
                const std::optional<DictionaryHash> h = hash_of(d);
                if (!h) continue;
                ++taken;
                DeltaTask t{f, d, *h, delta_path(sources[f].path, *h)};
                if (!chosen.insert(t.sidecar.string()).second) continue;  // identical copies
                std::string err;
                std::uint64_t size = 0;
                const SidecarState state = stat_sidecar(t.sidecar, sources[f].mtime, size, err);
                if (!err.empty() || state == SidecarState::kNotAFile) {
                    plan.errors.push_back(!err.empty() ? err
                                                       : t.sidecar.string() +
                                                             ": exists and is not a regular file");
                    plan.failed_files.push_back(f);
                } else if (state == SidecarState::kFresh && !force) {
                    plan.fresh.push_back(std::move(t));
                } else {
                    plan.write.push_back(std::move(t));
                }
            }
        }
    }

    // Delta sidecars of our files that no chosen dictionary accounts for.
    std::set<std::string> ours;
    for (const Source& s : sources) ours.insert(s.path.string());
    for (const fs::path& p : existing) {
        const std::string name = p.filename().string();
        const std::optional<DeltaSidecarName> d = parse_delta_sidecar_name(name);
        if (!d || !ours.contains((p.parent_path() / std::string(d->source)).string())) continue;
        if (!chosen.contains(p.string())) plan.remove.push_back(p);
    }
    return plan;
}

DeltaResult write_delta(const Source& file, const Source& dictionary, const DeltaTask& task,
                        int level, const WriteOptions& options, const std::atomic<bool>& stop) {
    DeltaResult r;
    auto fail = [&r](std::string message) {
        r.outcome = Outcome::kFailed;
        r.error = std::move(message);
        return r;
    };
    if (stop.load()) {
        r.outcome = Outcome::kInterrupted;
        return r;
    }
    std::string body;
    struct stat st {};
    if (std::string err = read_whole(file.path, body, st); !err.empty()) return fail(err);
    r.in_bytes = body.size();
    if (static_cast<std::uint64_t>(st.st_size) != file.size ||
        st.st_mtim.tv_sec != file.mtime.tv_sec || st.st_mtim.tv_nsec != file.mtime.tv_nsec) {
        return fail(file.path.string() + ": changed while compressing; run again");
    }
    auto dict = std::make_shared<DictionaryBytes>();
    struct stat dict_st {};
    if (std::string err = read_whole(dictionary.path, dict->bytes, dict_st); !err.empty()) {
        return fail(err);
    }
    dict->hash = sha256(bytes_of(dict->bytes));
    if (dict->hash != task.hash) {
        return fail(dictionary.path.string() + ": changed while compressing; run again");
    }

    // Worth sending only if smaller than the file and than every sidecar it could have instead.
    std::uint64_t limit = body.size();
    for (const Coding c : kSidecarCodings) {
        fs::path sidecar = file.path;
        sidecar += std::string(sidecar_suffix(c));
        std::uint64_t size = 0;
        std::string ignored;
        if (stat_sidecar(sidecar, st.st_mtim, size, ignored) == SidecarState::kFresh) {
            limit = std::min(limit, size);
        }
    }

    auto prepared = PreparedDictionary::make(dict, level);
    if (!prepared.is_ok())
        return fail(dictionary.path.string() + ": " + prepared.status().reason());
    if (stop.load()) {
        r.outcome = Outcome::kInterrupted;
        return r;
    }
    auto delta = make_dcz_delta(*prepared.value(), bytes_of(body));
    if (!delta.is_ok()) {
        return fail(file.path.string() + ": dcz failed: " + delta.status().reason());
    }
    r.patch_from = delta.value().patch_from;
    if (delta.value().body.size() >= limit) {
        r.outcome = Outcome::kNotSmaller;
        std::string err;
        r.removed_stale = remove_stale(task.sidecar, st.st_mtim, options.remove_fresh, err);
        if (!err.empty()) return fail(err);
        return r;
    }
    struct stat again {};
    if (::stat(file.path.c_str(), &again) != 0 || !same_contents_stamp(st, again)) {
        return fail(file.path.string() + ": changed while compressing; run again");
    }
    if (std::string err = install_sidecar(delta.value().body, task.sidecar, st, options);
        !err.empty()) {
        return fail(err);
    }
    r.outcome = Outcome::kWritten;
    r.out_bytes = delta.value().body.size();
    return r;
}

}  // namespace mc::precompress
