// SPDX-License-Identifier: Apache-2.0
// Plain corpus runner: replays files through LLVMFuzzerTestOneInput without libFuzzer
// (after zstd's tests/fuzz/regression_driver.c and brotli's run_decode_fuzzer.c).
//
// Usage: <target>_regression PATH...   (each PATH a file, or a directory walked recursively)
// A failing invariant aborts inside the target, so CTest reports the test as failed; the
// runner prints each file's name first so the culprit is the last line of the log.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot open %s\n", path.c_str());
        return false;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    std::fprintf(stderr, "running %s (%zu bytes)\n", path.c_str(), bytes.size());
    // A fresh heap copy of exactly `size` bytes, so an overread is caught by ASan as in libFuzzer.
    std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(data.empty() ? nullptr : data.data(), data.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    std::size_t files = 0;
    bool ok = true;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path arg(argv[i]);
        std::error_code ec;
        if (std::filesystem::is_directory(arg, ec)) {
            std::vector<std::filesystem::path> paths;
            for (const auto& entry : std::filesystem::recursive_directory_iterator(arg, ec)) {
                if (entry.is_regular_file()) paths.push_back(entry.path());
            }
            if (ec) {
                std::fprintf(stderr, "cannot list %s: %s\n", argv[i], ec.message().c_str());
                ok = false;
            }
            std::sort(paths.begin(), paths.end());  // a stable order makes logs comparable
            for (const auto& p : paths) {
                ok = run_file(p) && ok;
                ++files;
            }
        } else if (std::filesystem::exists(arg, ec)) {
            ok = run_file(arg) && ok;
            ++files;
        } else {
            std::fprintf(stderr, "no such file or directory: %s\n", argv[i]);
            ok = false;
        }
    }
    // An empty corpus would make the CTest case pass without testing anything.
    if (files == 0) {
        std::fprintf(stderr, "no corpus files found\n");
        return 1;
    }
    std::fprintf(stderr, "%zu file(s) replayed%s\n", files, ok ? "" : " (with errors)");
    return ok ? 0 : 1;
}
