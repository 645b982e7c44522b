#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Renders the demo into a directory: the site (conf/demo/htdocs), the releases of its hashed
# bundle, the sidecars and delta sidecars multicompress-precompress makes, the documentation
# pages (docsite.awk) and the site dictionary the tool trains on them, a certificate for
# localhost and 127.0.0.1, and httpd.conf, whose panel blocks are copied into the pages that
# explain them.
# scripts/demo.sh and tests/integration/test_497_demo.py both make the demo with it.
#
#   conf/demo/prepare.sh --dir DIR --module MOD.so --precompress BIN \
#       --http-port N --https-port N [--modules APACHE_MODULES_DIR]
#
# Then: apache2 -d DIR -f DIR/httpd.conf [-DFOREGROUND | -k start].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

die() {
    echo "prepare.sh: $*" >&2
    exit 1
}

dir="" module="" precompress="" http_port="" https_port="" modules=""
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir=$2 ;;
        --module) module=$2 ;;
        --precompress) precompress=$2 ;;
        --http-port) http_port=$2 ;;
        --https-port) https_port=$2 ;;
        --modules) modules=$2 ;;
        *) die "unknown option $1" ;;
    esac
    shift 2
done
[ -n "$dir" ] && [ -n "$module" ] && [ -n "$precompress" ] && [ -n "$http_port" ] &&
    [ -n "$https_port" ] || die "usage: $0 --dir DIR --module SO --precompress BIN --http-port N --https-port N"
[ -f "$module" ] || die "no module at $module"
[ -x "$precompress" ] || die "no multicompress-precompress at $precompress"
[ -n "$modules" ] || modules=$(apxs -q LIBEXECDIR)
module=$(readlink -f "$module")
precompress=$(readlink -f "$precompress")

mkdir -p "$dir/logs" "$dir/tls"
dir=$(cd "$dir" && pwd)
site="$dir/htdocs"
rm -rf "$site"
cp -r "$here/htdocs" "$site"

# Texts from this project: its README for the cache and CPU budget pages, two of its documents
# as the sidecars page's samples.
cp "$src/README.md" "$site/cache/README.txt"
mkdir -p "$site/cpu-budget/load" "$site/sidecars/samples"
cp "$src/README.md" "$site/cpu-budget/load/README.txt"
cp "$src/docs/contract.md" "$site/sidecars/samples/contract.txt"
cp "$src/docs/design.md" "$site/sidecars/samples/design.txt"

# The hashed bundle: five releases, each a small change of the one before (bundle.js.in: lines
# that end in "// release>=N" are in releases N and later, "// release<N" in those before).
# Its name carries the hash of its bytes, as a bundler names it; every page finds the names in
# the manifest the pages get as @RELEASES@.
mkdir -p "$site/assets"
releases=""
rel_path=() rel_sha=()
for r in 1 2 3 4 5; do
    tmp="$site/assets/.release-$r"
    awk -v r="$r" '
        match($0, /\/\/ release>=[0-9]+$/) { if (r + 0 < substr($0, RSTART + 12) + 0) next; sub(/ *\/\/ release>=[0-9]+$/, "") }
        match($0, /\/\/ release<[0-9]+$/) { if (r + 0 >= substr($0, RSTART + 11) + 0) next; sub(/ *\/\/ release<[0-9]+$/, "") }
        { gsub(/@RELEASE@/, r); print }' "$here/bundle.js.in" >"$tmp"
    hex=$(sha256sum "$tmp" | cut -c1-12)
    sha=$(openssl dgst -sha256 -binary "$tmp" | base64)
    size=$(stat -c %s "$tmp")
    mv "$tmp" "$site/assets/app.$hex.js"
    # a second apart, in release order (the tool's deltas go to the most recent other versions)
    touch -d "@$(($(date +%s) - 60 + r))" "$site/assets/app.$hex.js"
    rel_path[r]="/assets/app.$hex.js" rel_sha[r]=$sha
    releases+="${releases:+, }{\"release\": $r, \"path\": \"/assets/app.$hex.js\", \"bytes\": $size, \"sha256\": \"$sha\"}"
done
releases="[$releases]"

# The site dictionary: the project's README and two of its documents as a small site under
# site-dictionary/docs/ (docsite.awk: one page per section, in one template), and a 16 KiB
# dictionary trained on those pages by the tool, served at a URL named after its hash (a new
# dictionary, a new URL: browsers keep the old one for a year). What the tool printed and the
# dictionary's name, size and hash are on the site dictionary's pages.
docs="$site/site-dictionary/docs"
mkdir -p "$docs"
awk -v out="$docs" -f "$here/docsite.awk" "$src/README.md" "$src/docs/contract.md" \
    "$src/docs/design.md" || die "could not make the documentation pages"
dict="$dir/site-dictionary.dict"
train=(--train-dictionary site-dictionary.dict --dictionary-size 16k htdocs/site-dictionary/docs)
printed="$dir/logs/train.txt"
(cd "$dir" && "$precompress" --no-progress "${train[@]}") >"$printed" 2>&1 ||
    die "multicompress-precompress could not train the site dictionary: $(tail -3 "$printed")"
