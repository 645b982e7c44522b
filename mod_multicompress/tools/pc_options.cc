// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: command-line parsing.
#include "pc_options.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <system_error>

#include "mc/config.h"
#include "mc/dictionary_train.h"
#include "mc/params.h"

namespace mc::precompress {
namespace {

// clang-format off
constexpr std::string_view kDefaultTypes[] = {
    // markup and styles
    "html", "htm", "xhtml", "css", "xml", "xsl", "svg", "rss", "atom",
    // scripts, data, source maps, manifests
    "js", "mjs", "cjs", "json", "jsonld", "map", "webmanifest",
    // plain text
    "txt", "md", "csv", "tsv", "vtt", "ics",
    // uncompressed binaries (WebAssembly, TrueType/OpenType/EOT fonts, icons)
    "wasm", "ttf", "otf", "eot", "ico",
};
// clang-format on

// Caps a typo like "--jobs 10000" before it becomes ten thousand threads.
constexpr unsigned kMaxJobs = 256;

// Splits "a,b,,c" into {"a","b","c"} (empty items are dropped, blanks trimmed).
std::vector<std::string_view> split_list(std::string_view s) {
    std::vector<std::string_view> out;
    while (!s.empty()) {
        const std::size_t comma = s.find(',');
        const std::string_view item = trim_ows(s.substr(0, comma));
        if (!item.empty()) out.push_back(item);
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 1);
    }
    return out;
}

template <class T>
std::optional<T> parse_number(std::string_view s) {
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<Coding> parse_sidecar_coding(std::string_view token, std::string& error) {
    const std::optional<Coding> c = parse_coding(token);
    if (c && !sidecar_suffix(*c).empty()) return c;
    if (c == Coding::kDeflate) {
        error = "encoding 'deflate' has no sidecar file (use gzip)";
    } else if (c == Coding::kDcz) {
        error = "dcz sidecars are deltas between versions of a file: see --deltas";
    } else {
        error = "unknown encoding '" + std::string(token) + "' (expected zstd, br or gzip)";
    }
    return std::nullopt;
}

bool set_encodings(std::string_view value, Options& o, std::string& error) {
    o.codings.clear();
    for (const std::string_view token : split_list(value)) {
        const std::optional<Coding> c = parse_sidecar_coding(token, error);
        if (!c) return false;
        if (std::find(o.codings.begin(), o.codings.end(), *c) == o.codings.end()) {
            o.codings.push_back(*c);
        }
    }
    if (o.codings.empty()) {
        error = "--encodings needs at least one of zstd, br, gzip";
        return false;
    }
    return true;
}

bool set_levels(std::string_view value, Options& o, std::string& error) {
    const std::vector<std::string_view> items = split_list(value);
    if (items.empty()) {
        error = "--levels needs ENC=N items, e.g. zstd=19,br=11,gzip=9,dcz=19";
        return false;
    }
    for (const std::string_view item : items) {
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            error = "--levels: '" + std::string(item) + "' is not ENC=N (e.g. br=11)";
            return false;
        }
        const std::string_view name = trim_ows(item.substr(0, eq));
        // dcz: the level of the delta sidecars.
        const std::optional<Coding> c =
            name == "dcz" ? std::optional<Coding>(Coding::kDcz) : parse_sidecar_coding(name, error);
        if (!c) return false;
        const std::optional<int> level = parse_number<int>(trim_ows(item.substr(eq + 1)));
        const Range range = level_range(*c);
        if (!level || !range.contains(*level)) {
            error = "--levels: " + std::string(coding_token(*c)) + " level must be " +
                    std::to_string(range.min) + ".." + std::to_string(range.max) + ", not '" +
                    std::string(item.substr(eq + 1)) + "'";
            return false;
        }
        o.levels[index(*c)] = *level;
    }
    return true;
}

bool valid_type(std::string_view t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
               ch == '+';
    });
}

// "html,css" replaces the list; "+pdf,yaml" adds to it.
bool set_types(std::string_view value, Options& o, std::string& error) {
    value = trim_ows(value);
    const bool add = !value.empty() && value.front() == '+';
    if (add) value.remove_prefix(1);
    if (!add) o.types.clear();
    for (std::string_view item : split_list(value)) {
        if (item.front() == '.') item.remove_prefix(1);
        const std::string t = lowercase(item);
        if (!valid_type(t)) {
            error = "--types: '" + std::string(item) + "' is not a file name extension";
            return false;
        }
        if (t == "gz" || t == "br" || t == "zst") {
            error = "--types: '" + t + "' is a sidecar extension; sidecars are never recompressed";
            return false;
        }
        o.types.push_back(t);
    }
    std::sort(o.types.begin(), o.types.end());
    o.types.erase(std::unique(o.types.begin(), o.types.end()), o.types.end());
    if (o.types.empty()) {
        error = "--types needs at least one extension";
        return false;
    }
    return true;
}

