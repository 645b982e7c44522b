#!/usr/bin/env bash
# Builds the Debian package libapache2-mod-multicompress_VERSION_ARCH.deb (debian/) with
# dpkg-buildpackage -us -uc -b, from a clean copy of the source tree, into build/deb/ (or
# --out DIR). Installs the packaging tools and the Build-Depends of debian/control first.
#   scripts/package.sh [--out DIR] [--version V]
# --version V builds with a changelog entry for V on top of debian/changelog's (the package
# test uses it for an upgrade); the source tree itself is never modified.
# The built files are listed on the last lines of the output; the .deb's path is also written
# to OUT/deb-path.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out="$src/build/deb"
version=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --version) version=$2; shift 2 ;;
        *) echo "usage: $0 [--out DIR] [--version V]" >&2; exit 2 ;;
    esac
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_install() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
# The packaging tools; lintian for the package test.
apt_install build-essential dpkg-dev debhelper fakeroot lintian

# A clean copy: the files git knows (tracked, and new ones not ignored), or without git
# everything but build/. dpkg-buildpackage writes its results next to the source directory,
# so they land in $out rather than beside the checkout.
pkg=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Source)
stage="$out/src"
tree="$stage/$pkg"
rm -rf "$stage"
mkdir -p "$tree"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files -z --cached --others --exclude-standard |
        (cd "$src" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
        tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf -
else
    tar -C "$src" --exclude=./build -cf - . | tar -C "$tree" -xf -
fi

if [ -n "$version" ]; then
    {
        printf '%s (%s) unstable; urgency=medium\n\n' "$pkg" "$version"
        printf '  * Rebuild as %s.\n\n' "$version"
        printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Maintainer)" "$(date -R)"
        cat "$src/debian/changelog"
    } >"$tree/debian/changelog"
fi

# Build-Depends: installed from debian/control when dpkg-checkbuilddeps finds some missing.
if ! (cd "$tree" && dpkg-checkbuilddeps >/dev/null 2>&1); then
    echo "installing the Build-Depends of debian/control"
    $SUDO apt-get update -qq
    (cd "$tree" && DEBIAN_FRONTEND=noninteractive $SUDO apt-get build-dep -y -qq ./)
fi

# Release build without the test suite (the package ships no tests; scripts/test.sh runs them).
export DEB_BUILD_OPTIONS="nocheck parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}"
start=$(date +%s)
(cd "$tree" && dpkg-buildpackage -us -uc -b)
ver=$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb="$out/src/${pkg}_${ver}_${arch}.deb"
[ -f "$deb" ] || { echo "package.sh: $deb was not built" >&2; exit 1; }
# Results up from src/ into $out; the staged tree is removed.
mv "$stage"/*.deb "$stage"/*.changes "$stage"/*.buildinfo "$out"/
compgen -G "$stage/*.ddeb" >/dev/null && mv "$stage"/*.ddeb "$out"/
rm -rf "$stage"
deb="$out/${pkg}_${ver}_${arch}.deb"
echo "$deb" >"$out/deb-path"
echo "package.sh: built in $(($(date +%s) - start)) s:"
ls -1 "$out"/"${pkg}"*_"${ver}"_*
