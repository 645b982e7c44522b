#!/usr/bin/env bash
# clang-tidy (Debian 12's clang-tidy-14) with the repository's .clang-tidy on the core and the
# adapter: what docs/style.md promises. Fails on any warning. Usage: scripts/tidy.sh [BUILD_DIR]
# (a build directory configured with compile_commands.json; one is made in build/tidy if none).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build/tidy}
if [ ! -f "$build/compile_commands.json" ]; then
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
        -DMC_BUILD_TESTS=OFF -DMC_BUILD_BENCH=OFF >/dev/null
fi
mapfile -t files < <(cd "$src" && git ls-files 'mod_multicompress/core/src/*.cc' \
    'mod_multicompress/httpd/*.cc')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Two at a time (the machines this runs on have two cores); a file's warnings stay together.
printf '%s\n' "${files[@]}" | (cd "$src" && xargs -P "$(nproc)" -n 4 \
    clang-tidy-14 -p "$build" --quiet --warnings-as-errors='*' >"$log" 2>&1) || {
    grep -E "warning:|error:" "$log" | sort -u >&2
    echo "tidy: clang-tidy found the above in ${#files[@]} files" >&2
    exit 1
}
echo "tidy: ${#files[@]} files clean"