struct FlagDef {
    std::string_view short_name;
    std::string_view long_name;
    bool Options::*member;
};

constexpr FlagDef kFlags[] = {
    {"-q", "--quiet", &Options::quiet},
    {"-v", "--verbose", &Options::verbose},
    {"-n", "--dry-run", &Options::dry_run},
    {"-f", "--force", &Options::force},
    {"", "--fsync", &Options::fsync},
    {"", "--no-progress", &Options::no_progress},
    {"", "--include-ssi", &Options::include_ssi},
};

const FlagDef* find_flag(std::string_view name) {
    for (const FlagDef& f : kFlags) {
        if (name == f.long_name || (!f.short_name.empty() && name == f.short_name)) return &f;
    }
    return nullptr;
}

Options default_options() {
    Options o;
    o.codings.assign(kSidecarCodings.begin(), kSidecarCodings.end());
    for (const Coding c : kSidecarCodings) o.levels[index(c)] = default_static_level(c);
    o.levels[index(Coding::kDcz)] = default_static_level(Coding::kDcz);
    for (const std::string_view t : kDefaultTypes) o.types.emplace_back(t);
    std::sort(o.types.begin(), o.types.end());
    return o;
}

}  // namespace

int default_static_level(Coding c) {
    return c == Coding::kIdentity ? 0 : mc::strongest_level(c);
}

std::span<const std::string_view> default_types() {
    return kDefaultTypes;
}

bool is_ssi(std::string_view name, unsigned mode) {
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    const std::string ext = lowercase(name.substr(dot + 1));
    if (ext == "shtml" || ext == "stm" || ext == "shtm") return true;
    return (ext == "html" || ext == "htm") && (mode & 0100) != 0;  // S_IXUSR: XBitHack
}

bool has_selected_type(std::string_view name, std::span<const std::string> types) {
    const std::size_t dot = name.rfind('.');
    // No extension, or a dot file such as ".htaccess".
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return false;
    const std::string ext = lowercase(name.substr(dot + 1));
    return std::binary_search(types.begin(), types.end(), ext);
}

ParseResult parse_options(std::span<const char* const> args) {
    ParseResult r;
    Options& o = r.options;
    o = default_options();
    auto fail = [&r](std::string msg) {
        r.outcome = ParseOutcome::kError;
        r.error = std::move(msg);
        return r;
    };

    bool options_done = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (options_done || arg.size() < 2 || arg.front() != '-') {
            o.roots.emplace_back(arg);
            continue;
        }
        if (arg == "--") {
            options_done = true;
            continue;
        }
        // Split "--name=value" and "-jN".
        std::string_view name = arg;
        std::optional<std::string_view> inline_value;
        if (arg.starts_with("--")) {
            if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {
                name = arg.substr(0, eq);
                inline_value = arg.substr(eq + 1);
            }
        } else if (arg.size() > 2) {
            name = arg.substr(0, 2);
            inline_value = arg.substr(2);
        }
        auto value = [&]() -> std::optional<std::string_view> {
            if (inline_value) return inline_value;
            if (i + 1 < args.size()) return std::string_view(args[++i]);
            return std::nullopt;
        };

        std::string error;
        if (name == "-h" || name == "--help") {
            if (inline_value) return fail("option '" + std::string(name) + "' takes no value");
            r.outcome = ParseOutcome::kHelp;
            return r;
        }
        if (name == "--version") {
            r.outcome = ParseOutcome::kVersion;
            return r;
        }
        if (const FlagDef* f = find_flag(name)) {
            if (inline_value) return fail("option '" + std::string(name) + "' takes no value");
            o.*(f->member) = true;
            continue;
        }
        const bool takes_value = name == "-e" || name == "--encodings" || name == "-l" ||
                                 name == "--levels" || name == "-t" || name == "--types" ||
                                 name == "-j" || name == "--jobs" || name == "--min-size" ||
                                 name == "--deltas" || name == "--train-dictionary" ||
                                 name == "--dictionary-size" || name == "--holdout";
        if (!takes_value) return fail("unknown option '" + std::string(arg) + "'");
        const std::optional<std::string_view> v = value();
        if (!v) return fail("option '" + std::string(name) + "' needs a value");

        if (name == "-e" || name == "--encodings") {
            if (!set_encodings(*v, o, error)) return fail(error);
        } else if (name == "-l" || name == "--levels") {
            if (!set_levels(*v, o, error)) return fail(error);
        } else if (name == "-t" || name == "--types") {
            if (!set_types(*v, o, error)) return fail(error);
        } else if (name == "-j" || name == "--jobs") {
            const std::optional<unsigned> n = parse_number<unsigned>(*v);
            if (!n || *n < 1 || *n > kMaxJobs) {
                return fail("--jobs must be 1.." + std::to_string(kMaxJobs) + ", not '" +
                            std::string(*v) + "'");
            }
            o.jobs = *n;
        } else if (name == "--min-size") {
            // "4096", "4k", "2M", "1G" (binary multiples), as the module's size directives.
            std::int64_t n = 0;
            if (!mc::parse_size(*v, 0, INT64_MAX, n).is_ok())
                return fail("--min-size must be a byte count (e.g. 256, 1k), not '" +
                            std::string(*v) + "'");
            o.min_size = static_cast<std::uint64_t>(n);
        } else if (name == "--deltas") {
            const std::optional<unsigned> n = parse_number<unsigned>(*v);
            if (!n || *n > kMaxDeltas) {
                return fail("--deltas must be 0.." + std::to_string(kMaxDeltas) + ", not '" +
                            std::string(*v) + "'");
            }
            o.deltas = *n;
        } else if (name == "--train-dictionary") {
            if (v->empty()) return fail("--train-dictionary needs a file name");
            o.train_output = std::string(*v);
        } else if (name == "--dictionary-size") {
            std::int64_t n = 0;
            if (!mc::parse_size(*v, static_cast<std::int64_t>(kMinTrainedDictionary),
                                static_cast<std::int64_t>(kMaxTrainedDictionary), n)
                     .is_ok()) {
                return fail("--dictionary-size must be 1k..16M, not '" + std::string(*v) + "'");
            }
            o.dictionary_size = static_cast<std::size_t>(n);
        } else if (name == "--holdout") {
            std::string_view h = trim_ows(*v);
            if (h.ends_with('%')) h.remove_suffix(1);
            const std::optional<unsigned> n = parse_number<unsigned>(h);
            if (!n || *n > kMaxHoldoutPercent) {
                return fail("--holdout must be 0%.." + std::to_string(kMaxHoldoutPercent) +
                            "%, not '" + std::string(*v) + "'");
            }
            o.holdout_percent = *n;
        }
    }
    if (o.verbose && o.quiet) return fail("--quiet and --verbose exclude each other");
    if (o.roots.empty()) return fail("no directory given");
    if (!o.train_output.empty() && (o.dry_run || o.force)) {
        return fail("--train-dictionary writes one file: --dry-run and --force do not apply");
    }
    r.outcome = ParseOutcome::kRun;
    return r;
}

