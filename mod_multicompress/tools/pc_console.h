// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: serialized output lines and the terminal progress bar.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace mc::precompress {

/// "512 B", "1.5 KiB", "3.4 MiB", "1.2 GiB".
std::string format_bytes(std::uint64_t n);

/// True when a progress bar makes sense: stderr is a terminal that is not TERM=dumb.
bool stderr_is_terminal();

/// Writes whole lines to stdout and stderr from any thread, and, when enabled, keeps a one-line
/// progress bar at the bottom of stderr: it is redrawn ten times a second by its own thread,
/// erased before any other line is printed and when the run ends.
class Console {
public:
    Console() = default;
    Console(const Console&) = delete;
    Console& operator=(const Console&) = delete;
    ~Console() { stop_progress(); }

    /// Starts the bar over `total_items` sidecars and `total_bytes` source bytes; the counters
    /// are read (never written) by the drawing thread and must outlive stop_progress().
    void start_progress(std::size_t total_items, std::uint64_t total_bytes,
                        const std::atomic<std::size_t>& items_done,
                        const std::atomic<std::uint64_t>& bytes_done);
    /// Draws the final state, erases the bar and joins the drawing thread. Idempotent.
    void stop_progress();

    void out(std::string_view line);  ///< a line on stdout
    void err(std::string_view line);  ///< a line on stderr

private:
    void draw_locked();
    void erase_locked();
    void run();

    std::mutex mu_;
    std::condition_variable cv_;
    std::thread thread_;
    bool active_ = false;
    bool stopping_ = false;
    bool drawn_ = false;
    std::size_t total_items_ = 0;
    std::uint64_t total_bytes_ = 0;
    const std::atomic<std::size_t>* items_done_ = nullptr;
    const std::atomic<std::uint64_t>* bytes_done_ = nullptr;
};

}  // namespace mc::precompress
