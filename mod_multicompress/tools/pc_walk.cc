// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: the directory walk.
#include "pc_walk.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "mc/dcz_delta.h"
#include "pc_options.h"

namespace mc::precompress {

namespace fs = std::filesystem;

namespace {

std::string describe(const fs::path& p, std::string_view what, const std::error_code& ec) {
    return p.string() + ": " + std::string(what) + ": " + ec.message();
}

}  // namespace

std::string check_root(const fs::path& root) {
    std::error_code ec;
    const fs::file_status st = fs::status(root, ec);
    if (ec) return describe(root, "cannot access", ec);
    if (fs::is_regular_file(st)) return {};
    if (!fs::is_directory(st)) return root.string() + ": not a directory or regular file";
    // directory_iterator's constructor opens the directory, so this is the real permission test.
    fs::directory_iterator probe(root, ec);
    if (ec) return describe(root, "cannot read directory", ec);
    return {};
}

void walk_tree(const fs::path& root, std::span<const std::string> types, bool include_ssi,
               WalkFound& found, WalkStats& stats,
               const std::function<void(const std::string&)>& on_error) {
    auto take = [&](const fs::path& p, const std::string& name, fs::perms perms) {
        if (!include_ssi && is_ssi(name, static_cast<unsigned>(perms & fs::perms::mask))) {
            found.ssi.push_back(p);
        } else {
            found.files.push_back(p);
        }
    };
    std::error_code ec;
    if (const fs::file_status st = fs::status(root, ec); fs::is_regular_file(st)) {
        ++stats.files;
        take(root, root.filename().string(), st.permissions());
        return;
    }

    // An explicit stack instead of recursive_directory_iterator: an unreadable subdirectory is
    // then one reported error, and the order (sorted names) does not depend on readdir().
    std::vector<fs::path> pending{root};
    while (!pending.empty()) {
        const fs::path dir = std::move(pending.back());
        pending.pop_back();

        std::vector<std::pair<std::string, fs::directory_entry>> entries;
        fs::directory_iterator it(dir, ec);
        if (ec) {
            ++stats.errors;
            on_error(describe(dir, "cannot read directory", ec));
            continue;
        }
        ++stats.dirs;
        for (; it != fs::directory_iterator(); it.increment(ec)) {
            entries.emplace_back(it->path().filename().string(), *it);
        }
        if (ec) {
            ++stats.errors;
            on_error(describe(dir, "error while reading directory", ec));
        }
        std::sort(entries.begin(), entries.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });

        // Names in this directory, to tell FILE.gz next to FILE (a sidecar) from a plain .gz.
        std::vector<std::string_view> names;
        names.reserve(entries.size());
        for (const auto& e : entries) names.push_back(e.first);
        auto has = [&names](std::string_view n) {
            return std::binary_search(names.begin(), names.end(), n);
        };
        auto is_sidecar = [&has](std::string_view name) {
            for (const std::string_view suffix : {".zst", ".br", ".gz"}) {
                if (name.size() > suffix.size() && name.ends_with(suffix)) {
                    return has(name.substr(0, name.size() - suffix.size()));
                }
            }
            return false;
        };

        std::vector<fs::path> subdirs;
        for (const auto& [name, entry] : entries) {
            const fs::file_status lst = entry.symlink_status(ec);
            if (ec) {
                ++stats.errors;
                on_error(describe(entry.path(), "cannot stat", ec));
                continue;
            }
            if (fs::is_directory(lst)) {
                subdirs.push_back(entry.path());
                continue;
            }
            bool regular = fs::is_regular_file(lst);
            fs::perms perms = lst.permissions();
            if (fs::is_symlink(lst)) {
                // A symlinked file is served under the link's name, so it gets its own sidecar;
                // a symlinked directory is not entered (no loops, no leaving the tree).
                const fs::file_status target = entry.status(ec);
                if (ec) continue;  // dangling link: nothing to serve, nothing to compress
                if (fs::is_directory(target)) {
                    ++stats.skipped_links;
                    continue;
                }
                regular = fs::is_regular_file(target);
                perms = target.permissions();
            }
            if (!regular) continue;
            if (is_sidecar(name)) {
                ++stats.sidecars;
                continue;
            }
            if (const auto delta = mc::parse_delta_sidecar_name(name);
                delta && has(delta->source)) {
                ++stats.sidecars;
                found.delta_sidecars.push_back(entry.path());
                continue;
            }
            ++stats.files;
            if (has_selected_type(name, types)) take(entry.path(), name, perms);
        }
        // Reverse so that the stack pops them in name order.
        for (auto d = subdirs.rbegin(); d != subdirs.rend(); ++d) pending.push_back(std::move(*d));
    }
}

// A file reached twice (overlapping roots, "DIR DIR/sub") is done once.
void drop_duplicates(std::vector<fs::path>& files) {
    std::vector<std::pair<fs::path, fs::path>> keyed;
    keyed.reserve(files.size());
    for (fs::path& f : files) {
        std::error_code ec;
        fs::path key = fs::absolute(f, ec).lexically_normal();
        if (ec) key = f;
        keyed.emplace_back(std::move(key), std::move(f));
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    keyed.erase(std::unique(keyed.begin(), keyed.end(),
                            [](const auto& a, const auto& b) { return a.first == b.first; }),
                keyed.end());
    files.clear();
    for (auto& [key, f] : keyed) files.push_back(std::move(f));
}

}  // namespace mc::precompress
