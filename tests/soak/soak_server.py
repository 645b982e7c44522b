# SPDX-License-Identifier: Apache-2.0
"""The soak's server (part of soak.py): its site (the module's, or with --stock Debian's
mod_deflate + mod_brotli), the MPM settings, the documents it serves (static files, generated
big texts, precompressed sidecars), a streaming shell CGI, and the start script for --cores."""
from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import brotli
import zstandard

from mc_bodies import big_body_blocks, text_body
from mc_drop_in import DropinServer
from mc_env import McEnv

MIB = 1 << 20


SITE = r"""
LimitRequestFieldSize 8190

# default order (zstd br gzip), the test_200 table
Alias /s "@HTDOCS@/soak"
<Location /s/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Location>
# all four codings
Alias /d "@HTDOCS@/soak"
<Location /d/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
</Location>
# the three single-coding filters on one response: one negotiation from their union
Alias /f "@HTDOCS@/soak"
<Location /f/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    AddOutputFilterByType ZSTD @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
    MultiCompressBufferSize 4K
</Location>
# the shared cache (shmcb) with its upgrade worker
Alias /c "@HTDOCS@/cache"
<Directory "@HTDOCS@/cache">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
    MultiCompressCache On
</Directory>
# precompressed sidecars
Alias /p "@HTDOCS@/side"
<Directory "@HTDOCS@/side">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
    MultiCompressStatic On
</Directory>
<Location /shapes/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html text/plain
    MultiCompressEncodings zstd br gzip deflate
</Location>
<Location /mctest/>
    SetHandler mctest
    AddOutputFilterByType MULTICOMPRESS text/html text/plain
    MultiCompressEncodings zstd br gzip deflate
</Location>
# the ratio limit out of the way (the test bodies inflate up to ~1000 times) ...
<Location /echo/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
    AddOutputFilterByType MULTICOMPRESS text/plain
    MultiCompressEncodings zstd br gzip deflate
    MultiCompressInflateRatio 100000 100000
</Location>
# ... and the defaults (ratio 200, burst 3) for the bombs
<Location /echo-lim/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
</Location>
ScriptAlias /cgi/ "@HTDOCS@/soakcgi/"
<Directory "@HTDOCS@/soakcgi">
    Options +ExecCGI
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@ text/event-stream
    MultiCompressEncodings zstd br gzip deflate
</Directory>
"""

# Both sites: mod_status, whose ?auto the RSS check reads for the module's bounded caches.
STATUS = """
<Location /server-status>
    SetHandler server-status
</Location>
"""

# --stock: the same locations served by Debian's mod_deflate + mod_brotli as a new user sets
# them up (Debian's defaults, brotli first), for a side-by-side memory figure.
SITE_STOCK = r"""
LimitRequestFieldSize 8190
Alias /s "@HTDOCS@/soak"
Alias /d "@HTDOCS@/soak"
Alias /f "@HTDOCS@/soak"
Alias /c "@HTDOCS@/cache"
Alias /p "@HTDOCS@/side"
<LocationMatch "^/[sdfcp]/">
    AddOutputFilterByType BROTLI_COMPRESS;DEFLATE @TEXT_TYPES@
</LocationMatch>
<Location /shapes/>
    SetHandler mctest-shapes
    AddOutputFilterByType BROTLI_COMPRESS;DEFLATE text/html text/plain
</Location>
<Location /mctest/>
    SetHandler mctest
    AddOutputFilterByType BROTLI_COMPRESS;DEFLATE text/html text/plain
</Location>
ScriptAlias /cgi/ "@HTDOCS@/soakcgi/"
<Directory "@HTDOCS@/soakcgi">
    Options +ExecCGI
    AddOutputFilterByType BROTLI_COMPRESS;DEFLATE @TEXT_TYPES@ text/event-stream
</Directory>
"""
# what --stock sends: everything but request bodies (mod_deflate inflates gzip only) and the
# mod_mctest_dropin shapes (children of the stock pair crash on them: not what is measured)
STOCK_KINDS = ("static", "head", "range", "cond", "cgi", "abort", "badae")

# event MPM: two children of 40 threads that are never replaced (MaxSpareThreads = all of them),
# so RSS and fds are measured on the same processes from start to end. 80 workers for 64
# clients: every thread serves during the warm-up (a thread's stack and caches are part of the
# RSS from its first deep request on), and the clients' aborted requests still find a worker.
MPM_CONF = """StartServers 2
ServerLimit 2
ThreadsPerChild 40
ThreadLimit 40
MaxRequestWorkers 80
MinSpareThreads 8
MaxSpareThreads 80
MaxConnectionsPerChild 0
MaxMemFree @MAXMEMFREE@
"""

