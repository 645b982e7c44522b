#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo: installs what it needs, builds mod_multicompress, starts httpd in the foreground
# with the demo site (conf/demo) on http://127.0.0.1:8080/ and https://localhost:8443/ (HTTP/2)
# and prints where to look and what each curl line shows. Ctrl-C stops every process it started.
#
#   MC_DEMO_HTTP_PORT, MC_DEMO_HTTPS_PORT  other ports (default 8080 and 8443)
#   MC_DEMO_DIR                            where the demo is made (default build/demo)
#   MC_DEMO_BUILD_DIR                      an existing build tree to run: nothing is installed
#                                          or built (the demo's test runs its own build)
#   MC_DEMO_APACHE                         the httpd binary (default: apxs's)
#
# Anything that stops it (a port in use, a package that cannot be installed, a failed build, a
# demo already running) ends it with one line that starts with "demo:" and says what to do.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
http_port=${MC_DEMO_HTTP_PORT:-8080}
https_port=${MC_DEMO_HTTPS_PORT:-8443}

fail() {
    echo "demo: $*" >&2
    exit 1
}

for p in "$http_port" "$https_port"; do
    [[ $p =~ ^[0-9]+$ ]] && [ "$p" -ge 1 ] && [ "$p" -le 65535 ] ||
        fail "'$p' is not a port: set MC_DEMO_HTTP_PORT and MC_DEMO_HTTPS_PORT to numbers from 1 to 65535"
done
[ "$http_port" != "$https_port" ] || fail "MC_DEMO_HTTP_PORT and MC_DEMO_HTTPS_PORT are both $http_port: choose two ports"

# As root, httpd's children run as www-data, which must be able to reach the site: a clone in
# /root (mode 700) cannot be served from, so the demo is then made under /var/tmp.
others_can_enter() {
    local d=$1
    while [ -n "$d" ] && [ "$d" != "/" ]; do
        if [ -e "$d" ] && [ $(($(stat -c '%a' "$d") % 2)) -eq 0 ]; then return 1; fi
        d=$(dirname "$d")
    done
}
demo=${MC_DEMO_DIR:-$src/build/demo}
if [ -z "${MC_DEMO_DIR:-}" ] && [ "$(id -u)" -eq 0 ] && ! others_can_enter "$src"; then
    demo=/var/tmp/mc-demo
fi
mkdir -p "$demo"
demo=$(cd "$demo" && pwd)

# One demo per directory: the lock is held by this script and by the httpd it starts.
exec 9>"$demo/.lock"
if ! flock -n 9; then
    pid=$(cat "$demo/logs/httpd.pid" 2>/dev/null || true)
    where=$(cat "$demo/.where" 2>/dev/null || echo "its ports")
    fail "a demo is already running from $demo${pid:+ (httpd pid $pid)} on $where: use it, or stop it with Ctrl-C in its terminal${pid:+ (or kill $pid)} before starting another"
fi

in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
check_ports() {
    for p in "$http_port" "$https_port"; do
        ! in_use "$p" || fail "port $p on 127.0.0.1 is in use: stop what listens there, or choose other ports, e.g. MC_DEMO_HTTP_PORT=18080 MC_DEMO_HTTPS_PORT=18443 scripts/demo.sh"
    done
}
check_ports

# Packages: scripts/deps.sh installs the missing ones (apt-get, as root or with sudo).
if [ -z "${MC_DEMO_BUILD_DIR:-}" ]; then
    echo "checking the packages the demo needs (scripts/deps.sh build)"
    if ! deps=$("$src/scripts/deps.sh" build 2>&1); then
        echo "$deps" | tail -n 5 >&2
        missing=$(echo "$deps" | sed -n 's/^installing: //p')
        fail "could not install the packages the demo needs${missing:+ ($missing)}: run 'sudo $src/scripts/deps.sh build' (or run it as root), then scripts/demo.sh again"
    fi
    [ -z "$deps" ] || echo "$deps"
fi
for cmd in apxs cmake openssl curl flock awk sha256sum; do
    command -v "$cmd" >/dev/null || fail "$cmd is missing: run 'sudo $src/scripts/deps.sh build', then scripts/demo.sh again"
done

if [ -n "${MC_DEMO_BUILD_DIR:-}" ]; then
    build=$(cd "$MC_DEMO_BUILD_DIR" && pwd)
else
    build="$src/build/release"
    log="$demo/build.log"
    echo "building mod_multicompress (release preset; a few minutes the first time; log: $log)"
    if ! { cmake --preset release -S "$src" -DMC_BUILD_TESTS=OFF -DMC_BUILD_BENCH=OFF &&
        cmake --build --preset release -j"$(nproc)"; } >"$log" 2>&1; then
        grep -E -m 4 -A 2 "error|Error" "$log" >&2 || tail -n 8 "$log" >&2
        fail "the build failed (the whole log: $log): fix what it says above, then run scripts/demo.sh again"
    fi
