#!/usr/bin/env bash
# Installs the Debian 12 packages a step needs (build, test), running apt-get only when one is
# missing. Usage: scripts/deps.sh build|test
set -euo pipefail

build=(apache2 apache2-dev libapr1-dev libaprutil1-dev cmake g++ make pkg-config
       zlib1g-dev libbrotli-dev libzstd-dev libdeflate-dev libssl-dev openssl curl)
test=("${build[@]}" libgtest-dev clang clang-format-14 libclang-rt-14-dev python3 python3-pytest python3-brotli
      python3-zstandard python3-requests zstd brotli procps chromium nghttp2-client memcached redis-server)
# node and npm for tests/browser: Debian's, unless some npm is already there (NodeSource's
# nodejs bundles npm, and Debian's npm package would conflict with it).
command -v npm >/dev/null 2>&1 || test+=(nodejs npm)

case "${1:-build}" in
    build) want=("${build[@]}") ;;
    test) want=("${test[@]}") ;;
    *) echo "usage: $0 build|test" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
