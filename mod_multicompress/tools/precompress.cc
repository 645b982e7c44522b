// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: writes FILE.zst / FILE.br / FILE.gz sidecars for MultiCompressStatic,
// dcz deltas between versions of content-hashed files, or (--train-dictionary) a site dictionary.
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
#include <vector>

#include "mc/coding.h"
#include "mc/dcz_delta.h"
#include "mc/params.h"
#include "pc_console.h"
#include "pc_delta.h"
#include "pc_jobs.h"
#include "pc_options.h"
#include "pc_report.h"
#include "pc_sidecar.h"
#include "pc_train.h"
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

fs::path sidecar_path(const fs::path& src, Coding c) {
    fs::path p = src;
    p += std::string(sidecar_suffix(c));
    return p;
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
        if (o_.deltas != 0 && !g_stop.load()) deltas();
        return print_summary(tally_, walk_stats_, sources_.size(), o_, g_stop.load(), console_);
    }

private:
    void walk() {
        for (const fs::path& root : o_.roots) {
            walk_tree(root, o_.types, o_.include_ssi, found_, walk_stats_,
                      [this](const std::string& err) { console_.err(message(err)); });
        }
        drop_duplicates(found_.files);
        drop_duplicates(found_.ssi);
        sources_.reserve(found_.files.size());
        for (fs::path& f : found_.files) sources_.push_back(Source{std::move(f), 0, {}});
        tally_.flags.assign(sources_.size(), 0);
        wanted_.assign(sources_.size(), false);
        tally_.ssi_skipped = found_.ssi.size();
    }

    void fail_file(std::size_t file, const std::string& err) {
        console_.err(message(err));
        for (const Coding c : o_.codings) tally_.record(file, c, Outcome::kFailed);
    }

    // stat() every source and sidecar; decide what is fresh, too small, or to be written.
    void plan() {
        for (const fs::path& ssi : found_.ssi) skip_ssi(ssi);
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
            wanted_[i] = !too_small;
            for (const Coding c : o_.codings) {
                fs::path sidecar = sidecar_path(src.path, c);
                if (too_small) {
                    // Not compressed, and no stale sidecar left behind to confuse anyone.
                    tally_.record(i, c, Outcome::kTooSmall);
                    remove(sidecar, src.mtime, false, "stale");
                    continue;
                }
                std::string err;
                std::uint64_t size = 0;
                const SidecarState state = stat_sidecar(sidecar, src.mtime, size, err);
                if (!err.empty()) {
                    console_.err(message(err));
                    tally_.record(i, c, Outcome::kFailed);
                    continue;
                }
                if (state == SidecarState::kNotAFile) {
                    console_.err(message(sidecar.string() + ": exists and is not a regular file"));
                    tally_.record(i, c, Outcome::kFailed);
                    continue;
                }
                if (state == SidecarState::kFresh && !o_.force) {
                    tally_.record(i, c, Outcome::kFresh);
                    tally_.totals[index(c)].original += src.size;
                    tally_.totals[index(c)].compressed += size;
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

    // A file httpd runs through SSI is not compressed, and a sidecar of it (written before, or
    // by hand) goes, fresh or not: it would send the unprocessed template, directives and all.
    void skip_ssi(const fs::path& file) {
        if (o_.verbose || o_.dry_run) console_.out("skipped (SSI): " + file.string());
        std::vector<fs::path> sidecars;
        for (const Coding c : kSidecarCodings) sidecars.push_back(sidecar_path(file, c));
        for (const fs::path& d : found_.delta_sidecars) {
            const auto name = parse_delta_sidecar_name(d.filename().string());
            if (name && d.parent_path() / std::string(name->source) == file) sidecars.push_back(d);
        }
        for (const fs::path& s : sidecars) remove(s, {}, true, "SSI");
    }

    // Removes `sidecar` if it is stale against `source_mtime` (or any regular file when `always`);
    // `why` is "stale" or "SSI". --dry-run only says so.
    void remove(const fs::path& sidecar, const timespec& source_mtime, bool always,
                const char* why) {
        std::uint64_t& count =
            std::string_view(why) == "SSI" ? tally_.removed_ssi : tally_.removed_stale;
        const std::string what =
            std::string_view(why) == "SSI" ? "sidecar of an SSI file " : "stale ";
        if (o_.dry_run) {
            std::string err;
            std::uint64_t size = 0;
            const SidecarState state = stat_sidecar(sidecar, source_mtime, size, err);
            if (state == SidecarState::kStale || (always && state == SidecarState::kFresh)) {
                ++count;
                if (!o_.quiet) console_.out("would remove " + what + sidecar.string());
            }
            return;
        }
        std::string err;
        if (remove_stale(sidecar, source_mtime, always, err)) {
            ++count;
            if (o_.verbose) console_.out("removed " + what + sidecar.string());
        }
        if (!err.empty()) console_.err(message(err));
    }

    void execute() {
        if (o_.dry_run) {
            for (const Task& t : tasks_) {
                tally_.record(t.file, t.coding, Outcome::kPlanned);
                if (!o_.quiet) console_.out("would write " + t.sidecar.string());
            }
            return;
        }
        std::uint64_t total_bytes = 0;
        for (const Task& t : tasks_) total_bytes += sources_[t.file].size;
        SidecarResult not_run;
        not_run.outcome = Outcome::kInterrupted;
        std::vector<SidecarResult> results(tasks_.size(), not_run);
        const WriteOptions wo{o_.fsync, o_.force};
        progress(tasks_.size(), total_bytes, [&](std::size_t k) {
            const Task& t = tasks_[k];
            results[k] = write_sidecar(sources_[t.file], t.sidecar, static_params(t.coding, o_), wo,
                                       bytes_done_, g_stop);
            report(t.sidecar, results[k].outcome, results[k].in_bytes, results[k].out_bytes,
                   results[k].removed_stale, results[k].error, "");
        });
        for (std::size_t k = 0; k < tasks_.size(); ++k) {
            const Task& t = tasks_[k];
            const SidecarResult& r = results[k];
            tally_.record(t.file, t.coding, r.outcome);
            if (r.removed_stale) ++tally_.removed_stale;
            if (r.outcome == Outcome::kWritten) {
                tally_.totals[index(t.coding)].original += r.in_bytes;
                tally_.totals[index(t.coding)].compressed += r.out_bytes;
            }
        }
    }

    // Delta sidecars, after the ordinary ones (a delta must beat them to be written).
    void deltas() {
        const DeltaPlan plan =
            plan_deltas(sources_, wanted_, found_.delta_sidecars, o_.deltas, o_.force);
        for (const std::string& err : plan.errors) console_.err(message(err));
        for (const std::size_t f : plan.failed_files)
            tally_.record(f, Coding::kDcz, Outcome::kFailed);
        for (const fs::path& p : plan.remove) remove(p, {}, true, "stale");
        CodingTotals& totals = tally_.totals[index(Coding::kDcz)];
        for (const DeltaTask& t : plan.fresh) {
            tally_.record(t.file, Coding::kDcz, Outcome::kFresh);
            std::string err;
            std::uint64_t size = 0;
            stat_sidecar(t.sidecar, sources_[t.file].mtime, size, err);
            totals.original += sources_[t.file].size;
            totals.compressed += size;
        }
        const int level = o_.levels[index(Coding::kDcz)];
        if (o_.dry_run) {
            for (const DeltaTask& t : plan.write) {
                tally_.record(t.file, Coding::kDcz, Outcome::kPlanned);
                if (!o_.quiet) {
                    console_.out("would write " + t.sidecar.string() + " (against " +
                                 sources_[t.dictionary].path.filename().string() + ")");
                }
            }
            return;
        }
        std::uint64_t total_bytes = 0;
        for (const DeltaTask& t : plan.write) total_bytes += sources_[t.file].size;
        std::vector<DeltaResult> results(plan.write.size());
        for (DeltaResult& r : results) r.outcome = Outcome::kInterrupted;
        const WriteOptions wo{o_.fsync, o_.force};
        progress(plan.write.size(), total_bytes, [&](std::size_t k) {
            const DeltaTask& t = plan.write[k];
            results[k] =
                write_delta(sources_[t.file], sources_[t.dictionary], t, level, wo, g_stop);
            bytes_done_ += sources_[t.file].size;
            const DeltaResult& r = results[k];
            report(t.sidecar, r.outcome, r.in_bytes, r.out_bytes, r.removed_stale, r.error,
                   " against " + sources_[t.dictionary].path.filename().string() +
                       (r.patch_from ? ", as zstd --patch-from" : ""));
        });
        for (std::size_t k = 0; k < plan.write.size(); ++k) {
            const DeltaResult& r = results[k];
            tally_.record(plan.write[k].file, Coding::kDcz, r.outcome);
            if (r.removed_stale) ++tally_.removed_stale;
            if (r.outcome == Outcome::kWritten) {
                totals.original += r.in_bytes;
                totals.compressed += r.out_bytes;
            }
        }
    }

    // Runs job(k) for k < count on the workers, with the progress bar on a terminal.
    template <class Job>
    void progress(std::size_t count, std::uint64_t total_bytes, Job&& job) {
        if (count == 0) return;
        std::atomic<std::size_t> done{0};
        bytes_done_ = 0;
        if (!o_.quiet && !o_.no_progress && stderr_is_terminal()) {
            console_.start_progress(count, total_bytes, done, bytes_done_);
        }
        run_jobs(count, o_.jobs, g_stop, [&](std::size_t k) {
            job(k);
            done.fetch_add(1);
        });
        console_.stop_progress();
    }

    // Called from the workers; the console serializes the lines.
    void report(const fs::path& sidecar, Outcome outcome, std::uint64_t in, std::uint64_t out,
                bool removed_stale, const std::string& error, const std::string& note) {
        if (outcome == Outcome::kFailed) {
            console_.err(message(error));
            return;
        }
        if (!o_.verbose) return;
        if (outcome == Outcome::kWritten) {
            console_.out("wrote " + sidecar.string() + " (" + std::to_string(in) + " -> " +
                         std::to_string(out) + " bytes, " + percent(out, in) +
                         (note.empty() ? "" : "," + note) + ")");
        } else if (outcome == Outcome::kNotSmaller) {
            console_.out("not smaller: " + sidecar.string() +
                         (removed_stale ? " (stale sidecar removed)" : ""));
        }
    }

    const Options& o_;
    Console console_;
    WalkStats walk_stats_;
    WalkFound found_;
    std::vector<Source> sources_;
    std::vector<bool> wanted_;  ///< stat'ed and not too small: may have and be a delta's dictionary
    std::vector<Task> tasks_;
    Tally tally_;
    std::atomic<std::uint64_t> bytes_done_{0};
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
        if (!parsed.options.train_output.empty()) {
            Console console;
            return train_dictionary(parsed.options, console, g_stop);
        }
        return Run(parsed.options)();
    } catch (const std::exception& e) {
        // Out of memory or a filesystem error outside the per-file paths.
        std::fprintf(stderr, "%s: %s\n", std::string(kProgramName).c_str(), e.what());
        return kExitSomeFailed;
    }
}
