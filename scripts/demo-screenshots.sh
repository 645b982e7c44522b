#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Refreshes the demo's screenshots that the README shows, docs/demo.png (the overview page) and
# docs/demo-status.png (the module's section of /server-status), from a run of the demo's
# browser test (tests/integration/test_497_demo.py: the demo made as scripts/demo.sh makes it,
# walked through in Debian's Chromium). Only a run whose checks all pass is copied. The test
# suite never writes into docs/; run this after changing what the pages show.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)

"$src/scripts/deps.sh" test
cd "$src"
cmake --preset debug >/dev/null
nice cmake --build --preset debug -j"$(nproc)"
out="$src/build/debug/tests/integration/gen/browser-output/demo"
MC_CONFIG_INI="$src/build/debug/tests/integration/config.ini" /usr/bin/python3 -m pytest -q \
    -p no:cacheprovider "$src/tests/integration/test_497_demo.py" -k "not demo_script"
cp "$out/index.png" "$src/docs/demo.png"
cp "$out/server-status.png" "$src/docs/demo-status.png"
echo "refreshed docs/demo.png and docs/demo-status.png from $out"
