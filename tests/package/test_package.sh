#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package, end to end, on this machine (as root):
#   lintian reports no error; dpkg-deb --contents holds what it should; apt-get install enables
#   nothing beside mod_deflate; a2dismod deflate && a2enmod multicompress; Debian's own
#   /etc/apache2 configuration started on a free port serves compressed pages (decoded and
#   compared byte for byte); an upgrade to a higher version while requests run fails none of
#   them and reloads gracefully (the new .so is loaded); a purge disables the module and leaves
#   what the administrator wrote.
# The machine is left as found: /etc/apache2 and /var/lib/apache2 (a2enmod's records) are
# snapshotted and restored, the package is purged, and the server started here is stopped by
# PID, also on failure or interruption.
#
#   tests/package/test_package.sh [DEB]      (default: the path in build/deb/deb-path)
# MC_PACKAGE_UPGRADE=repack (default) makes the higher version by repacking DEB with
# dpkg-deb -R/-b; MC_PACKAGE_UPGRADE=rebuild builds it again with scripts/package.sh --version.
#
# Only the port is overridden: ports.conf's "Listen 80" becomes "Listen 127.0.0.1:PORT" while
# the test runs (ports.conf is restored with the rest of /etc/apache2). The server runs with
# /etc/apache2/envvars, whose pid, run, lock and log paths are pointed at a temporary directory.
#
# Reloads: the maintainer scripts reload through apache2-maintscript-helper, which calls
# "invoke-rc.d apache2 reload". That reaches the init system's apache2, not the one started
# here (and in containers policy-rc.d forbids it). While apt-get runs, PATH therefore starts
# with a stand-in invoke-rc.d that records the action and does what the init script's action
# does to the server started here: reload = apache2ctl graceful (SIGUSR1); restart = its stop
# half, apache2ctl graceful-stop (SIGWINCH: listeners closed, so requests are refused from then
# on; the start half is not emulated). The system's apache2 is never signalled.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
pkg=libapache2-mod-multicompress
deb=${1:-}
[ -n "$deb" ] || deb=$(cat "$src/build/deb/deb-path" 2>/dev/null || true)
upgrade_mode=${MC_PACKAGE_UPGRADE:-repack}

passed=0
failed=0
t_start=$(date +%s)
ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
check() { # check NAME COMMAND...
    local name=$1; shift
    if "$@"; then ok "$name"; else bad "$name"; fi
}
finish() {
    echo "package test: $(($(date +%s) - t_start)) s"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

if [ "$(id -u)" -ne 0 ]; then
    echo "test_package.sh: must run as root (apt-get install, /etc/apache2)"; bad "running as root"; finish; exit 1
fi
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
    echo "test_package.sh: no package (run scripts/package.sh first): '$deb'"; bad "package built"; finish; exit 1
fi
deb=$(readlink -f "$deb")
initial_state=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
if [ -n "$initial_state" ] && [ "$initial_state" != "not-installed" ]; then
    echo "test_package.sh: $pkg is already on this machine ($initial_state); the test would remove it."
    echo "  Remove it first: apt-get purge $pkg"
    bad "$pkg not installed before the test"; finish; exit 1
fi
ok "package built: $(basename "$deb")"

work=$(mktemp -d /tmp/mc-package-test.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/bin" "$work/run" "$work/lock" "$work/log" "$work/www" "$work/load"
chown www-data:www-data "$work/run" "$work/lock"
pidfile="$work/run/apache2.pid"
server_pid=""
load_pids=()
snapshot_done=0

manifest() { # every path under the two trees: type, mode, owner, link target, content hash
    (cd / && find etc/apache2 var/lib/apache2 -printf '%p %y %m %u:%g %l ' -exec sh -c \
        '[ -f "$1" ] && [ ! -L "$1" ] && md5sum <"$1" || echo -' sh {} \; | sort)
}
# --- snapshot ---------------------------------------------------------------------------------
if tar -C / -cpf "$work/etc-apache2.tar" etc/apache2 var/lib/apache2 &&
    manifest >"$work/before.list"; then
    snapshot_done=1
else
    bad "snapshot of /etc/apache2 and /var/lib/apache2"; finish; exit 1
fi

# The stand-in invoke-rc.d (see the header).
cat >"$work/bin/invoke-rc.d" <<EOF
#!/bin/sh
echo "\$*" >>"$work/invoke-rc.d.log"
pid=\$(cat "$pidfile" 2>/dev/null) || exit 0
case "\$1 \$2" in
    "apache2 reload"|"apache2 force-reload") kill -USR1 "\$pid" ;;
    "apache2 restart") kill -WINCH "\$pid" ;;
