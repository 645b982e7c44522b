// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress --train-dictionary: trains a raw-content dictionary (RFC 9842) from
// the files named, and measures it on files it was not trained on.
#include "pc_train.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "mc/dictionary.h"
#include "mc/dictionary_train.h"
#include "mc/encoder.h"
#include "mc/sink.h"
#include "pc_jobs.h"
#include "pc_sidecar.h"
#include "pc_walk.h"

namespace mc::precompress {

namespace fs = std::filesystem;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct Sample {
    fs::path path;
    std::string bytes;
    DictionaryHash hash{};
};

std::span<const std::byte> bytes_of(std::string_view s) {
    return std::as_bytes(std::span(s.data(), s.size()));
}

// The codings of the report: without the dictionary (zstd-3, br-11), with it (dcz-3, dcz-19).
enum Column : std::size_t { kIdentity, kZstd3, kBr11, kDcz3, kDcz19, kColumns };
constexpr std::array<const char*, kColumns> kColumnNames = {"identity", "zstd-3", "br-11", "dcz-3",
                                                            "dcz-19"};

// Compressed size of `body`; 0 when the library failed (not expected).
std::size_t compressed(Coding c, int level, const PreparedDictionary* dict, std::string_view body) {
    EncoderParams p;
    p.coding = c;
    p.level = level;
    p.dictionary = dict;
    p.size_hint = static_cast<std::int64_t>(body.size());
    p.exact_size = true;
    if (c == Coding::kBrotli) p.window_log = 24;  // as the brotli sidecars (tune shrinks it)
    StringSink out;
    const Result<std::size_t> n = compress_all(p, bytes_of(body), out);
    return n.is_ok() ? out.data().size() : 0;
}

std::string row(const char* name, std::uint64_t bytes, std::size_t files, std::uint64_t zstd3,
                std::uint64_t br11) {
    char line[160];
    auto ratio = [](std::uint64_t a, std::uint64_t b) {
        return b == 0 ? 0.0 : double(a) / double(b);
    };
    std::snprintf(line, sizeof line, "%-9s %12llu %10llu %10.3f %9.3f", name,
                  static_cast<unsigned long long>(bytes),
                  static_cast<unsigned long long>(files == 0 ? 0 : bytes / files),
                  ratio(bytes, zstd3), ratio(bytes, br11));
    return line;
}

// The dictionary file: written whole through a temporary file and rename(2), mode 0644.
std::string write_output(const fs::path& out, const std::string& dict) {
    struct stat st {};
    st.st_mode = 0644;
    st.st_uid = ::geteuid();
    st.st_gid = ::getegid();
    ::clock_gettime(CLOCK_REALTIME, &st.st_mtim);
    return install_sidecar(dict, out, st, WriteOptions{});
}

}  // namespace