fi
module="$build/mod_multicompress/httpd/mod_multicompress.so"
precompress="$build/mod_multicompress/tools/multicompress-precompress"
[ -f "$module" ] && [ -x "$precompress" ] ||
    fail "no mod_multicompress.so or multicompress-precompress in $build: build it (cmake --preset release && cmake --build --preset release), then run scripts/demo.sh again"

# The site, its bundle's releases and sidecars, a certificate, httpd.conf.
echo "making the demo in $demo"
if ! out=$("$src/conf/demo/prepare.sh" --dir "$demo" --module "$module" --precompress "$precompress" \
    --http-port "$http_port" --https-port "$https_port" 2>&1); then
    echo "$out" >&2
    fail "making the demo in $demo failed (above): fix it, then run scripts/demo.sh again"
fi
# What the curl lines below name, as prepare.sh made it.
release1_sha="" release2_path="" site_dict_sha=""
# shellcheck source=/dev/null
. "$demo/values.sh"
apache=${MC_DEMO_APACHE:-$(apxs -q SBINDIR)/$(apxs -q TARGET)}
if ! out=$("$apache" -d "$demo" -f "$demo/httpd.conf" -t 2>&1); then
    echo "$out" >&2
    fail "httpd refuses the demo's configuration (above): see $demo/httpd.conf"
fi

# In the foreground, as a child of this script: Ctrl-C reaches both (the terminal signals the
# whole group), and httpd stops its children and exits; the trap covers a SIGTERM to us alone.
check_ports
: >"$demo/logs/error_log"
echo "http://127.0.0.1:$http_port/ and https://localhost:$https_port/" >"$demo/.where"
"$apache" -d "$demo" -f "$demo/httpd.conf" -DFOREGROUND &
httpd=$!
trap 'kill -TERM "$httpd" 2>/dev/null || true' INT TERM HUP
for _ in $(seq 150); do
    if ! kill -0 "$httpd" 2>/dev/null; then
        wait "$httpd" || true
        grep -q -E "could not bind|Address already in use" "$demo/logs/error_log" &&
            fail "port $http_port or $https_port on 127.0.0.1 is in use: stop what listens there, or choose other ports, e.g. MC_DEMO_HTTP_PORT=18080 MC_DEMO_HTTPS_PORT=18443 scripts/demo.sh"
        tail -n 5 "$demo/logs/error_log" >&2
        fail "httpd stopped while starting (above; $demo/logs/error_log): fix it, then run scripts/demo.sh again"
    fi
    curl -s -o /dev/null "http://127.0.0.1:$http_port/" && break
    sleep 0.1
done

http="http://127.0.0.1:$http_port"
https="https://localhost:$https_port"
cat <<MSG

mod_multicompress demo: running (httpd pid $httpd). Ctrl-C stops it.

Open in a browser (each page shows one capability, what it did, and its configuration):
  $https/      HTTP/2, br, zstd and dictionaries
  $http/      plain HTTP: browsers offer gzip and deflate only
The certificate is made for this machine. Accept the browser's warning, or trust it (Chrome
keeps dictionaries only over a trusted certificate; libnss3-tools, then restart Chrome):
  certutil -d sql:\$HOME/.pki/nssdb -A -t "P,," -n mc-demo -i $demo/tls/cert.pem

What curl shows (-D - prints the headers):
  curl -s -o /dev/null -D - -H 'Accept-Encoding: zstd, br, gzip' $http/
      Content-Encoding: zstd; X-MC-Source: live (compressed now), cache from the second time
  curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' $http/
      Content-Encoding: gzip: the coding follows the request's Accept-Encoding
  curl -s -o /dev/null -D - -H 'Accept-Encoding: br' $http/style.css
      X-MC-Source: sidecar: style.css.br, made by multicompress-precompress at start
  curl -s -o /dev/null -D - -H 'Accept-Encoding: dcz, zstd' -H 'Available-Dictionary: :$release1_sha:' $http$release2_path
      Content-Encoding: dcz; X-MC-Source: sidecar: the bundle's release 2 for a client that holds
      release 1, the delta multicompress-precompress wrote at start (a few hundred bytes)
  curl -s -o /dev/null -D - -H 'Accept-Encoding: dcz, zstd' -H 'Available-Dictionary: :$site_dict_sha:' $http/site-dictionary/docs/
      Content-Encoding: dcz: a page against the site dictionary trained at start (Link names it)
  curl -sk --http2 --compressed -o /dev/null -D - $https/br-only/
      HTTP/2 and Content-Encoding: br: that directory offers br only
  curl -sN -H 'Accept-Encoding: gzip' $http/cgi-bin/stream | gunzip
      an event every half second, each arriving as it is printed, compressed
  seq 1 2000 | gzip | curl -s --data-binary @- -H 'Content-Encoding: gzip' $http/cgi-bin/echo-body
      the CGI read 8893 bytes: it got the body decoded
  curl -s $http/metrics | grep -v '^#' | grep -v ' 0\$'
      the module's counters so far; $http/server-status draws them
Logs: $demo/logs/ (access_log has each response's coding and source)

MSG
while kill -0 "$httpd" 2>/dev/null; do
    wait "$httpd" || true
done
trap - INT TERM HUP
echo "demo: stopped"