dict_hex=$(sha256sum "$dict" | cut -c1-64)
dict_sha=$(openssl dgst -sha256 -binary "$dict" | base64)
dict_url="/dict/site.${dict_hex:0:12}.txt"
{
    echo "\$ multicompress-precompress ${train[*]}"
    cat "$printed"
} >"$site/site-dictionary/train.txt"
cat >"$site/site-dictionary/dictionary.json" <<JSON
{"url": "$dict_url", "bytes": $(stat -c %s "$dict"), "sha256": "$dict_sha", "hex": "$dict_hex",
 "pages": $(find "$docs" -name '*.html' | wc -l)}
JSON
# What scripts/demo.sh's curl lines name.
cat >"$dir/values.sh" <<VALUES
release1_sha='${rel_sha[1]}' release2_path='${rel_path[2]}' site_dict_sha='$dict_sha'
VALUES

# A certificate for both names the demo answers to (the cross-site page needs two sites),
# made again when missing, about to expire, or made for other names.
cert="$dir/tls/cert.pem" key="$dir/tls/key.pem"
if ! openssl x509 -checkend 86400 -noout -in "$cert" >/dev/null 2>&1 ||
    ! openssl x509 -noout -ext subjectAltName -in "$cert" 2>/dev/null | grep -q "IP Address:127.0.0.1"; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
        -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -addext "basicConstraints=critical,CA:FALSE" -addext "extendedKeyUsage=serverAuth" \
        -keyout "$key" -out "$cert" 2>/dev/null || die "openssl could not make a certificate"
    chmod 600 "$key"
fi

# mod_cgid's socket: a Unix socket path has at most 108 bytes (cgid appends ".PID").
cgid_sock="$dir/logs/cgid.sock"
if [ ${#cgid_sock} -gt 90 ]; then
    cgid_sock="/tmp/mc-demo-$(echo "$dir" | sha256sum | cut -c1-12).cgid.sock"
fi

user_lines=""
if [ "$(id -u)" -eq 0 ]; then
    # As root, httpd's children need an unprivileged user to switch to.
    user_lines="User www-data\nGroup www-data"
fi
sed -e "s|@DEMO@|$dir|g" -e "s|@SOURCE@|$src|g" -e "s|@MODULES@|$modules|g" \
    -e "s|@MODULE@|$module|g" -e "s|@HTTP_PORT@|$http_port|g" \
    -e "s|@HTTPS_PORT@|$https_port|g" -e "s|@USER@|$user_lines|" -e "s|@CGID_SOCK@|$cgid_sock|g" \
    -e "s|@SITE_DICT@|$dict|g" -e "s|@SITE_DICT_URL@|$dict_url|g" \
    "$here/httpd.conf.in" >"$dir/httpd.conf"

# Each "# ---- panel: NAME" block of httpd.conf, HTML-escaped, replaces the line
# "@CONFIG:NAME@" in the pages; @HTTP_PORT@, @HTTPS_PORT@ and @RELEASES@ are filled in.
blocks="$dir/logs/panels"
rm -rf "$blocks"
mkdir -p "$blocks"
awk -v out="$blocks" '
    /^# ---- panel: / { name = $4; next }
    /^# ---- end/ { name = ""; next }
    name != "" {
        gsub(/&/, "\\&amp;"); gsub(/</, "\\&lt;"); gsub(/>/, "\\&gt;")
        print >> (out "/" name)
    }' "$dir/httpd.conf"
find "$site" \( -path "$site/assets" -o -path "$docs" \) -prune -o \( -name '*.html' -o -name '*.js' \) -print |
while read -r page; do
    awk -v blocks="$blocks" -v http="$http_port" -v https="$https_port" -v rel="$releases" -v demo="$dir" '
        match($0, /@CONFIG:[a-z-]+@/) {
            name = substr($0, RSTART + 8, RLENGTH - 9)
            file = blocks "/" name
            n = 0
            while ((getline line < file) > 0) { print line; n++ }
            close(file)
            if (n == 0) { print "prepare.sh: no panel " name " in httpd.conf" > "/dev/stderr"; exit 3 }
            next
        }
        { gsub(/@HTTP_PORT@/, http); gsub(/@HTTPS_PORT@/, https); gsub(/@RELEASES@/, rel); gsub(/@DEMO@/, demo); print }
    ' "$page" >"$page.tmp" || die "cannot fill in $page"
    mv "$page.tmp" "$page"
done

# Sidecars: the shared stylesheet, script and logo, the sample pages and the bundle releases, at
# the tool's default levels (zstd 19, br 11, gzip 9, dcz 19). What the tool printed is on the
# sidecars page. (The HTML pages and cache/README.txt get none: they show the cache.) Every
# release of the bundle also gets a delta sidecar FILE.dcz-<16 hex> against each other release,
# so that whichever one a browser holds, the next comes from a file.
side=("$site/style.css" "$site/app.js" "$site/logo.svg" "$site/sidecars/samples" "$site/assets")
args=(--verbose --deltas 4 "${side[@]#"$site/"}")
printed="$dir/logs/precompress.txt"
(cd "$site" && "$precompress" --no-progress "${args[@]}") >"$printed" 2>&1 ||
    die "multicompress-precompress failed: $(tail -3 "$printed")"
{
    echo "\$ multicompress-precompress ${args[*]}"
    grep '^wrote ' "$printed" | sort -k2,2  # the jobs finish in any order
    grep -v '^wrote ' "$printed"
} >"$site/sidecars/precompress.txt"

find "$site" -type d -exec chmod 755 {} +
find "$site" -type f -exec chmod 644 {} +
chmod 755 "$site"/cgi-bin/*
if [ "$(id -u)" -eq 0 ]; then
    chown -R www-data:www-data "$dir/logs"
fi