std::string usage() {
    std::string types;
    for (const std::string_view t : kDefaultTypes) {
        if (!types.empty()) types += ',';
        types += t;
    }
    return "Usage: multicompress-precompress [OPTION]... DIR...\n"
           "  or:  multicompress-precompress --train-dictionary OUT [OPTION]... PATH...\n"
           "Write precompressed sidecars (FILE.zst, FILE.br, FILE.gz) next to the static files\n"
           "under each DIR, for mod_multicompress's MultiCompressStatic, and dcz deltas\n"
           "(FILE.dcz-HASH16) between versions of content-hashed files (app.3f9a1c2b.js,\n"
           "index-B_1x-9Zq.js). Sidecars that are already fresh (as new as their file) are\n"
           "kept; a sidecar that would not be smaller than its file is not written. Files httpd\n"
           "would run through SSI (.shtml, .stm, .shtm; .html/.htm with the owner-execute bit,\n"
           "XBitHack) are skipped. The second form trains a site dictionary (raw content, for\n"
           "RFC 9842) from the files under each PATH and reports what it saves.\n"
           "\n"
           "  -e, --encodings LIST  sidecars to write (default zstd,br,gzip)\n"
           "  -l, --levels LIST     levels as ENC=N (default zstd=19,br=11,gzip=9,dcz=19;\n"
           "                        zstd and dcz 1-19, br 0-11, gzip 1-9)\n"
           "      --deltas N        dcz deltas per content-hashed file, against the N most\n"
           "                        recent other versions (by mtime; default 3; 0: none)\n"
           "      --include-ssi     compress files httpd would run through SSI too\n"
           "  -t, --types LIST      file name extensions to compress; '+LIST' adds to the\n"
           "                        defaults (default " +
           types +
           ")\n"
           "  -j, --jobs N          parallel jobs (default: number of CPUs)\n"
           "      --min-size N      skip files smaller than N bytes (default 256; k/M suffix)\n"
           "  -f, --force           rewrite sidecars even when fresh\n"
           "  -n, --dry-run         show what would be written, write nothing\n"
           "      --fsync           fsync each sidecar and its directory before renaming\n"
           "      --no-progress     no progress bar (shown only when stderr is a terminal)\n"
           "  -q, --quiet           print errors only\n"
           "  -v, --verbose         print every sidecar written or removed\n"
           "      --train-dictionary OUT  train a site dictionary into OUT (raw content)\n"
           "      --dictionary-size N     its size (default 64k; 1k-16M)\n"
           "      --holdout P%          files kept out of training and measured (default 20%)\n"
           "  -h, --help            show this help\n"
           "      --version         show the version\n"
           "\n"
           "Exit status: 0 on success, 1 if some files failed, 2 on bad arguments or an\n"
           "unreadable DIR, 130 when interrupted.\n";
}

}  // namespace mc::precompress
