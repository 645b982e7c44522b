#!/usr/bin/env bash
# Installs the Debian 12 packages a step needs (build, test), running apt-get only when one is
# missing. Usage: scripts/deps.sh build|test
set -euo pipefail

build=(apache2 apache2-dev libapr1-dev libaprutil1-dev cmake g++ make pkg-config
       zlib1g-dev libbrotli-dev libzstd-dev libdeflate-dev libssl-dev openssl curl)
test=("${build[@]}" libgtest-dev libexpat1-dev clang clang-format-14 clang-tidy-14 libclang-rt-14-dev python3 python3-pytest python3-pytest-xdist python3-brotli
      python3-zstandard python3-requests zstd brotli procps chromium nghttp2-client memcached redis-server
      prometheus libnss3-tools)
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

# apt may bring an apache2-bin built against newer libraries than those already installed: its
# Depends (libssl3 (>= 3.0.0), ...) are satisfied by the old ones, yet mod_ssl then warns
# (AH01882) and may misbehave. Bring every library apache2-bin links against up to the version
# the archive offers now, so the machine is as consistent as a fresh install of today's packages.
mapfile -t libs < <(dpkg-query -W -f='${Depends}\n' apache2-bin 2>/dev/null | tr ',|' '\n\n' |
    sed -E 's/\(.*\)//; s/:any//; s/[[:space:]]//g' | grep -E '^lib' | sort -u)
outdated=()
if [ ${#libs[@]} -gt 0 ]; then
    while read -r pkg inst cand; do
        [ -n "$cand" ] && [ "$cand" != "(none)" ] && [ "$inst" != "(none)" ] &&
            dpkg --compare-versions "$cand" gt "$inst" && outdated+=("$pkg")
    done < <(apt-cache policy "${libs[@]}" 2>/dev/null | awk '
        /^[^ ].*:$/ { if (pkg != "") print pkg, inst, cand; pkg = substr($0, 1, length($0) - 1); inst = cand = "" }
        /^  Installed:/ { inst = $2 } /^  Candidate:/ { cand = $2 }
        END { if (pkg != "") print pkg, inst, cand }')
fi
if [ ${#outdated[@]} -gt 0 ]; then
    echo "upgrading the libraries apache2-bin was built against: ${outdated[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --only-upgrade "${outdated[@]}" >/dev/null
fi
