#!/usr/bin/env bash
# The main job: build mod_multicompress and run a demo httpd in the foreground (Ctrl-C stops it)
# on http://127.0.0.1:8080/ and https://127.0.0.1:8443/ (HTTP/2, self-signed certificate).
# Ports can be changed with MC_DEMO_HTTP_PORT / MC_DEMO_HTTPS_PORT.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
http_port=${MC_DEMO_HTTP_PORT:-8080}
https_port=${MC_DEMO_HTTPS_PORT:-8443}

"$src/scripts/deps.sh" build
cmake --preset release -S "$src" -DMC_BUILD_TESTS=OFF -DMC_BUILD_BENCH=OFF >/dev/null
cmake --build --preset release -j"$(nproc)"

demo="$src/build/demo"
modules=$(apxs -q LIBEXECDIR)
module="$src/build/release/mod_multicompress/httpd/mod_multicompress.so"
mkdir -p "$demo/logs" "$demo/tls"
rm -rf "$demo/htdocs"
cp -r "$src/conf/demo/htdocs" "$demo/htdocs"
if ! openssl x509 -checkend 86400 -noout -in "$demo/tls/cert.pem" >/dev/null 2>&1; then
    # A fresh self-signed certificate for localhost (missing or about to expire); never committed.
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -addext "basicConstraints=critical,CA:FALSE" \
        -keyout "$demo/tls/key.pem" -out "$demo/tls/cert.pem" 2>/dev/null
fi
user_lines=""
if [ "$(id -u)" -eq 0 ]; then
    # As root, httpd's children need an unprivileged user to switch to.
    user_lines="User www-data\nGroup www-data"
    chown -R www-data:www-data "$demo/logs"
fi
sed -e "s|@DEMO@|$demo|g" -e "s|@SOURCE@|$src|g" -e "s|@MODULES@|$modules|g" \
    -e "s|@MODULE@|$module|g" -e "s|@HTTP_PORT@|$http_port|g" -e "s|@HTTPS_PORT@|$https_port|g" -e "s|@USER@|$user_lines|" \
    "$src/conf/demo/httpd.conf.in" > "$demo/httpd.conf"

apache=$(apxs -q SBINDIR)/$(apxs -q TARGET)
"$apache" -d "$demo" -f "$demo/httpd.conf" -t

cat <<MSG

mod_multicompress demo
  http://127.0.0.1:$http_port/     https://127.0.0.1:$https_port/ (HTTP/2, self-signed)
See it compress (the body is decoded back by curl; -v shows the headers):
  curl -s -o /dev/null -D - -H 'Accept-Encoding: zstd, br, gzip' http://127.0.0.1:$http_port/
  curl -sk --http2 --compressed -D - https://127.0.0.1:$https_port/br-only/ -o /dev/null
  curl -sN -H 'Accept-Encoding: gzip' http://127.0.0.1:$http_port/cgi-bin/stream | gunzip
Logs: $demo/logs/   Ctrl-C stops the server.

MSG
# In the foreground: Ctrl-C (SIGINT) makes httpd stop its children and exit.
exec "$apache" -d "$demo" -f "$demo/httpd.conf" -DFOREGROUND
