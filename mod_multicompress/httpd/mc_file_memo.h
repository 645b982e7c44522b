// SPDX-License-Identifier: Apache-2.0
// A per-child memo of what was found about one version of a file (path, device, inode, size,
// mtime, ctime): sidecar checks, warnings logged once, cache keys. Thread-safe, bounded.
#pragma once

#include <apr_file_info.h>

#include <algorithm>
#include <array>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "mc/view_hash.h"
#include "mc_keys.h"

namespace mc::httpd {

// What this child found about a version of a file, by path, device, inode, size, mtime, ctime.
// Bounded: when full it starts over, so at worst a file is looked at again.
template <class V>
class PerFileVersion {
public:
    /// Remembers `value` for the file unless something is remembered already; returns what is.
    /// `extra`: more of the key after the path (what was checked, e.g. a window).
    V remember(std::string_view path, const apr_finfo_t& fi, V value, std::string_view extra = {}) {
        const Key key(path, extra, fi);
        const std::lock_guard<std::mutex> lock(mu_);
        if (const auto it = seen_.find(key.view()); it != seen_.end()) return it->second;
        if (seen_.size() >= kMax) seen_.clear();
        return seen_.emplace(std::string(key.view()), std::move(value)).first->second;
    }
    std::optional<V> find(std::string_view path, const apr_finfo_t& fi,
                          std::string_view extra = {}) {
        const Key key(path, extra, fi);
        const std::lock_guard<std::mutex> lock(mu_);
        const auto it = seen_.find(key.view());
        return it == seen_.end() ? std::nullopt : std::optional<V>(it->second);
    }
    void forget(std::string_view path, const apr_finfo_t& fi) {
        const Key key(path, {}, fi);
        const std::lock_guard<std::mutex> lock(mu_);
        if (const auto it = seen_.find(key.view()); it != seen_.end()) seen_.erase(it);
    }

private:
    // The path (any bytes), `extra`, then the path's length and the version's numbers as they
    // are in memory (so no path and `extra` make another's key): looked up on every hit, so no
    // decimal formatting, and on the stack for a usual path.
    class Key {
    public:
        Key(std::string_view path, std::string_view extra, const apr_finfo_t& fi) {
            const std::size_t n = path.size() + extra.size() + kNumbers;
            char* out = inline_.data();
            if (n > inline_.size()) {
                heap_.resize(n);
                out = heap_.data();
            }
            view_ = std::string_view(out, n);
            out = std::copy(path.begin(), path.end(), out);
            out = std::copy(extra.begin(), extra.end(), out);
            out = put_raw(out, path.size());
            out = put_raw(out, fi.device);
            out = put_raw(out, fi.inode);
            out = put_raw(out, fi.size);
            out = put_raw(out, fi.mtime);
            put_raw(out, fi.ctime);
        }
        ~Key() = default;
        Key(const Key&) = delete;  // view_ points into this object
        Key& operator=(const Key&) = delete;
        Key(Key&&) = delete;
        Key& operator=(Key&&) = delete;
        [[nodiscard]] std::string_view view() const { return view_; }

    private:
        static constexpr std::size_t kNumbers =
            sizeof(std::size_t) + sizeof(apr_finfo_t::device) + sizeof(apr_finfo_t::inode) +
            sizeof(apr_finfo_t::size) + sizeof(apr_finfo_t::mtime) + sizeof(apr_finfo_t::ctime);
        std::array<char, 320> inline_{};
        std::string heap_;
        std::string_view view_;
    };
    static constexpr std::size_t kMax = 1024;
    std::mutex mu_;
    std::unordered_map<std::string, V, mc::ViewHash, std::equal_to<>> seen_;
};

}  // namespace mc::httpd
