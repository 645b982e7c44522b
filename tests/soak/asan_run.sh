#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The integration suite and a short soak against the ASan+UBSan build of mod_multicompress,
# loaded into Debian's stock /usr/sbin/apache2.
#
#   tests/soak/asan_run.sh                 # build the asan-ubsan preset, run everything
#   tests/soak/asan_run.sh -k 'not 460'    # extra arguments go to pytest
#   MC_ASAN_SOAK_SECONDS=0 tests/soak/asan_run.sh   # the suite only, no soak
#
# httpd itself is not instrumented, so the ASan runtime must be the first library in the
# process: the apache2 binary is started through a small wrapper (written into the build tree)
# that sets LD_PRELOAD=$(gcc -print-file-name=libasan.so) and the sanitizer options for that
# server only: pytest, curl, openssl and node run without them. The wrapper is named as
# apache_bin in a copy of config.ini (config-asan.ini), so mc_env.py is used as it is.
#
# Sanitizer options (tests/soak/README.md):
#   ASAN_OPTIONS   halt_on_error=1 abort_on_error=1: the first report kills the child with
#                  SIGABRT, which httpd logs as "AH00052: child pid N exit signal Aborted", a
#                  crash line every test checks for; log_path=<server>/logs/san/asan: the report
#                  itself, collected at the end; detect_leaks=1 with lsan.supp: httpd exits
#                  without destroying pconf, so pcre2, OpenSSL and APR allocations are suppressed
#                  by library (never a frame of the module). MC_ASAN_LEAKS=0: no leak detection.
#                  allow_user_segv_handler=0: httpd's own SIGSEGV handler (which only logs
#                  "exit signal Segmentation fault") is not installed, so a fault, e.g. on a
#                  mc::mem_alloc block used after mem_free (quarantined without access in this
#                  build, mc/alloc.h), is reported by ASan with its stack.
#   UBSAN_OPTIONS  halt_on_error=1 abort_on_error=1 print_stacktrace=1, log_path as above.
#   MC_ASAN_SOAK_ARGS: extra soak.py options (e.g. --post-close).
# Fails when pytest or the soak fails, or when any report file or report line exists.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
cd "$src"
PY=${MC_PYTHON3:-/usr/bin/python3}
JOBS=${MC_JOBS:-2}
SOAK_SECONDS=${MC_ASAN_SOAK_SECONDS:-30}
LEAKS=${MC_ASAN_LEAKS:-1}
t0=$(date +%s)

# ---- build: the module and the two test modules (MC_ASAN_ALL=1: every target, and the unit
# tests and the fuzz corpus replay through ctest as well)
cmake --preset asan-ubsan -DMC_BUILD_BENCH=OFF >/dev/null
build="$src/build/asan"  # the preset's binaryDir
if [ "${MC_ASAN_ALL:-0}" = 1 ]; then
    cmake --build --preset asan-ubsan -j"$JOBS"
else
    cmake --build --preset asan-ubsan -j"$JOBS" --target mod_multicompress mod_mctest mod_mctest_dropin \
        multicompress-precompress
fi
t_build=$(date +%s)

# Only the ASan runtime has to come first; libubsan is loaded as the module's dependency.
libasan=$(gcc -print-file-name=libasan.so)
case $libasan in /*) ;; *) echo "asan_run: gcc does not know libasan.so (libasan8)" >&2; exit 2;; esac
it="$build/tests/integration"
apache=$(sed -n 's/^apache_bin = //p' "$it/config.ini")

# ---- the wrapper: sanitizer environment for httpd only, reports into the server's logs/san/
wrapper="$it/apache2-asan.sh"
cat >"$wrapper" <<EOF
#!/bin/sh
# Written by tests/soak/asan_run.sh: Debian's apache2 with the ASan runtime preloaded.
dir=
prev=
for a in "\$@"; do
    if [ "\$prev" = "-d" ]; then dir=\$a; fi
    prev=\$a
done
san=/tmp
if [ -n "\$dir" ] && [ -d "\$dir/logs" ]; then
    san="\$dir/logs/san"
    mkdir -p "\$san" && chmod 1777 "\$san"   # the children write as User, not root
fi
LD_PRELOAD="$libasan\${LD_PRELOAD:+ \$LD_PRELOAD}"
ASAN_OPTIONS="detect_leaks=$LEAKS:halt_on_error=1:abort_on_error=1:detect_odr_violation=0:allow_user_segv_handler=0:log_path=\$san/asan\${ASAN_OPTIONS:+:\$ASAN_OPTIONS}"
LSAN_OPTIONS="suppressions=$src/tests/soak/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0\${LSAN_OPTIONS:+:\$LSAN_OPTIONS}"
UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=\$san/ubsan\${UBSAN_OPTIONS:+:\$UBSAN_OPTIONS}"
export LD_PRELOAD ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
exec "$apache" "\$@"
EOF
chmod 755 "$wrapper"
sed "s#^apache_bin = .*#apache_bin = $wrapper#" "$it/config.ini" >"$it/config-asan.ini"
export MC_CONFIG_INI="$it/config-asan.ini"
export PYTHONDONTWRITEBYTECODE=1

# the sanitized module loads and serves at all
"$PY" tests/integration/mc_env.py --check-load >/dev/null

# reports older than this run do not count (other runs may share the build tree)
marker="$it/.asan_run.$$"
touch "$marker"
trap 'rm -f "$marker"' EXIT

status=0
# With pytest-xdist, MC_PYTEST_WORKERS (default 3) processes share the files, as in CTest.
parallel=()
if [ "${MC_PYTEST_WORKERS:-3}" -gt 1 ] && "$PY" -c "import xdist" 2>/dev/null; then
    parallel=(-n "${MC_PYTEST_WORKERS:-3}" --dist loadfile)
fi
echo "asan_run: pytest tests/integration ${parallel[*]} $* (module $build/mod_multicompress/httpd/mod_multicompress.so)"
"$PY" -m pytest -q -p no:cacheprovider "${parallel[@]}" tests/integration "$@" || status=$?
t_suite=$(date +%s)

if [ "$SOAK_SECONDS" != 0 ]; then
    echo "asan_run: soak for $SOAK_SECONDS s"
    # shellcheck disable=SC2086 # MC_ASAN_SOAK_ARGS: extra options, split on blanks
    "$PY" tests/soak/soak.py --seconds "$SOAK_SECONDS" --min-requests "${MC_ASAN_SOAK_MIN:-3000}" \
        ${MC_ASAN_SOAK_ARGS:-} || status=$?
fi
t_soak=$(date +%s)

# ---- every report, wherever it went
reports=$(find "$it/gen" "$it/soak" -path '*/logs/san/*' -type f -size +0 -newer "$marker" \
           2>/dev/null || true)
if [ -n "$reports" ]; then
    echo "asan_run: sanitizer reports:"
    for f in $reports; do
        echo "==== $f"
        head -n 60 "$f"
    done
    status=1
fi
lines=$(find "$it/gen" "$it/soak" -name error_log -type f -newer "$marker" -print0 2>/dev/null |
        xargs -0 -r grep -l -E 'AddressSanitizer|LeakSanitizer|runtime error:|exit signal' || true)
if [ -n "$lines" ]; then
    echo "asan_run: sanitizer or crash lines in:"
    echo "$lines"
    status=1
fi
echo "asan_run: build $((t_build - t0)) s, suite $((t_suite - t_build)) s, soak $((t_soak - t_suite)) s," \
     "total $((t_soak - t0)) s; $( [ $status = 0 ] && echo CLEAN || echo FAILED )"
exit $status
