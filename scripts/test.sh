#!/usr/bin/env bash
# The test command: installs every dependency (Debian packages), builds with -Werror, runs all
# tests (unit, fuzz corpus replay, integration against a real httpd, the short soak, all of it
# again under ASan+UBSan, the benchmark's smoke run).
#
#   scripts/test.sh           everything (what CI runs, about 22 minutes on 2 cores)
#   scripts/test.sh --quick   after a build: the layout rules, unit tests, the fuzz corpus replay
#                             and an integration smoke run (under 3 minutes)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"

# The integration files of the quick tier: every coding, negotiation, headers and 304s, sidecars
# and the cache, what compress-once and dictionaries refuse.
QUICK_INTEGRATION=(test_100_encodings.py test_200_negotiation.py test_310_etag_head.py
                   test_520_shared_bytes.py test_525_sidecar_direct.py test_610_static.py)

if [ "${1:-}" = "--quick" ]; then
    t0=$(date +%s)
    /usr/bin/python3 "$src/scripts/check_layout.py"
    cmake --preset debug >/dev/null
    cmake --build --preset debug -j"$(nproc)"
    ctest --preset debug -L "unit|regression" -j"$(nproc)" --timeout 300 --no-tests=error
    (cd "$src/tests/integration" &&
        MC_CONFIG_INI="$src/build/debug/tests/integration/config.ini" PYTHONDONTWRITEBYTECODE=1 \
        /usr/bin/python3 -m pytest -q -p no:cacheprovider $(/usr/bin/python3 -c "import xdist" \
        2>/dev/null && echo "-n 3 --dist loadfile") "${QUICK_INTEGRATION[@]}")
    echo "quick tier: $(($(date +%s) - t0)) s"
    exit 0
fi

t_all=$(date +%s)
t_stage=$t_all
# One line per stage with its seconds, so a slow CI run says where the time went.
stage() {
    local now
    now=$(date +%s)
    echo "test.sh: $1 took $((now - t_stage)) s (total $((now - t_all)) s)"
    t_stage=$now
}
"$src/scripts/deps.sh" test
stage "deps"
# House style: every C++ file as clang-format-14 (Debian 12's) formats it with .clang-format.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files -z '*.cc' '*.h' | xargs -0 clang-format-14 --dry-run --Werror
fi
# The layout rules of docs/style.md (file length, include cycles, one mod_filter mirror, no
# citations of files outside the repository).
/usr/bin/python3 "$src/scripts/check_layout.py"
stage "format and layout"
# clang-tidy with .clang-tidy on the core and the adapter.
"$src/scripts/tidy.sh"
stage "clang-tidy"
(cd "$src/tests/browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
cmake --preset debug
cmake --build --preset debug -j"$(nproc)"
stage "npm ci and the debug build"
# Everything, the short soak (label "soak", tests/soak/README.md) included.
# -j: the unit tests, the tool's test and the short soak share the cores; the integration suite
# runs alone (RUN_SERIAL; it runs its own pytest-xdist processes).
ctest --preset debug --timeout 900 --no-tests=error -j"$(nproc)"
stage "ctest (unit, fuzz replay, integration, soak)"
# The integration suite and a short soak again, against the ASan+UBSan build of the module in
# the stock apache2: any sanitizer report fails (tests/soak/README.md).
MC_ASAN_SOAK_SECONDS=25 MC_ASAN_SOAK_MIN=2000 "$src/tests/soak/asan_run.sh"
stage "ASan+UBSan build, integration and soak"
# The Debian package (debian/): built once (release flags, tests off), then lintian, its
# contents, and install, a2enmod, Debian's /etc/apache2 on a free port, an upgrade under load
# and a purge on this machine, which is left as it was (tests/package/test_package.sh).
"$src/scripts/package.sh" --out "$src/build/deb"
"$src/tests/package/test_package.sh" "$(cat "$src/build/deb/deb-path")"
stage "package build and test"
if [ -x "$src/bench/run" ]; then
    # Smoke run (no timing assertions); its tables go to the build tree, not bench/results/. It
    # runs the debug build's module, tool and bench_encoders (the compression itself is in
    # Debian's optimised libraries): the Release build bench/run --full makes would add a minute.
    "$src/bench/run" --quick --build-dir "$src/build/debug" --no-build \
        --out "$src/build/bench-quick"
    stage "bench --quick"
fi
