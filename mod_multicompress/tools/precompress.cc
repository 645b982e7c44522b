// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: writes FILE.zst / FILE.br / FILE.gz sidecars for MultiCompressStatic.
#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "mc/coding.h"
#include "mc/params.h"
#include "pc_console.h"
#include "pc_options.h"
#include "pc_sidecar.h"
#include "pc_walk.h"

namespace mc::precompress {
namespace {

namespace fs = std::filesystem;

// RFC 7932 allows brotli windows up to 2^24, and every browser decodes them; the brotli CLI uses
// 24 too. mc::tune shrinks it (and zstd's, capped at 2^23 for RFC 9659) to the file's size.
constexpr int kBrotliStaticWindow = 24;

constexpr int kExitOk = 0;
constexpr int kExitSomeFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

void on_signal(int /*signo*/) {
    g_stop.store(true);
}

void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
    // A closed stdout (| head) must not kill us between mkstemp and rename: EPIPE instead.
    std::signal(SIGPIPE, SIG_IGN);
}

std::string message(std::string_view text) {
    return std::string(kProgramName) + ": " + std::string(text);
}

// CPUs this process may run on (taskset, cpuset containers), not just those online.
unsigned available_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<unsigned>(n);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

EncoderParams static_params(Coding c, const Options& o) {
    EncoderParams p;
    p.coding = c;
    p.level = o.levels[index(c)];
    if (c == Coding::kBrotli) p.window_log = kBrotliStaticWindow;
    if (c == Coding::kGzip) {
        p.window_log = 15;
        p.mem_level = kMemLevelRange.max;  // gzip -9's choice is 8; 9 is a little smaller
    }
    return p;
}

/// One sidecar to write.
struct Task {
    std::size_t file;  ///< index into the plan's sources
    Coding coding;
    fs::path sidecar;
};

/// Per-encoding counts and sizes. `original`/`compressed` cover the sidecars present after the
/// run (written now or already fresh), so a second run reports the same sizes as the first.
struct CodingTotals {
    std::uint64_t written = 0, fresh = 0, not_smaller = 0, too_small = 0, failed = 0, planned = 0;
    std::uint64_t original = 0, compressed = 0;
};

/// Per-file verdict, from the outcomes of its sidecars.
enum FileFlag : unsigned {
    kFlagWritten = 1u << 0,
    kFlagFresh = 1u << 1,
    kFlagNotSmaller = 1u << 2,
    kFlagTooSmall = 1u << 3,
    kFlagFailed = 1u << 4,
    kFlagPlanned = 1u << 5,
    kFlagInterrupted = 1u << 6,
};

unsigned flag_of(Outcome o) {
    switch (o) {
        case Outcome::kWritten: return kFlagWritten;
        case Outcome::kFresh: return kFlagFresh;
        case Outcome::kNotSmaller: return kFlagNotSmaller;
        case Outcome::kTooSmall: return kFlagTooSmall;
        case Outcome::kPlanned: return kFlagPlanned;
        case Outcome::kFailed: return kFlagFailed;
        case Outcome::kInterrupted: return kFlagInterrupted;
    }
    return 0;
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
    if (whole == 0) return "-";
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%",
                  100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return buf;
}

fs::path sidecar_path(const fs::path& src, Coding c) {
    fs::path p = src;
    p += std::string(sidecar_suffix(c));
    return p;
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

class Run {
public:
    explicit Run(const Options& o) : o_(o) {}

    int operator()() {
        for (const fs::path& root : o_.roots) {
            if (const std::string err = check_root(root); !err.empty()) {
                console_.err(message(err));
                return kExitUsage;
            }
        }
        walk();
        plan();
        execute();
        return summarize();
    }

private:
    void walk() {
        std::vector<fs::path> found;
        for (const fs::path& root : o_.roots) {
            walk_tree(root, o_.types, found, walk_stats_,
                      [this](const std::string& err) { console_.err(message(err)); });
        }
        drop_duplicates(found);
        sources_.reserve(found.size());
        for (fs::path& f : found) sources_.push_back(Source{std::move(f), 0, {}});
        flags_.assign(sources_.size(), 0);
    }

    void record(std::size_t file, Coding c, Outcome outcome) {
        flags_[file] |= flag_of(outcome);
        CodingTotals& t = totals_[index(c)];
        switch (outcome) {
            case Outcome::kWritten: ++t.written; break;
            case Outcome::kFresh: ++t.fresh; break;
            case Outcome::kNotSmaller: ++t.not_smaller; break;
            case Outcome::kTooSmall: ++t.too_small; break;
            case Outcome::kPlanned: ++t.planned; break;
            case Outcome::kFailed: ++t.failed; break;
            case Outcome::kInterrupted: break;
        }
    }

    void fail_file(std::size_t file, const std::string& err) {
        console_.err(message(err));
        for (const Coding c : o_.codings) record(file, c, Outcome::kFailed);
    }

    void removed(const fs::path& sidecar) {
        ++removed_stale_;
        if (o_.verbose) console_.out("removed stale " + sidecar.string());
    }

    // stat() every source and sidecar; decide what is fresh, too small, or to be written.
    void plan() {
        for (std::size_t i = 0; i < sources_.size() && !g_stop.load(); ++i) {
            Source& src = sources_[i];
            struct stat st {};
            if (::stat(src.path.c_str(), &st) != 0) {
                fail_file(i, src.path.string() + ": cannot stat: " + std::strerror(errno));
                continue;
            }
            src.size = static_cast<std::uint64_t>(st.st_size);
            src.mtime = st.st_mtim;
            const bool too_small = src.size < o_.min_size;
            for (const Coding c : o_.codings) {
                fs::path sidecar = sidecar_path(src.path, c);
                if (too_small) {
                    // Not compressed, and no stale sidecar left behind to confuse anyone.
                    record(i, c, Outcome::kTooSmall);
                    remove_stale_sidecar(sidecar, src.mtime);
                    continue;
                }
                std::string err;
                std::uint64_t size = 0;
                const SidecarState state = stat_sidecar(sidecar, src.mtime, size, err);
                if (!err.empty()) {
                    console_.err(message(err));
                    record(i, c, Outcome::kFailed);
                    continue;
                }
                if (state == SidecarState::kNotAFile) {
                    console_.err(message(sidecar.string() + ": exists and is not a regular file"));
                    record(i, c, Outcome::kFailed);
                    continue;
                }
                if (state == SidecarState::kFresh && !o_.force) {
                    record(i, c, Outcome::kFresh);
                    totals_[index(c)].original += src.size;
                    totals_[index(c)].compressed += size;
                    continue;
                }
                tasks_.push_back(Task{i, c, std::move(sidecar)});
            }
        }
        // Largest first: the long brotli-11 jobs start early and the workers finish together.
        std::stable_sort(tasks_.begin(), tasks_.end(), [this](const Task& a, const Task& b) {
            return sources_[a.file].size > sources_[b.file].size;
        });
    }

    void remove_stale_sidecar(const fs::path& sidecar, const timespec& source_mtime) {
        if (o_.dry_run) {
            std::string err;
            std::uint64_t size = 0;
            if (stat_sidecar(sidecar, source_mtime, size, err) == SidecarState::kStale) {
                ++removed_stale_;
                if (!o_.quiet) console_.out("would remove stale " + sidecar.string());
            }
            return;
        }
        std::string err;
        if (remove_stale(sidecar, source_mtime, false, err)) removed(sidecar);
        if (!err.empty()) console_.err(message(err));
    }

    void execute() {
        if (o_.dry_run) {
            for (const Task& t : tasks_) {
                record(t.file, t.coding, Outcome::kPlanned);
                if (!o_.quiet) console_.out("would write " + t.sidecar.string());
            }
            return;
        }
        if (tasks_.empty()) return;

        std::uint64_t total_bytes = 0;
        for (const Task& t : tasks_) total_bytes += sources_[t.file].size;
        std::atomic<std::size_t> next{0};
        std::atomic<std::size_t> done{0};
        std::atomic<std::uint64_t> bytes_done{0};
        SidecarResult not_run;
        not_run.outcome = Outcome::kInterrupted;
        std::vector<SidecarResult> results(tasks_.size(), not_run);
        const WriteOptions wo{o_.fsync, o_.force};

        auto worker = [&] {
            for (;;) {
                const std::size_t k = next.fetch_add(1);
                if (k >= tasks_.size() || g_stop.load()) return;
                const Task& t = tasks_[k];
                SidecarResult& r = results[k];
                r = write_sidecar(sources_[t.file], t.sidecar, static_params(t.coding, o_), wo,
                                  bytes_done, g_stop);
                report(t, r);
                done.fetch_add(1);
            }
        };

        if (!o_.quiet && !o_.no_progress && stderr_is_terminal()) {
            console_.start_progress(tasks_.size(), total_bytes, done, bytes_done);
        }
        const std::size_t n_threads =
            std::min<std::size_t>(o_.jobs != 0 ? o_.jobs : available_cpus(), tasks_.size());
        std::vector<std::thread> threads;
        threads.reserve(n_threads);
        for (std::size_t i = 0; i < n_threads; ++i) threads.emplace_back(worker);
        for (std::thread& th : threads) th.join();
        console_.stop_progress();

        for (std::size_t k = 0; k < tasks_.size(); ++k) {
            const Task& t = tasks_[k];
            const SidecarResult& r = results[k];
            record(t.file, t.coding, r.outcome);
            if (r.removed_stale) ++removed_stale_;
            if (r.outcome == Outcome::kWritten) {
                totals_[index(t.coding)].original += r.in_bytes;
                totals_[index(t.coding)].compressed += r.out_bytes;
            }
        }
    }

    // Called from the workers; the console serializes the lines.
    void report(const Task& t, const SidecarResult& r) {
        if (r.outcome == Outcome::kFailed) {
            console_.err(message(r.error));
            return;
        }
        if (!o_.verbose) return;
        if (r.outcome == Outcome::kWritten) {
            console_.out("wrote " + t.sidecar.string() + " (" + std::to_string(r.in_bytes) +
                         " -> " + std::to_string(r.out_bytes) + " bytes, " +
                         percent(r.out_bytes, r.in_bytes) + ")");
        } else if (r.outcome == Outcome::kNotSmaller) {
            console_.out("not smaller: " + t.sidecar.string() +
                         (r.removed_stale ? " (stale sidecar removed)" : ""));
        }
    }

    int summarize() {
        std::uint64_t compressed = 0, fresh = 0, not_smaller = 0, too_small = 0, failed = 0;
        bool interrupted = false;
        for (const unsigned f : flags_) {
            if ((f & kFlagInterrupted) != 0) interrupted = true;
            if ((f & kFlagFailed) != 0) {
                ++failed;
            } else if ((f & (kFlagWritten | kFlagPlanned)) != 0) {
                ++compressed;
            } else if ((f & kFlagTooSmall) != 0) {
                ++too_small;
            } else if ((f & kFlagNotSmaller) != 0) {
                ++not_smaller;
            } else if ((f & kFlagFresh) != 0) {
                ++fresh;
            }
        }
        failed += walk_stats_.errors;

        if (!o_.quiet) {
            char line[256];
            std::snprintf(line, sizeof line,
                          "files: %llu scanned, %zu selected: %llu %s, %llu fresh, "
                          "%llu not smaller, %llu too small, %llu failed",
                          static_cast<unsigned long long>(walk_stats_.files), sources_.size(),
                          static_cast<unsigned long long>(compressed),
                          o_.dry_run ? "to compress" : "compressed",
                          static_cast<unsigned long long>(fresh),
                          static_cast<unsigned long long>(not_smaller),
                          static_cast<unsigned long long>(too_small),
                          static_cast<unsigned long long>(failed));
            console_.out(line);
            std::snprintf(line, sizeof line, "%-8s %8s %6s %12s %7s %12s %12s %7s", "encoding",
                          o_.dry_run ? "to write" : "written", "fresh", "not smaller", "failed",
                          "original", "sidecars", "ratio");
            console_.out(line);
            for (const Coding c : o_.codings) {
                const CodingTotals& t = totals_[index(c)];
                std::snprintf(line, sizeof line, "%-8s %8llu %6llu %12llu %7llu %12s %12s %7s",
                              std::string(coding_token(c)).c_str(),
                              static_cast<unsigned long long>(o_.dry_run ? t.planned : t.written),
                              static_cast<unsigned long long>(t.fresh),
                              static_cast<unsigned long long>(t.not_smaller),
                              static_cast<unsigned long long>(t.failed),
                              format_bytes(t.original).c_str(), format_bytes(t.compressed).c_str(),
                              percent(t.compressed, t.original).c_str());
                console_.out(line);
            }
            if (removed_stale_ != 0) {
                console_.out(std::string(o_.dry_run ? "stale sidecars to remove: "
                                                    : "stale sidecars removed: ") +
                             std::to_string(removed_stale_));
            }
            if (walk_stats_.skipped_links != 0 && o_.verbose) {
                console_.out("symlinked directories not followed: " +
                             std::to_string(walk_stats_.skipped_links));
            }
        }
        if (interrupted || g_stop.load()) {
            console_.err(message("interrupted; temporary files removed"));
            return kExitInterrupted;
        }
        return failed != 0 ? kExitSomeFailed : kExitOk;
    }

    const Options& o_;
    Console console_;
    WalkStats walk_stats_;
    std::vector<Source> sources_;
    std::vector<unsigned> flags_;
    std::vector<Task> tasks_;
    std::array<CodingTotals, kCodingCount> totals_{};
    std::uint64_t removed_stale_ = 0;
};

}  // namespace
}  // namespace mc::precompress

int main(int argc, char** argv) {
    using namespace mc::precompress;
    const ParseResult parsed =
        parse_options({argv + 1, static_cast<std::size_t>(argc > 0 ? argc - 1 : 0)});
    switch (parsed.outcome) {
        case ParseOutcome::kHelp: std::fputs(usage().c_str(), stdout); return kExitOk;
        case ParseOutcome::kVersion:
            std::printf("%s %s\n", std::string(kProgramName).c_str(), MC_VERSION);
            return kExitOk;
        case ParseOutcome::kError:
            std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n",
                         std::string(kProgramName).c_str(), parsed.error.c_str(),
                         std::string(kProgramName).c_str());
            return kExitUsage;
        case ParseOutcome::kRun: break;
    }
    install_signal_handlers();
    try {
        return Run(parsed.options)();
    } catch (const std::exception& e) {
        // Out of memory or a filesystem error outside the per-file paths.
        std::fprintf(stderr, "%s: %s\n", std::string(kProgramName).c_str(), e.what());
        return kExitSomeFailed;
    }
}