esac
exit 0
EOF
chmod 755 "$work/bin/invoke-rc.d"
# apt runs dpkg with its own PATH (DPkg::Path), so the stand-in goes first there.
apt_get() {
    DEBIAN_FRONTEND=noninteractive apt-get -y -q -o "DPkg::Path=$work/bin:/usr/sbin:/usr/bin:/sbin:/bin" "$@"
}

stop_load() {
    local p
    touch "$work/load/stop"
    for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null; done
    load_pids=()
}
stop_server() {
    [ -n "$server_pid" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null
    local i
    for i in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null
    server_pid=""
}
cleanup() {
    trap - EXIT INT TERM
    stop_load
    stop_server
    local state
    state=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    if [ -n "$state" ] && [ "$state" != "not-installed" ]; then
        apt_get purge "$pkg" >"$work/cleanup-purge.log" 2>&1 || dpkg --purge "$pkg" >>"$work/cleanup-purge.log" 2>&1
    fi
    if [ "$snapshot_done" -eq 1 ]; then
        # Move the current trees aside, then put the snapshot back (moved back if that fails).
        mkdir -p "$work/after/etc" "$work/after/var/lib"
        mv /etc/apache2 "$work/after/etc/" && mv /var/lib/apache2 "$work/after/var/lib/"
        if tar -C / -xpf "$work/etc-apache2.tar"; then
            manifest >"$work/restored.list"
            if cmp -s "$work/before.list" "$work/restored.list" &&
                [ -z "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -v '^not-installed$')" ]; then
                ok "machine restored (/etc/apache2, /var/lib/apache2, $pkg not installed)"
            else
                bad "machine restored"; diff "$work/before.list" "$work/restored.list" | head -20
            fi
        else
            rm -rf /etc/apache2 /var/lib/apache2
            mv "$work/after/etc/apache2" /etc/ && mv "$work/after/var/lib/apache2" /var/lib/
            bad "machine restored (the snapshot could not be extracted; left as the test had it)"
        fi
    fi
    if [ "$failed" -ne 0 ]; then
        for f in "$work"/*.log "$work"/log/error.log; do
            [ -f "$f" ] || continue
            echo "--- $f (last 30 lines)"; tail -n 30 "$f"
        done
    fi
    rm -rf "$work"
    finish
    exit $?
}
trap cleanup EXIT
trap 'echo "interrupted"; bad "not interrupted"; exit 1' INT TERM

# --- the package's files ------------------------------------------------------------------------
lintian_out="$work/lintian.log"
lintian --pedantic -I --show-overrides --tag-display-limit 0 "$deb" >"$lintian_out" 2>&1
lintian_rc=$?
sed 's/^/  lintian: /' "$lintian_out" | grep -v 'running with root privileges' || true
check "lintian: no error" test "$lintian_rc" -eq 0 -a -z "$(grep '^E:' "$lintian_out")"

contents="$work/contents.txt"
dpkg-deb --contents "$deb" | awk '{print $1, $6}' >"$contents"
has() { grep -qE "^$1 \./$2\$" "$contents"; }
check "contents: module in /usr/lib/apache2/modules" has '-rw-r--r--' 'usr/lib/apache2/modules/mod_multicompress\.so'
check "contents: mods-available/multicompress.load" has '-rw-r--r--' 'etc/apache2/mods-available/multicompress\.load'
check "contents: mods-available/multicompress.conf" has '-rw-r--r--' 'etc/apache2/mods-available/multicompress\.conf'
check "contents: /usr/bin/multicompress-precompress" has '-rwxr-xr-x' 'usr/bin/multicompress-precompress'
check "contents: man page, section 1" has '-rw-r--r--' 'usr/share/man/man1/multicompress-precompress\.1\.gz'
check "contents: README in /usr/share/doc" has '-rw-r--r--' "usr/share/doc/$pkg/README\.md(\.gz)?"
check "contents: changelog" has '-rw-r--r--' "usr/share/doc/$pkg/changelog(\.Debian)?\.gz"
check "contents: copyright" has '-rw-r--r--' "usr/share/doc/$pkg/copyright"
check "contents: nothing else outside those directories" test -z "$(awk '$1 !~ /^d/ {print $2}' "$contents" |
    grep -vE '^\./(usr/lib/apache2/modules|etc/apache2/mods-available|usr/bin|usr/share/man/man1|usr/share/doc/'"$pkg"'|usr/share/lintian/overrides)/')"
deb_load=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./etc/apache2/mods-available/multicompress.load)
check "multicompress.load loads /usr/lib/apache2/modules/mod_multicompress.so" \
    grep -q '^LoadModule multicompress_module /usr/lib/apache2/modules/mod_multicompress\.so$' <<<"$deb_load"
check "multicompress.conf is conf/multicompress.conf" \
    cmp -s <(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./etc/apache2/mods-available/multicompress.conf) "$src/conf/multicompress.conf"
depends=$(dpkg-deb -f "$deb" Depends)
echo "  Depends: $depends"
for d in apache2-api-20120211 'apache2-bin ' libbrotli1 libzstd1 zlib1g libdeflate0 libstdc\\+\\+6 libc6; do
    check "Depends: ${d//\\/}" grep -qE "(^|, )$d" <<<"$depends"
done
# Every library the binaries link is covered (${shlibs:Depends}).
scratch="$work/unpacked"
dpkg-deb -x "$deb" "$scratch"
# The package that ships the library for this architecture (libm.so.6 is also in libc6-i386's
# /lib32, which must not count).
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for bin in usr/lib/apache2/modules/mod_multicompress.so usr/bin/multicompress-precompress; do
    for lib in $(objdump -p "$scratch/$bin" | awk '/NEEDED/ {print $2}'); do
        owner=$(dpkg -S "*/$multiarch/$lib" 2>/dev/null | head -1 | cut -d: -f1)
        check "$bin: $lib (${owner:-?}) in Depends" grep -qE "(^|, )${owner//+/\\+}( |,|$)" <<<"$depends"
    done
done

# --- install ------------------------------------------------------------------------------------
conflicts=""
for m in deflate brotli; do a2query -q -m "$m" >/dev/null 2>&1 && conflicts="$conflicts $m"; done
apt_get install "$deb" >"$work/install.log" 2>&1
check "apt-get install ./$(basename "$deb")" test "$(dpkg-query -W -f='${db:Status-Status}' "$pkg")" = installed
if [ -n "$conflicts" ]; then
    check "install with${conflicts} enabled: multicompress left disabled" \
        test "$(a2query -q -m multicompress >/dev/null 2>&1; echo $?)" -ne 0
    check "install with${conflicts} enabled: the administrator is told what to do" \
        grep -q "a2dismod -f${conflicts} && a2enmod multicompress" "$work/install.log"
    # "# Conflicts: deflate brotli" in multicompress.load: Debian's a2enmod refuses, with its
    # own message, instead of enabling a pair that cannot start.
    check "a2enmod multicompress refused while${conflicts} enabled" \
        sh -c "! a2enmod multicompress >'$work/conflict.log' 2>&1 &&
               grep -q 'cannot proceed due to conflicts' '$work/conflict.log' &&
               ! a2query -q -m multicompress"
else
    check "install without mod_deflate/mod_brotli: multicompress enabled" a2query -q -m multicompress
fi
check "man multicompress-precompress" sh -c "man -w multicompress-precompress >/dev/null"
printf 'body{color:red}\n%.0s' $(seq 200) >"$work/www/site.css"
check "multicompress-precompress from the package writes sidecars" \
    sh -c "multicompress-precompress -q '$work/www' && test -s '$work/www/site.css.zst' && test -s '$work/www/site.css.br' && test -s '$work/www/site.css.gz'"

# --- enable, start Debian's configuration on a free port ----------------------------------------
extra=""; [[ $conflicts == *brotli* ]] && extra=brotli
# -f: a2dismod asks before disabling deflate, which Debian counts as essential.
a2dismod -q -f deflate $extra >"$work/a2.log" 2>&1 && a2enmod -q multicompress >>"$work/a2.log" 2>&1
check "a2dismod deflate && a2enmod multicompress" a2query -q -m multicompress
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -i "s/^Listen 80\$/Listen 127.0.0.1:$port/" /etc/apache2/ports.conf
check "ports.conf: Listen 127.0.0.1:$port" grep -q "^Listen 127.0.0.1:$port\$" /etc/apache2/ports.conf
(
    set +u
    . /etc/apache2/envvars
    export APACHE_PID_FILE="$pidfile" APACHE_RUN_DIR="$work/run" APACHE_LOCK_DIR="$work/lock" APACHE_LOG_DIR="$work/log"
    exec /usr/sbin/apache2 -k start
) >"$work/start.log" 2>&1
for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.1; done
server_pid=$(cat "$pidfile" 2>/dev/null || true)
url="http://127.0.0.1:$port/"
up=0
for _ in $(seq 100); do curl -fs -o /dev/null "$url" && { up=1; break; }; sleep 0.1; done
check "apache2 started with /etc/apache2 on 127.0.0.1:$port (pid ${server_pid:-none})" test "$up" -eq 1 -a -n "$server_pid"

# --- a compressed page --------------------------------------------------------------------------
page=/var/www/html/index.html
fetch() { # fetch ENCODING OUT: the body as sent, and its Content-Encoding on stdout
    curl -fsS -H "Accept-Encoding: $1" -o "$2" -w '%header{content-encoding}' "$url"
}
declare -A decode=([zstd]="zstd -dc" [br]="brotli -dc" [gzip]="gzip -dc")
for enc in zstd br gzip; do
    ce=$(fetch "$enc" "$work/body.$enc")
    check "GET / Accept-Encoding: $enc: Content-Encoding: $enc, smaller than $page" \
        test "$ce" = "$enc" -a "$(stat -c %s "$work/body.$enc" 2>/dev/null || echo 0)" -lt "$(stat -c %s "$page")"
    check "GET / ($enc) decodes to the bytes of $page" cmp -s <(${decode[$enc]} "$work/body.$enc") "$page"
done
ce=$(fetch identity "$work/body.identity")
check "GET / Accept-Encoding: identity: the page itself" test -z "$ce" -a -n "$(cmp "$work/body.identity" "$page" && echo same)"

# --- upgrade while requests run -----------------------------------------------------------------
version=$(dpkg-deb -f "$deb" Version)
new_version="$version+upgrade1"
new_deb="$work/${pkg}_${new_version}_$(dpkg-deb -f "$deb" Architecture).deb"
if [ "$upgrade_mode" = rebuild ]; then
    "$src/scripts/package.sh" --out "$work/rebuild" --version "$new_version" >"$work/rebuild.log" 2>&1 &&
        cp "$(cat "$work/rebuild/deb-path")" "$new_deb"
else
    dpkg-deb -R "$deb" "$work/repack" &&
        sed -i "s/^Version: .*/Version: $new_version/" "$work/repack/DEBIAN/control" &&
        dpkg-deb -b "$work/repack" "$new_deb" >/dev/null
fi
check "package $new_version ($upgrade_mode)" dpkg --compare-versions "$(dpkg-deb -f "$new_deb" Version 2>/dev/null || echo 0)" gt "$version"

so=/usr/lib/apache2/modules/mod_multicompress.so
old_inode=$(stat -c %i "$so")
loader() { # loader N: requests until the stop file appears (at most 60 s), one line each
    local end=$((SECONDS + 60)) line
    while [ ! -e "$work/load/stop" ] && [ $SECONDS -lt $end ]; do
        line=$(curl -sS -o /dev/null --max-time 10 -H 'Accept-Encoding: zstd' \
            -w '%{http_code} %header{content-encoding}' "$url" 2>&1 | tr '\n' ' ')
        echo "$line" >>"$work/load/$1"
    done
}
rm -f "$work/load/stop"
for n in 1 2 3; do loader "$n" & load_pids+=($!); done
count() { cat "$work/load/"[0-9] 2>/dev/null | wc -l; }
for _ in $(seq 100); do [ "$(count)" -ge 30 ] && break; sleep 0.1; done
before=$(count)
: >"$work/invoke-rc.d.log"
apt_get install "$new_deb" >"$work/upgrade.log" 2>&1
upgrade_rc=$?
during=$(($(count) - before))
check "apt-get install ./$(basename "$new_deb") (upgrade)" test "$upgrade_rc" -eq 0 -a \
    "$(dpkg-query -W -f='${Version}' "$pkg")" = "$new_version"
check "upgrade asked for a graceful reload, never a restart ($(tr '\n' ';' <"$work/invoke-rc.d.log"))" \
    test "$(cat "$work/invoke-rc.d.log")" = "apache2 reload"
new_inode=$(stat -c %i "$so")
# The graceful restart: the parent reloads its modules, new children map the new file.
maps_new() { # maps_new PID: it maps $so with the new inode and not the old one
    local m
    m=$(grep -F "$so" "/proc/$1/maps" 2>/dev/null) || return 1
    awk '{print $5}' <<<"$m" | grep -qx "$new_inode" && ! awk '{print $5}' <<<"$m" | grep -qx "$old_inode"
}
all_new() {
    local c kids
    maps_new "$server_pid" || return 1
    kids=$(pgrep -P "$server_pid") || return 1
    for c in $kids; do maps_new "$c" || return 1; done
}
loaded=0
for _ in $(seq 150); do all_new && { loaded=1; break; }; sleep 0.1; done
sleep 1   # requests keep running on the new generation
stop_load
total=$(count)
failures=$(cat "$work/load/"[0-9] | grep -vcx '200 zstd')
echo "  requests: $total ($during while apt-get ran), not '200 zstd': $failures"
grep -vx '200 zstd' "$work/load/"[0-9] | sort | uniq -c | head -5
check "requests ran during the upgrade ($during)" test "$during" -gt 0
check "no failed request during the upgrade ($failures of $total)" test "$failures" -eq 0
check "new mod_multicompress.so loaded by the parent and every child (inode $old_inode -> $new_inode)" \
    test "$loaded" -eq 1 -a "$new_inode" != "$old_inode"
check "same server: pid $server_pid still running" kill -0 "$server_pid"
check "error_log: the graceful restart (AH00493), no [emerg]/[alert]/[crit]/[error]" sh -c \
    "grep -q AH00493 '$work/log/error.log' && ! grep -E '\[[a-z_]*:(emerg|alert|crit|error)\]' '$work/log/error.log'"

# --- purge --------------------------------------------------------------------------------------
echo "# written by the administrator" >/etc/apache2/conf-available/mc-package-test-admin.conf
: >"$work/invoke-rc.d.log"
apt_get purge "$pkg" >"$work/purge.log" 2>&1
check "apt-get purge $pkg" test -z "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -v '^not-installed$')"
check "purge: module disabled (no mods-enabled/multicompress.*)" \
    test -z "$(ls /etc/apache2/mods-enabled/ | grep multicompress)"
check "purge: mods-available/multicompress.*, the .so and the tool are gone" \
    test ! -e /etc/apache2/mods-available/multicompress.load -a ! -e /etc/apache2/mods-available/multicompress.conf \
    -a ! -e "$so" -a ! -e /usr/bin/multicompress-precompress
check "purge: a2enmod's record of multicompress forgotten" \
    test -z "$(find /var/lib/apache2 -name multicompress)"
check "purge: what the administrator wrote stays (conf-available file, sidecars)" \
    test -f /etc/apache2/conf-available/mc-package-test-admin.conf -a -s "$work/www/site.css.zst"
check "purge: mod_deflate stays as the administrator left it (disabled)" \
    test "$(a2query -q -m deflate >/dev/null 2>&1; echo $?)" -ne 0
check "removal asked for a graceful reload, never a restart ($(tr '\n' ';' <"$work/invoke-rc.d.log"))" \
    test "$(cat "$work/invoke-rc.d.log")" = "apache2 reload"
ok_after=0
for _ in $(seq 50); do
    ce=$(fetch zstd "$work/body.after" 2>/dev/null) && [ -z "$ce" ] && cmp -s "$work/body.after" "$page" && { ok_after=1; break; }
    sleep 0.1
done
check "after the purge the server still serves / (uncompressed)" test "$ok_after" -eq 1