# A CGI in sh (no interpreter start-up per request): QUERY_STRING "LINES_PAUSE_TYPE".
STREAM_CGI = r"""#!/bin/sh
lines=${QUERY_STRING%%_*}
rest=${QUERY_STRING#*_}
pause=${rest%%_*}
kind=${rest#*_}
if [ "$kind" = e ]; then
    printf 'Content-Type: text/event-stream\r\n\r\n'
else
    printf 'Content-Type: text/plain\r\n\r\n'
fi
i=1
while [ "$i" -le "$lines" ]; do
    if [ "$i" -gt 1 ]; then sleep "$pause"; fi
    j=0
    while [ "$j" -lt 8 ]; do
        printf 'line %d of %d part %d: streamed by stream.sh, flushed while the script pauses.\n' \
            "$i" "$lines" "$j"
        j=$((j + 1))
    done
    i=$((i + 1))
done
"""


def stream_cgi_body(lines: int) -> bytes:
    return b"".join(
        b"line %d of %d part %d: streamed by stream.sh, flushed while the script pauses.\n"
        % (i, lines, j) for i in range(1, lines + 1) for j in range(8))


STATIC_DOCS = ("page.html", "small.html", "style.css", "app.js", "data.json", "logo.svg",
               "license.txt", "tiny.html", "image.png", "photo.jpg")
COMPRESSIBLE = {"html", "css", "js", "json", "svg", "txt"}
BIG_DOCS = {"big-text.txt": 1536 * 1024, "big-b64.txt": 3 * MIB}
SIDE_DOCS = ("page.html", "style.css", "app.js", "data.json", "license.txt")


def build_documents(env: McEnv) -> dict[str, bytes]:
    docs = {n: (env.src_dir / "htdocs" / "static" / n).read_bytes() for n in STATIC_DOCS}
    docs["big-text.txt"] = text_body(BIG_DOCS["big-text.txt"])
    docs["big-b64.txt"] = b"".join(big_body_blocks(BIG_DOCS["big-b64.txt"], seed=7))
    return docs


def sidecar(data: bytes, coding: str) -> bytes:
    if coding == "gzip":
        return gzip.compress(data, 9, mtime=0)
    if coding == "br":
        return brotli.compress(data, quality=9)
    return zstandard.ZstdCompressor(level=19, write_content_size=True).compress(data)


def make_server(env: McEnv, docs: dict[str, bytes], max_mem_free: int = 2048,
                cores: bool = False, stock: bool = False) -> DropinServer:
    files: dict[str, bytes | str] = {}
    for name, data in docs.items():
        files[f"soak/{name}"] = data
        files[f"cache/{name}"] = data
    for name in SIDE_DOCS:
        files[f"side/{name}"] = docs[name]
    files["soakcgi/stream.sh"] = STREAM_CGI
    site = ((SITE_STOCK if stock else SITE) + STATUS
            + ('CoreDumpDirectory "@GEN@/cores"\n' if cores else ""))
    mods = ["socache_shmcb", "status"] + (["deflate", "brotli"] if stock else [])
    srv = DropinServer(env, "soak-stock" if stock else "soak", site, files=files,
                       extra_modules=mods, trace=False, mpm="event", load_mc=not stock,
                       mpm_conf=MPM_CONF.replace("@MAXMEMFREE@", str(max_mem_free)))
    orig_render = srv.render

    def render() -> None:
        orig_render()
        os.chmod(srv.htdocs / "soakcgi" / "stream.sh", 0o755)
        if cores:
            (srv.gen / "cores").mkdir(exist_ok=True)
            os.chmod(srv.gen / "cores", 0o1777)
        # an hour old: httpd makes the ETag of a file modified in the last second weak
        old = time.time() - 3600
        for p in srv.htdocs.rglob("*"):
            if p.is_file():
                os.utime(p, (old, old))
        suffix = {"zstd": ".zst", "br": ".br", "gzip": ".gz"}
        for name in SIDE_DOCS:
            src = srv.htdocs / "side" / name
            st = src.stat()
            for coding, suf in suffix.items():
                p = Path(str(src) + suf)
                p.write_bytes(sidecar(docs[name], coding))
                os.chmod(p, 0o644)
                os.utime(p, (st.st_atime, st.st_mtime + 1))
    srv.render = render
    return srv



def start_wrapper(env: McEnv) -> Path:
    """A start script for httpd that sets `ulimit -c unlimited` (--cores). httpd runs with
    glibc's default environment, as an administrator runs it: no malloc tunables."""
    env.gen_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(env.gen_dir, 0o755)
    path = env.gen_dir / f"apache2-soak-{os.getpid()}.sh"
    lines = ["#!/bin/sh", "# written by tests/soak/soak.py"]
    lines.append("ulimit -c unlimited")
    lines.append(f'exec "{env.apache_bin}" "$@"')
    path.write_text("\n".join(lines) + "\n")
    os.chmod(path, 0o755)
    return path
