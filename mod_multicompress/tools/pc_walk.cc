// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: the directory walk.
#include "pc_walk.h"

#include <algorithm>
#include <system_error>
#include <utility>

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

void walk_tree(const fs::path& root, std::span<const std::string> types, std::vector<fs::path>& out,
               WalkStats& stats, const std::function<void(const std::string&)>& on_error) {
    std::error_code ec;
    if (fs::is_regular_file(fs::status(root, ec))) {
        ++stats.files;
        out.push_back(root);
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
        auto is_sidecar = [&names](std::string_view name) {
            for (const std::string_view suffix : {".zst", ".br", ".gz"}) {
                if (name.size() > suffix.size() && name.ends_with(suffix)) {
                    const std::string_view stem = name.substr(0, name.size() - suffix.size());
                    return std::binary_search(names.begin(), names.end(), stem);
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
            }
            if (!regular) continue;
            if (is_sidecar(name)) {
                ++stats.sidecars;
                continue;
            }
            ++stats.files;
            if (has_selected_type(name, types)) out.push_back(entry.path());
        }
        // Reverse so that the stack pops them in name order.
        for (auto d = subdirs.rbegin(); d != subdirs.rend(); ++d) pending.push_back(std::move(*d));
    }
}

}  // namespace mc::precompress
