// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: output lines and the progress bar.
#include "pc_console.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace mc::precompress {

namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

unsigned terminal_width() {
    winsize ws{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return 80;
}

void write_all(std::FILE* f, std::string_view s) {
    std::fwrite(s.data(), 1, s.size(), f);
    std::fflush(f);
}

}  // namespace

std::string format_bytes(std::uint64_t n) {
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) return std::to_string(n) + " B";
    double v = static_cast<double>(n) / 1024.0;
    std::size_t unit = 0;
    while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
        v /= 1024.0;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
    return buf;
}

bool stderr_is_terminal() {
    if (::isatty(STDERR_FILENO) == 0) return false;
    const char* term = std::getenv("TERM");
    return term == nullptr || std::strcmp(term, "dumb") != 0;
}

void Console::start_progress(std::size_t total_items, std::uint64_t total_bytes,
                             const std::atomic<std::size_t>& items_done,
                             const std::atomic<std::uint64_t>& bytes_done) {
    const std::lock_guard lock(mu_);
    if (active_) return;
    total_items_ = total_items;
    total_bytes_ = total_bytes;
    items_done_ = &items_done;
    bytes_done_ = &bytes_done;
    active_ = true;
    stopping_ = false;
    draw_locked();  // at once, so even a short run shows where it is
    thread_ = std::thread([this] { run(); });
}

void Console::stop_progress() {
    {
        const std::lock_guard lock(mu_);
        if (!active_) return;
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    const std::lock_guard lock(mu_);
    draw_locked();
    erase_locked();
    active_ = false;
}

void Console::run() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
        if (cv_.wait_for(lock, kRedrawInterval, [this] { return stopping_; })) break;
        draw_locked();
    }
}

void Console::out(std::string_view line) {
    const std::lock_guard lock(mu_);
    erase_locked();
    std::string s(line);
    s += '\n';
    write_all(stdout, s);
    if (active_) draw_locked();
}

void Console::err(std::string_view line) {
    const std::lock_guard lock(mu_);
    erase_locked();
    std::string s(line);
    s += '\n';
    write_all(stderr, s);
    if (active_) draw_locked();
}

void Console::erase_locked() {
    if (!drawn_) return;
    write_all(stderr, "\r\033[K");
    drawn_ = false;
}

void Console::draw_locked() {
    if (!active_ || items_done_ == nullptr) return;
    const std::size_t items = std::min(items_done_->load(), total_items_);
    const std::uint64_t bytes = std::min(bytes_done_->load(), total_bytes_);
    const double fraction =
        total_bytes_ == 0
            ? (total_items_ == 0 ? 1.0
                                 : static_cast<double>(items) / static_cast<double>(total_items_))
            : static_cast<double>(bytes) / static_cast<double>(total_bytes_);

    char text[128];
    // Fixed-width fields, so the bar keeps its length while the numbers grow.
    const int items_width = static_cast<int>(std::to_string(total_items_).size());
    std::snprintf(text, sizeof text, " %3d%%  %*zu/%zu sidecars  %10s / %s",
                  static_cast<int>(fraction * 100.0), items_width, items, total_items_,
                  format_bytes(bytes).c_str(), format_bytes(total_bytes_).c_str());
    const std::size_t text_len = std::strlen(text);
    const unsigned width = terminal_width() - 1;  // never touch the last column: no auto-wrap
    std::string line = "\r";
    if (width >= text_len + 12) {
        const std::size_t bar = std::min<std::size_t>(width - text_len - 2, 50);
        const auto full = static_cast<std::size_t>(fraction * static_cast<double>(bar));
        line += '[';
        line.append(full, '=');
        if (full < bar) {
            line += '>';
            line.append(bar - full - 1, ' ');
        }
        line += ']';
    }
    line.append(text, std::min<std::size_t>(text_len, width));
    line += "\033[K";
    write_all(stderr, line);
    drawn_ = true;
}

}  // namespace mc::precompress