int train_dictionary(const Options& o, Console& console, const std::atomic<bool>& stop) {
    auto say = [&](const std::string& s) {
        if (!o.quiet) console.out(s);
    };
    auto error = [&](const std::string& s) { console.err(std::string(kProgramName) + ": " + s); };
    WalkFound found;
    WalkStats stats;
    for (const fs::path& root : o.roots) {
        if (const std::string err = check_root(root); !err.empty()) {
            error(err);
            return kExitUsage;
        }
        walk_tree(root, o.types, o.include_ssi, found, stats, error);
    }
    drop_duplicates(found.files);
    // Never the output of an earlier run.
    std::error_code ec;
    const fs::path out_abs = fs::absolute(o.train_output, ec).lexically_normal();
    std::erase_if(found.files, [&](const fs::path& p) {
        std::error_code e;
        return fs::absolute(p, e).lexically_normal() == out_abs;
    });

    // Read everything once; byte-identical files (copies, symlinked translations) count once,
    // so a held-back file is never one the dictionary was trained on.
    std::vector<Sample> samples;
    std::size_t duplicates = 0, small = 0;
    bool failed = stats.errors != 0;
    for (const fs::path& p : found.files) {
        Sample s{p, {}, {}};
        struct stat st {};
        if (std::string err = read_whole(p, s.bytes, st); !err.empty()) {
            error(err);
            failed = true;
            continue;
        }
        if (s.bytes.size() < o.min_size || s.bytes.empty()) {
            ++small;
            continue;
        }
        s.hash = sha256(bytes_of(s.bytes));
        samples.push_back(std::move(s));
    }
    std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
        return a.hash != b.hash ? a.hash < b.hash : a.path < b.path;
    });
    const auto last =
        std::unique(samples.begin(), samples.end(),
                    [](const Sample& a, const Sample& b) { return a.hash == b.hash; });
    duplicates = static_cast<std::size_t>(samples.end() - last);
    samples.erase(last, samples.end());

    // Held back: the first holdout % in the order of the content's hash (a function of the
    // input alone, not of its names or the order of the arguments).
    std::size_t held = samples.size() * o.holdout_percent / 100;
    if (o.holdout_percent != 0 && held == 0 && samples.size() >= 2) held = 1;
    const std::span<const Sample> held_back(samples.data(), held);
    const std::span<const Sample> training(samples.data() + held, samples.size() - held);
    std::uint64_t training_bytes = 0;
    for (const Sample& s : training) training_bytes += s.bytes.size();
    // Within kMaxTrainingBytes: every k-th file.
    const std::size_t step = static_cast<std::size_t>(training_bytes / kMaxTrainingBytes) + 1;
    std::vector<std::string_view> views;
    std::uint64_t used_bytes = 0;
    for (std::size_t i = 0; i < training.size(); i += step) {
        views.emplace_back(training[i].bytes);
        used_bytes += training[i].bytes.size();
    }

    const Result<std::string> trained = train_raw_dictionary(views, o.dictionary_size);
    if (!trained.is_ok()) {
        error(o.train_output.string() + ": " + trained.status().reason() + " (" +
              std::to_string(views.size()) + " files, " + format_bytes(used_bytes) + ")");
        return kExitFailed;
    }
    const std::string& dict = trained.value();
    if (std::string err = write_output(o.train_output, dict); !err.empty()) {
        error(err);
        return kExitFailed;
    }
    auto dict_bytes = std::make_shared<DictionaryBytes>();
    dict_bytes->bytes = dict;
    dict_bytes->hash = sha256(bytes_of(dict));
    say("dictionary: " + o.train_output.string() + ", " + std::to_string(dict.size()) +
        " bytes of raw content, SHA-256 " + hash_hex(dict_bytes->hash) + " (Available-Dictionary " +
        format_available_dictionary(dict_bytes->hash) + ")");
    say("input: " + std::to_string(found.files.size()) + " files (" + std::to_string(duplicates) +
        " identical to another, " + std::to_string(small) + " under --min-size, " +
        std::to_string(found.ssi.size()) + " skipped as SSI); trained on " +
        std::to_string(views.size()) + " (" + format_bytes(used_bytes) + "), " +
        std::to_string(held) + " held back");
    if (o.verbose) {
        for (const fs::path& p : found.ssi) say("skipped (SSI): " + p.string());
    }
    if (held_back.empty()) return failed ? kExitFailed : kExitOk;

    auto at3 = PreparedDictionary::make(dict_bytes, 3);
    auto at19 = PreparedDictionary::make(dict_bytes, 19);
    if (!at3.is_ok() || !at19.is_ok()) {
        error("cannot prepare the dictionary for the report");
        return kExitFailed;
    }
    std::vector<std::array<std::size_t, kColumns>> sizes(held_back.size());
    run_jobs(held_back.size(), o.jobs, stop, [&](std::size_t k) {
        const std::string& b = held_back[k].bytes;
        sizes[k] = {b.size(), compressed(Coding::kZstd, 3, nullptr, b),
                    compressed(Coding::kBrotli, 11, nullptr, b),
                    compressed(Coding::kDcz, 3, at3.value().get(), b),
                    compressed(Coding::kDcz, 19, at19.value().get(), b)};
    });
    if (stop.load()) return 130;
    std::array<std::uint64_t, kColumns> total{};
    for (std::size_t k = 0; k < held_back.size(); ++k) {
        for (std::size_t c = 0; c < kColumns; ++c) total[c] += sizes[k][c];
        if (o.verbose) {
            std::string line = "held back: " + held_back[k].path.string();
            for (std::size_t c = 0; c < kColumns; ++c) {
                line += std::string(" ") + kColumnNames[c] + " " + std::to_string(sizes[k][c]);
            }
            say(line);
        }
    }
    char head[160];
    std::snprintf(head, sizeof head, "%-9s %12s %10s %10s %9s", "held back", "bytes", "per file",
                  "x zstd-3", "x br-11");
    say(head);
    for (std::size_t c = 0; c < kColumns; ++c) {
        say(row(kColumnNames[c], total[c], held_back.size(), total[kZstd3], total[kBr11]));
    }
    say("(dcz bytes include the 40-byte header of every response)");
    return failed ? kExitFailed : kExitOk;
}

}  // namespace mc::precompress
