#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Soak: one httpd (event MPM, MaxConnectionsPerChild 0) with mod_multicompress, every encoding
enabled, under a bounded time of mixed traffic at concurrency 64 (issue 7).

The traffic, every request built and checked by this script (no wrk: see tests/soak/README.md):
  static    GET of the test documents and of generated 1.5 MB / 3 MB texts, with Accept-Encoding
            values whose expected Content-Encoding is known (test_200's table and more), on
            MULTICOMPRESS locations (default order; all four codings), on DEFLATE+BROTLI_COMPRESS
            +ZSTD attached together, on MultiCompressCache (shmcb) and MultiCompressStatic
            (sidecars) directories
  shapes    mod_mctest_dropin's mctest-shapes (heap, 1-byte buckets, FLUSH with pauses, file and
            mmap buckets, EOS alone, data after EOS, 1-4 MiB in 64 KiB buckets, 206, 204, 304)
            and mod_mctest (transient/pool/immortal buckets, flushes), sizes 0 B to 4 MiB
  head      HEAD: the Content-Encoding and Vary that GET gets, no body
  range     Range (one range, suffix, several ranges): an identity 206 with the exact bytes
  cond      If-None-Match with the altered ETag (strong and W/): 304 with ETag and Vary;
            a non-matching ETag: the full 200
  cgi       a shell CGI that prints lines with pauses (stalls: the compressor must flush)
  post      request bodies in gzip/br/zstd (Content-Length or chunked) to mctest-echo behind
            SetInputFilter DEFLATE, echoed back (compressed again when the client accepts it)
  postbad   corrupt and truncated bodies (400) and decompression bombs (413)
  abort     clients that close (FIN or RST) after a few KB of a large response, or halfway
            through sending a request body
  badae     malformed Accept-Encoding: random bytes, ~8 KB of tokens, odd q-values, several
            header lines, and over LimitRequestFieldSize (400 from httpd itself)

Every completed response is checked: status, Content-Encoding (exactly the expected one, or one
the client accepted where the header is garbage), Vary, Content-Length, and the body decoded
(gzip, deflate, br, zstd with the 8 MiB window limit; strict end of stream) must equal the exact
expected bytes. Aborted responses: what was read must decode to a prefix of the expected bytes.

Passes when: no failed check, no crash line in error_log (and no sanitizer report file), the
children were not replaced, the total RSS of the httpd processes at the end is within
--rss-tolerance (5 %) of the RSS after the warm-up phase, the open file descriptors of the httpd
processes did not grow, and at least --min-requests requests completed.

    /usr/bin/python3 tests/soak/soak.py [--seconds 240] [--concurrency 64] [--min-requests 100000]

The build: MC_CONFIG_INI=<build>/tests/integration/config.ini (else the newest build*/ one).
"""
from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import multiprocessing
import os
import random
import re
import shutil
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))

import brotli  # noqa: E402
import zstandard  # noqa: E402

from mc_drop_in import DropinServer, bomb, encode, zstd_request_compressor  # noqa: E402
from mc_env import (CRASH_PATTERNS, DecodeError, McEnv, StreamDecoder,  # noqa: E402
                    big_body_blocks, children_of, decode, mctest_body, text_body)

MIB = 1 << 20
CLIENT_TIMEOUT = 30.0  # --timeout: seconds a request may take

# ---------------------------------------------------------------------------------------------
# The server

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
STOCK = False  # --stock: checks accept any coding the client accepted, and do not fail the run

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
    site = (SITE_STOCK if stock else SITE) + ('CoreDumpDirectory "@GEN@/cores"\n' if cores else "")
    mods = ["socache_shmcb"] + (["deflate", "brotli"] if stock else [])
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


# ---------------------------------------------------------------------------------------------
# Accept-Encoding cases: (value, expected coding or None for identity)

# /s/: zstd br gzip (test_200_negotiation's table, kept in sync by hand)
AE_DEFAULT = [
    (None, None), ("gzip", "gzip"), ("br", "br"), ("zstd", "zstd"), ("deflate", None),
    ("compress, sdch", None), ("", None), ("identity", None), ("gzip;q=0", None),
    ("gzip;q=0.000", None), ("gzip;q=0.0000", None), ("br, gzip;q=0.0000", "br"),
    ("gzip;q=1.0001, br;q=0.1", "br"), ("gzip;q=1.5, br;q=0.1", "br"),
    ("zstd;q=0.001, gzip;q=0.002", "gzip"), ("gzip;q=0.5, br;q=0.9, zstd;q=0.1", "br"),
    ("*", "zstd"), ("*;q=0", None), ("*;q=0, gzip", "gzip"), ("*, zstd;q=0", "br"),
    ("*, zstd;q=0, br;q=0", "gzip"), ("gzip;q=0.5, *;q=0.6", "zstd"),
    ("identity;q=0", None), ("identity;q=0, *", "zstd"), ("identity, gzip;q=0.5", None),
    ("x-gzip", "gzip"), ("gzip, gzip;q=0", None), ("br;q=0.2, br;q=0.9, gzip;q=0.5", "gzip"),
    ("ZSTD;Q=0.5, gzip;q=0.4", "zstd"), ("  gzip ;  q=0.5 ,br ; q=0.6  ", "br"),
    ("gzip\t;\tq=1", "gzip"), (" , ,br, ,", "br"), ("gzip, br, zstd", "zstd"),
    ("gzip, deflate, br", "br"), ("gzip, deflate, br, zstd", "zstd"),
    ("gzip;q=abc, br", "br"), ("@@@, gzip", "gzip"), (";;;,,,", None), ("gzip;q=", None),
    ("\"gzip\", br", "br"), ("br;level=5", "br"), ("gz ip, b r", None),
]
# every other location: zstd br gzip deflate
AE_ALL = [
    (None, None), ("gzip", "gzip"), ("br", "br"), ("zstd", "zstd"), ("deflate", "deflate"),
    ("identity", None), ("x-gzip", "gzip"), ("deflate, gzip", "gzip"),
    ("deflate;q=1, gzip;q=0.9", "deflate"), ("*", "zstd"),
    ("*, zstd;q=0, br;q=0, gzip;q=0", "deflate"), ("gzip, deflate, br", "br"),
    ("gzip, deflate, br, zstd", "zstd"), ("br;q=1.0, gzip;q=0.8, *;q=0.1", "br"),
    ("gzip;q=0.5, zstd;q=0.4", "gzip"), ("zstd;q=0, br;q=0, gzip;q=0, deflate;q=0", None),
    ("ZSTD;Q=0.9, Gzip", "gzip"), ("br;q=0.001", "br"), ("deflate, gzip;q=0.999", "deflate"),
    ("*;q=0", None), ("compress", None),
]
# the most common browser values weigh more
AE_ALL_WEIGHTED = AE_ALL + [("gzip, deflate, br, zstd", "zstd")] * 4 + \
    [("gzip, deflate, br", "br")] * 3 + [("gzip", "gzip")] * 2 + [(None, None)] * 2
ACCEPTED_TOKENS = {"gzip", "br", "zstd", "deflate"}


# ---------------------------------------------------------------------------------------------
# A small HTTP/1.1 client on a raw socket (http.client is too slow for the rate we want, and
# refuses to send the malformed headers we want to send)

class Closed(Exception):
    """The server closed an idle keep-alive connection before answering."""


class Resp:
    __slots__ = ("status", "headers", "body", "wire")

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes, wire: int):
        self.status, self.headers, self.body, self.wire = status, headers, body, wire

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]

    def get(self, name: str) -> str | None:
        v = self.all(name)
        return ", ".join(v) if v else None

    def describe(self) -> str:
        return f"{self.status} {self.headers} body={len(self.body)}B"


def build_request(method: str, path: str, headers: list[tuple[str, str | bytes]],
                  body_len: int | None = None, chunked: bool = False,
                  close: bool = False) -> bytes:
    out = [f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()]
    for k, v in headers:
        out.append(k.encode() + b": " + (v if isinstance(v, bytes) else v.encode("latin-1"))
                   + b"\r\n")
    if chunked:
        out.append(b"Transfer-Encoding: chunked\r\n")
    elif body_len is not None:
        out.append(b"Content-Length: %d\r\n" % body_len)
    if close:
        out.append(b"Connection: close\r\n")
    out.append(b"\r\n")
    return b"".join(out)


def read_head(rf) -> tuple[int, list[tuple[str, str]], int, bool]:
    line = rf.readline(65537)
    if not line:
        raise Closed()
    wire = len(line)
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        raise ValueError(f"bad status line {line!r}")
    status = int(parts[1])
    headers = []
    while True:
        h = rf.readline(65537)
        wire += len(h)
        if h in (b"\r\n", b"\n"):
            break
        if not h:
            raise ConnectionError("connection closed in the response head")
        k, _, v = h.partition(b":")
        headers.append((k.strip().decode("latin-1").lower(), v.strip().decode("latin-1")))
    keep = parts[0] == b"HTTP/1.1"
    for k, v in headers:
        if k == "connection" and "close" in v.lower():
            keep = False
    return status, headers, wire, keep


def read_body(rf, method: str, status: int,
              headers: list[tuple[str, str]]) -> tuple[bytes, int, bool]:
    """(body, bytes on the wire, whether the connection may be reused)."""
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return b"", 0, True
    te = [v.lower() for k, v in headers if k == "transfer-encoding"]
    if te and "chunked" in te[-1]:
        parts, wire = [], 0
        while True:
            line = rf.readline(1024)
            if not line:
                raise ConnectionError("connection closed in a chunk size")
            wire += len(line)
            n = int(line.split(b";", 1)[0].strip(), 16)
            if n == 0:
                while True:  # trailers
                    t = rf.readline(65537)
                    wire += len(t)
                    if t in (b"\r\n", b"\n", b""):
                        break
                return b"".join(parts), wire, True
            data = rf.read(n)
            if len(data) != n:
                raise ConnectionError("connection closed in a chunk")
            crlf = rf.read(2)
            if crlf != b"\r\n":
                raise ValueError(f"chunk not followed by CRLF: {crlf!r}")
            parts.append(data)
            wire += n + 2
    cls = [v for k, v in headers if k == "content-length"]
    if cls:
        if len(cls) > 1:
            raise ValueError(f"several Content-Length: {cls}")
        n = int(cls[0])
        data = rf.read(n)
        if len(data) != n:
            raise ConnectionError(f"body ended after {len(data)} of {n} bytes")
        return data, n, True
    data = rf.read()
    return data, len(data), False


class Client:
    def __init__(self, port: int, timeout: float | None = None):
        self.port = port
        self.timeout = timeout if timeout is not None else CLIENT_TIMEOUT
        self.sock: socket.socket | None = None
        self.rf = None
        self.last = None  # the last request, for the failure report

    def connect(self) -> None:
        self.close()
        s = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = s
        self.rf = s.makefile("rb", buffering=65536)

    def close(self, reset: bool = False) -> None:
        if self.sock is not None:
            if reset:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            try:
                self.rf.close()
            finally:
                self.sock.close()
        self.sock = self.rf = None

    def request(self, method: str, path: str, headers=(), body: bytes | None = None,
                chunks: list[bytes] | None = None) -> Resp:
        """One request on the keep-alive connection (a new one if the server closed it)."""
        self.last = (method, path, list(headers),
                     f"body {len(body)} B" if body is not None else
                     f"chunked {sum(map(len, chunks))} B in {len(chunks)}" if chunks is not None
                     else "")
        for attempt in (0, 1):
            fresh = self.sock is None
            if fresh:
                self.connect()
            if chunks is not None:
                head = build_request(method, path, list(headers), chunked=True)
                payload = head + b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks if c) \
                    + b"0\r\n\r\n"
            else:
                head = build_request(method, path, list(headers),
                                     None if body is None else len(body))
                payload = head + (body or b"")
            try:
                self.sock.sendall(payload)
                status, hdrs, wire, keep = read_head(self.rf)
            except (Closed, BrokenPipeError, ConnectionResetError):
                self.close()
                if fresh or attempt:
                    raise
                continue  # an idle keep-alive connection the server had closed: once more
            data, bwire, reusable = read_body(self.rf, method, status, hdrs)
            if not (keep and reusable):
                self.close()
            return Resp(status, hdrs, data, wire + bwire)
        raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------------
# Checks

class CheckFailed(AssertionError):
    pass


def ce_of(r: Resp) -> str | None:
    ces = r.all("content-encoding")
    if len(ces) > 1:
        raise CheckFailed(f"several Content-Encoding lines {ces}")
    return ces[0].strip().lower() if ces else None


def vary_tokens(r: Resp) -> list[str]:
    return [t.strip().lower() for v in r.all("vary") for t in v.split(",") if t.strip()]


def check_vary(r: Resp, want: bool) -> None:
    toks = vary_tokens(r)
    n = toks.count("accept-encoding")
    if want and n != 1:
        raise CheckFailed(f"Vary: Accept-Encoding expected once, got {r.all('vary')}")
    if not want and n:
        raise CheckFailed(f"no Vary: Accept-Encoding expected, got {r.all('vary')}")


def check_body(r: Resp, coding: str | None, expected: bytes, *, ce_any: bool = False,
               vary: bool | None = True, status: int = 200) -> int:
    """Status, Content-Encoding, Content-Length, Vary and the decoded body. `ce_any`: any
    coding we implement (or identity) is fine. Returns the decoded length."""
    if STOCK:
        ce_any, vary = True, None
    if r.status != status:
        raise CheckFailed(f"status {r.status}, expected {status}")
    got = ce_of(r)
    if ce_any:
        if got is not None and got not in ACCEPTED_TOKENS:
            raise CheckFailed(f"Content-Encoding {got!r}")
    elif got != coding:
        raise CheckFailed(f"Content-Encoding {got!r}, expected {coding!r}")
    cl = r.all("content-length")
    if len(cl) > 1 or (cl and int(cl[0]) != len(r.body)):
        raise CheckFailed(f"Content-Length {cl} for {len(r.body)} bytes")
    if vary is not None:
        check_vary(r, vary)
    try:
        plain = decode(r.body, got)
    except DecodeError as e:
        raise CheckFailed(f"body does not decode: {e}")
    if plain != expected:
        raise CheckFailed(f"decoded body differs: {len(plain)} bytes, expected {len(expected)}; "
                          f"first difference at {first_diff(plain, expected)}")
    return len(plain)


def first_diff(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for i in range(0, n, 4096):
        if a[i:i + 4096] != b[i:i + 4096]:
            for j in range(i, min(i + 4096, n)):
                if a[j] != b[j]:
                    return j
    return n


# ---------------------------------------------------------------------------------------------
# Traffic

class Traffic:
    """What every worker needs: the expected bytes and the request generators (inherited by
    fork, so built once in the parent)."""

    def __init__(self, docs: dict[str, bytes], etags: dict[tuple[str, str, str | None], str]):
        self.docs = docs
        self.etags = etags
        self.mct = mctest_body(4 * MIB + 1)
        self.page = docs["page.html"]
        # request bodies: (name, plain, {coding: encoded})
        plains = {"empty": b"", "x": b"x", "css": docs["style.css"], "page": docs["page.html"],
                  "text64k": text_body(65536), "mct1m": mctest_body(MIB),
                  "b64": docs["big-b64.txt"][:300000]}
        self.post_bodies = [(n, p, {c: encode(p, c) for c in ("gzip", "br", "zstd")})
                            for n, p in plains.items()]
        gz = encode(self.page, "gzip")
        br = encode(self.page, "br")
        zs = encode(self.page, "zstd")
        zs_sum = zstd_request_compressor(3, write_checksum=True).compress(self.page)
        mid = len(gz) // 2
        self.bad_bodies = [  # (name, coding, body, expected status)
            ("gzip-flipped", "gzip", gz[:mid] + bytes([gz[mid] ^ 0xFF]) + gz[mid + 1:], 400),
            ("gzip-bad-crc", "gzip", gz[:-8] + bytes([gz[-8] ^ 1]) + gz[-7:], 400),
            ("gzip-truncated", "gzip", gz[:-20], 400),
            ("gzip-trailing", "gzip", gz + b"GARBAGE", 400),
            ("gzip-not-gzip", "gzip", self.page[:3000], 400),
            ("br-garbage", "br", b"\xff" * 64, 400),
            ("br-truncated", "br", br[:-5], 400),
            ("zstd-bad-magic", "zstd", b"\x29" + zs[1:], 400),
            ("zstd-truncated", "zstd", zs[:-7], 400),
            ("zstd-bad-checksum", "zstd", zs_sum[:-1] + bytes([zs_sum[-1] ^ 0x55]), 400),
            ("gzip-bomb-16m", "gzip", bomb("gzip", 16), 413),
            ("br-bomb-64m", "br", bomb("br", 64), 413),
            ("zstd-bomb-256m", "zstd", bomb("zstd", 256), 413),
        ]

    # -- helpers
    @staticmethod
    def ae_headers(ae) -> list[tuple[str, str | bytes]]:
        if ae is None:
            return []
        if isinstance(ae, list):
            return [("Accept-Encoding", v) for v in ae]
        return [("Accept-Encoding", ae)]

    @staticmethod
    def compressible(name: str) -> bool:
        return name.rsplit(".", 1)[-1] in COMPRESSIBLE

    def static_expect(self, name: str, coding: str | None) -> tuple[str | None, bool]:
        """(expected coding, Vary expected) for a static document."""
        if not self.compressible(name):
            return None, False
        if len(self.docs[name]) < 256:
            return None, True
        return coding, True

    # -- kinds: each sends its request and returns (response, check, request for the report);
    # check() raises CheckFailed or returns the decoded length. response None: an abort kind,
    # checked already.
    def k_static(self, cl: Client, rng: random.Random):
        big = rng.random() < 0.015
        name = rng.choice(list(BIG_DOCS)) if big else rng.choice(STATIC_DOCS)
        prefix = rng.choices(["/s/", "/d/", "/f/", "/c/", "/p/"], [3, 5, 2, 2, 1])[0]
        if prefix == "/p/" and name not in SIDE_DOCS:
            name = rng.choice(SIDE_DOCS)
        ae, coding = rng.choice(AE_DEFAULT if prefix == "/s/" else AE_ALL_WEIGHTED)
        want, vary = self.static_expect(name, coding)
        path = prefix + name
        r = cl.request("GET", path, self.ae_headers(ae))
        return r, lambda: check_body(r, want, self.docs[name], vary=vary), \
            ("GET", path, self.ae_headers(ae))

    def k_head(self, cl: Client, rng: random.Random):
        if rng.random() < 0.5:
            name = rng.choice(STATIC_DOCS + tuple(BIG_DOCS))
            prefix = rng.choice(["/d/", "/f/", "/c/"])
            ae, coding = rng.choice(AE_ALL_WEIGHTED)
            want, vary = self.static_expect(name, coding)
            path = prefix + name
        else:
            size = rng.choice([0, 100, 5000, 20000, 300000])
            ae, coding = rng.choice(AE_ALL_WEIGHTED)
            want, vary = (coding if size >= 256 else None), True
            path = f"/shapes/x?shape=heap&size={size}&ct=text/plain"
        r = cl.request("HEAD", path, self.ae_headers(ae))

        def check():
            if r.status != 200:
                raise CheckFailed(f"status {r.status}")
            if r.body:
                raise CheckFailed("HEAD with a body")
            if ce_of(r) != want:
                raise CheckFailed(f"HEAD Content-Encoding {ce_of(r)!r}, expected {want!r}")
            check_vary(r, vary)
            return 0
        return r, check, ("HEAD", path, self.ae_headers(ae))

    def k_range(self, cl: Client, rng: random.Random):
        name = rng.choice(["page.html", "style.css", "license.txt", "big-text.txt",
                           "big-b64.txt", "data.json"])
        doc = self.docs[name]
        n = len(doc)
        prefix = rng.choice(["/s/", "/d/", "/f/", "/c/"])
        ae, _ = rng.choice(AE_ALL_WEIGHTED if prefix != "/s/" else AE_DEFAULT)
        form = rng.random()
        if form < 0.6:
            a = rng.randrange(0, n - 1)
            b = min(n - 1, a + rng.randrange(1, 200000))
            rh, parts = f"bytes={a}-{b}", [(a, b)]
        elif form < 0.8:
            k = rng.randrange(1, min(n, 50000))
            rh, parts = f"bytes=-{k}", [(n - k, n - 1)]
        else:
            a = rng.randrange(0, n // 2)
            c = rng.randrange(n // 2 + 200, n)
            rh, parts = f"bytes={a}-{a + 99},{c}-{n - 1}", [(a, a + 99), (c, n - 1)]
        hdrs = self.ae_headers(ae) + [("Range", rh)]
        path = prefix + name
        r = cl.request("GET", path, hdrs)

        def check():
            if r.status != 206:
                raise CheckFailed(f"status {r.status}, expected 206")
            if ce_of(r) is not None:
                raise CheckFailed(f"206 with Content-Encoding {ce_of(r)}")
            if len(parts) == 1:
                a, b = parts[0]
                if r.body != doc[a:b + 1]:
                    raise CheckFailed(f"206 body differs ({len(r.body)} bytes for {rh})")
                cr = r.get("content-range")
                if cr != f"bytes {a}-{b}/{n}":
                    raise CheckFailed(f"Content-Range {cr!r} for {rh}")
            else:
                ct = r.get("content-type") or ""
                if "multipart/byteranges" not in ct:
                    raise CheckFailed(f"Content-Type {ct!r} for {rh}")
                for a, b in parts:
                    want = (b"bytes %d-%d/%d\r\n\r\n" % (a, b, n)) + doc[a:b + 1]
                    if want not in r.body:
                        raise CheckFailed(f"part {a}-{b} missing or wrong in the multipart body")
            return sum(b - a + 1 for a, b in parts)
        return r, check, ("GET", path, hdrs)

    def k_cond(self, cl: Client, rng: random.Random):
        keys = list(self.etags)
        prefix, name, coding = rng.choice(keys)
        etag = self.etags[(prefix, name, coding)]
        ae = {None: None, "gzip": "gzip", "br": "br", "zstd": "zstd", "deflate": "deflate"}[coding]
        doc = self.docs[name]
        form = rng.random()
        if form < 0.6:
            inm, status = etag, 304
        elif form < 0.75:
            inm, status = "W/" + etag, 304
        elif form < 0.85:
            inm, status = '"nomatch-1", ' + etag, 304
        else:
            inm, status = '"nomatch-2"', 200
        hdrs = self.ae_headers(ae) + [("If-None-Match", inm)]
        path = prefix + name
        r = cl.request("GET", path, hdrs)

        def check():
            if status == 200:
                return check_body(r, coding, doc)
            if r.status != 304:
                raise CheckFailed(f"status {r.status}, expected 304 for If-None-Match {inm}")
            if r.body:
                raise CheckFailed("304 with a body")
            if r.get("etag") != etag:
                raise CheckFailed(f"304 ETag {r.get('etag')!r}, expected {etag!r}")
            check_vary(r, True)
            return 0
        return r, check, ("GET", path, hdrs)

    SHAPES = ("heap", "heap", "bytes1", "flush", "file", "mmap", "eosalone", "aftereos", "big",
              "range", "204", "304", "mctest", "mctest")
    SHAPE_WEIGHTS = (6, 6, 3, 3, 4, 4, 4, 2, 0.4, 2, 1, 1, 6, 6)
    SIZES = (0, 1, 100, 255, 256, 257, 1000, 4096, 8191, 8192, 8193, 20000, 65536, 65537,
             100000, 300000, 1000000)
    SIZE_WEIGHTS = (2, 2, 3, 2, 2, 2, 6, 6, 4, 4, 4, 10, 6, 4, 4, 1, 0.3)

    def k_shapes(self, cl: Client, rng: random.Random):
        shape = rng.choices(self.SHAPES, self.SHAPE_WEIGHTS)[0]
        ae, coding = rng.choice(AE_ALL_WEIGHTED)
        size = rng.choices(self.SIZES, self.SIZE_WEIGHTS)[0]
        ct = rng.choice(["text/html", "text/plain"])
        cl_arg = "&cl=1" if rng.random() < 0.3 else ""
        expected = None
        status = 200
        small_ok = False  # size < MinLength: identity or compressed are both fine
        vary: bool | None = True
        if shape == "heap":
            q = f"shape=heap&size={size}&ct={ct}{cl_arg}"
            small_ok = size < 256
        elif shape == "bytes1":
            size = min(size, 5000)
            q = f"shape=bytes1&size={size}&pass={rng.choice([0, 1, 7, 1000])}&ct={ct}{cl_arg}"
            small_ok = size < 256
        elif shape == "flush":
            size = max(size, 1000)
            q = (f"shape=flush&size={size}&parts={rng.choice([2, 3, 10])}"
                 f"&delay={rng.choice([0, 0, 1, 20])}&ct={ct}")
        elif shape in ("file", "mmap"):
            name = rng.choice(["page.html", "style.css", "license.txt", "big-text.txt"])
            doc = self.docs[name]
            off = rng.choice([0, 0, 1, 4097, len(doc) // 3])
            ln = rng.choice([None, None, 1, 300, 40000])
            q = f"shape={shape}&file=soak/{name}&off={off}{cl_arg}"
            if ln is not None:
                q += f"&len={ln}"
            expected = doc[off:] if ln is None else doc[off:off + ln]
            small_ok = len(expected) < 256
            if rng.random() < 0.3:
                q += "&eos=alone"
        elif shape == "eosalone":
            q = f"shape=eosalone&size={size}&chunk={rng.choice([1, 100, 8192, 65536])}&ct={ct}"
            if size > 100000:
                q = q.replace("chunk=1&", "chunk=8192&").replace("chunk=100&", "chunk=8192&")
            small_ok = size < 256
        elif shape == "aftereos":
            # only where the response is compressed: when the module leaves a response alone
            # (identity) the handler's data after EOS reaches the wire, as it does without the
            # module (httpd does not guard against a handler that sends after EOS)
            size = max(size, 300)
            ae, coding = rng.choice([a for a in AE_ALL_WEIGHTED if a[1] is not None])
            q = f"shape=aftereos&size={size}&ct={ct}"
        elif shape == "big":
            mb = rng.choice([1, 1, 2, 4])
            q = f"shape=big&mb={mb}&ct={ct}"
            size = mb * MIB
        elif shape == "range":
            size = max(size, 10)
            q = f"shape=range&size={size}&ct={ct}"
            coding, status, vary = None, 206, None
        elif shape == "204":
            q, status, expected, coding, vary = "status=204", 204, b"", None, None
        elif shape == "304":
            q, status, expected, coding, vary = "status=304", 304, b"", None, True
        else:  # mod_mctest: transient / pool / immortal buckets, flushes, passes
            kind = rng.choice(["heap", "transient", "pool", "immortal"])
            q = (f"size={size}&chunk={rng.choice([1000, 8192, 30000])}&kind={kind}"
                 f"&flush={rng.choice([0, 0, 3])}&pass={rng.choice([0, 1, 4])}")
            if rng.random() < 0.2:
                q += "&eos=alone"
            path = "/mctest/x?" + q
            small_ok = size < 256
        if shape != "mctest":
            path = "/shapes/x?" + q
        if expected is None:
            expected = self.mct[:size]
        r = cl.request("GET", path, self.ae_headers(ae))

        def check():
            if status in (204, 304):
                if r.status != status or r.body:
                    raise CheckFailed(f"status {r.status} body {len(r.body)}B, expected {status}")
                if ce_of(r) is not None:
                    raise CheckFailed(f"{status} with Content-Encoding")
                return 0
            if small_ok:
                return check_body(r, None, expected, ce_any=True, vary=vary, status=status)
            return check_body(r, coding, expected, vary=vary, status=status)
        return r, check, ("GET", path, self.ae_headers(ae))

    def k_cgi(self, cl: Client, rng: random.Random):
        lines = rng.choice([1, 2, 3, 5])
        pause = rng.choice(["0.01", "0.05", "0.2"])
        kind = rng.choice(["t", "e"])
        ae, coding = rng.choice(AE_ALL_WEIGHTED)
        path = f"/cgi/stream.sh?{lines}_{pause}_{kind}"
        r = cl.request("GET", path, self.ae_headers(ae))
        return r, lambda: check_body(r, coding, stream_cgi_body(lines)), \
            ("GET", path, self.ae_headers(ae))

    def k_post(self, cl: Client, rng: random.Random):
        name, plain, enc = rng.choices(self.post_bodies, (3, 3, 4, 4, 3, 0.3, 0.5))[0]
        coding = rng.choice(("gzip", "br", "zstd"))
        data = enc[coding]
        mode = rng.random()
        hdrs: list[tuple[str, str]] = [("Content-Encoding", coding)]
        if POST_CLOSE:
            hdrs.append(("Connection", "close"))
        ae, rcoding = rng.choice(AE_ALL_WEIGHTED)
        hdrs += self.ae_headers(ae)
        path = "/echo/x?ct=text/plain" if rng.random() < 0.7 else "/echo/x"
        if "ct=" not in path:
            rcoding = None  # application/octet-stream is not compressed
        chunks = None
        if mode < 0.35:
            step = rng.choice([333, 4096, 65536])
            chunks = [data[i:i + step] for i in range(0, len(data), step)]
            r = cl.request("POST", path, hdrs, chunks=chunks)
        else:
            r = cl.request("POST", path, hdrs, body=data)
        sha = hashlib.sha256(plain).hexdigest()

        def check():
            n = check_body(r, rcoding if len(plain) >= 256 or "ct=" not in path else None,
                           plain, ce_any=(len(plain) < 256 and "ct=" in path),
                           vary=None if "ct=" not in path else True)
            if r.get("x-mctest-sha256") != sha or r.get("x-mctest-request-ce") != "-":
                raise CheckFailed(f"echo headers {r.headers}")
            return n
        return r, check, ("POST", path, hdrs + [("X-Body", f"{name} {coding} "
                                                 f"{'chunked' if chunks else 'length'}")])

    def k_postbad(self, cl: Client, rng: random.Random):
        name, coding, data, status = rng.choice(self.bad_bodies)
        hdrs = [("Content-Encoding", coding)]
        path = "/echo-lim/x?mode=sum"
        cl.last = ("POST", path, hdrs, name)
        c = Client(cl.port)
        c.connect()
        try:
            head = build_request("POST", path, hdrs, len(data), close=True)
            try:
                c.sock.sendall(head + data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # answered before it read everything
            st, h, wire, _ = read_head(c.rf)
            body, bw, _ = read_body(c.rf, "POST", st, h)
            r = Resp(st, h, body, wire + bw)
        finally:
            c.close()

        def check():
            if r.status != status:
                raise CheckFailed(f"{name}: status {r.status}, expected {status}")
            return 0
        return r, check, ("POST", path, hdrs + [("X-Body", name)])

    def primers(self, rng: random.Random) -> list[tuple[str, object]]:
        """The heaviest requests: every client sends them at the start of the warm-up, all at
        once, so the server's memory high-water marks (allocators, thread stacks, the cache)
        are reached before the RSS baseline rather than at a random moment later."""
        compressing = [a for a in AE_ALL if a[1] is not None and a[0] is not None]

        def big_doc(cl: Client, rng: random.Random):
            name = rng.choice(list(BIG_DOCS))
            prefix = rng.choice(["/d/", "/f/", "/c/"])
            ae, coding = rng.choice(compressing)
            path = prefix + name
            r = cl.request("GET", path, self.ae_headers(ae))
            return r, lambda: check_body(r, coding, self.docs[name]), ("GET", path, ae)

        def big_shape(cl: Client, rng: random.Random):
            ae, coding = rng.choice(compressing)
            path = "/shapes/x?shape=big&mb=4&ct=text/plain"
            r = cl.request("GET", path, self.ae_headers(ae))
            return r, lambda: check_body(r, coding, self.mct[:4 * MIB]), ("GET", path, ae)

        def big_post(cl: Client, rng: random.Random):
            name, plain, enc = next(b for b in self.post_bodies if b[0] == "mct1m")
            coding = rng.choice(("gzip", "br", "zstd"))
            ae, rcoding = rng.choice(compressing)
            hdrs = [("Content-Encoding", coding)] + self.ae_headers(ae)
            if POST_CLOSE:
                hdrs.append(("Connection", "close"))
            path = "/echo/x?ct=text/plain"
            r = cl.request("POST", path, hdrs, body=enc[coding])
            return r, lambda: check_body(r, rcoding, plain), ("POST", path, hdrs)

        out = [("static", big_doc), ("shapes", big_shape), ("post", big_post)]
        rng.shuffle(out)
        return out

    def k_abort(self, cl: Client, rng: random.Random):
        """A client that goes away: after a few KB of a large response, or halfway through
        its request body. Not a completed response: what was read must decode to a prefix."""
        c = Client(cl.port)
        c.connect()
        ae, coding = rng.choice([a for a in AE_ALL_WEIGHTED if a[1] is not None] + [(None, None)])
        reset = rng.random() < 0.5
        try:
            form = rng.random()
            if form < 0.15:
                name, plain, enc = rng.choice(self.post_bodies[4:])
                cl.last = ("POST-abort", "/echo/x", [], name)
                data = enc["gzip"]
                c.sock.sendall(build_request("POST", "/echo/x", [("Content-Encoding", "gzip")],
                                             len(data)) + data[:len(data) // 2])
                time.sleep(0.001)
                return None, None, ("POST-abort", "/echo/x", [])
            if form < 0.55:
                name = rng.choice(list(BIG_DOCS))
                path, expected = rng.choice(["/d/", "/f/", "/c/"]) + name, self.docs[name]
            elif form < 0.9:
                mb = rng.choice([1, 2, 4])
                path, expected = f"/shapes/x?shape=big&mb={mb}&ct=text/plain", self.mct[:mb * MIB]
            else:
                path, expected = "/cgi/stream.sh?5_0.05_t", stream_cgi_body(5)
            cl.last = ("GET-abort", path, self.ae_headers(ae), "")
            c.sock.sendall(build_request("GET", path, self.ae_headers(ae)))
            st, h, wire, _ = read_head(c.rf)
            want = rng.choice([1, 2048, 4096, 16384])
            got = b""
            while len(got) < want:
                piece = c.rf.read1(want - len(got))
                if not piece:
                    break
                got += piece
            if st != 200:
                raise CheckFailed(f"abort {path}: status {st}")
            ce = next((v.lower() for k, v in h if k == "content-encoding"), None)
            if ce != coding:
                raise CheckFailed(f"abort {path}: Content-Encoding {ce!r}, expected {coding!r}")
            te = next((v.lower() for k, v in h if k == "transfer-encoding"), "")
            if "chunked" in te:
                got = dechunk_prefix(got)
            try:
                prefix = StreamDecoder(ce).feed(got)
            except DecodeError as e:
                raise CheckFailed(f"abort {path}: prefix does not decode: {e}")
            if not expected.startswith(prefix):
                raise CheckFailed(f"abort {path}: decoded prefix differs at "
                                  f"{first_diff(prefix, expected)}")
            return None, None, ("GET-abort", path, self.ae_headers(ae))
        finally:
            c.close(reset=reset)

    def k_badae(self, cl: Client, rng: random.Random):
        form = rng.random()
        status = 200
        if form < 0.35:  # random bytes: VCHAR, SP, HTAB and obs-text
            alphabet = bytes([9, *range(32, 127), *range(128, 256)])
            n = rng.choice([1, 5, 40, 300, 2000])
            val = bytes(rng.choice(alphabet) for _ in range(n)).strip(b" \t")
            ae = [val or b"x"]
        elif form < 0.55:  # weird q-values
            toks = []
            for _ in range(rng.randrange(1, 8)):
                t = rng.choice(["gzip", "br", "zstd", "deflate", "*", "identity", "x-gzip",
                                "GZIP", "bR", "zstd ", "", "compress", "a" * 70])
                q = rng.choice(["", ";q=1", ";q=0", ";q=0.5", ";q=1.0000", ";q=-1", ";q=NaN",
                                ";q=1e3", ";q=.5", ";q=0.", ";Q=0.001", ";q=0.9999",
                                ";q==1", ";;q=0.5", ";q=0.5;q=0", ";q=\"0.5\"", ";q",
                                ";q=99999999999999999999", ";q=0x1", ";q= 0.5", " ;q=1 "])
                toks.append(t + q)
            ae = [rng.choice([", ", ",", " ,  ", ",,"]).join(toks)]
        elif form < 0.7:  # ~8 KB of tokens, under LimitRequestFieldSize
            toks = []
            while sum(len(t) + 2 for t in toks) < 7900:
                toks.append(rng.choice(["gzip", "br", "zstd", "deflate",
                                        "x-%d" % rng.randrange(10**6),
                                        "enc%d;q=0.%d" % (rng.randrange(1000), rng.randrange(10))]))
            ae = [", ".join(toks)[:8000]]
        elif form < 0.8:  # many header lines
            ae = [rng.choice(["gzip", "br;q=0.5", "zstd;q=0", "", "*", ";;", "x"])
                  for _ in range(rng.randrange(2, 40))]
        elif form < 0.88:  # over LimitRequestFieldSize (8190): httpd answers 400 itself
            ae = ["gzip, " + "a" * 9000]
            status = 400
        else:  # NUL/CTL in the value: httpd rejects it (400) or the module ignores it
            ae = [b"gzip\x01br\x7f" + bytes([rng.randrange(1, 32)]) + b"zstd"]
            status = -1
        name = rng.choice(["page.html", "style.css", "small.html", "tiny.html"])
        prefix = rng.choice(["/s/", "/d/"])
        path = prefix + name
        hdrs = self.ae_headers(ae)
        r = cl.request("GET", path, hdrs)

        def check():
            if status == 400 or (status == -1 and r.status == 400):
                if r.status != 400:
                    raise CheckFailed(f"status {r.status}, expected 400 for an oversized header")
                return 0
            return check_body(r, None, self.docs[name], ce_any=True)
        return r, check, ("GET", path, [(k, v if isinstance(v, str) else repr(v)) for k, v in hdrs])


def dechunk_prefix(data: bytes) -> bytes:
    """The payload of a chunked prefix (the last chunk may be cut)."""
    out = bytearray()
    pos = 0
    while pos < len(data):
        end = data.find(b"\r\n", pos)
        if end < 0:
            break
        n = int(data[pos:end].split(b";")[0], 16)
        if n == 0:
            break
        start = end + 2
        out += data[start:start + n]
        pos = start + n + 2
    return bytes(out)


KINDS = {  # kind: weight (per 1000 requests)
    "static": 420, "shapes": 180, "head": 60, "range": 60, "cond": 70, "post": 80,
    "postbad": 6, "badae": 100, "abort": 20, "cgi": 4,
}


# ---------------------------------------------------------------------------------------------
# Workers (processes x threads) and the phases

TRAFFIC: Traffic | None = None
POST_CLOSE = False  # --post-close
FAIL_DIR: Path | None = None  # bodies of failed responses, for a reproducer


def save_body(r: Resp, name: str) -> str:
    if FAIL_DIR is None or not r.body:
        return ""
    try:
        FAIL_DIR.mkdir(parents=True, exist_ok=True)
        path = FAIL_DIR / f"{name}.body"
        path.write_bytes(r.body)
        return f" (body saved in {path})"
    except OSError:
        return ""


def worker_proc(idx: int, threads: int, port: int, seconds: float, seed: int, q,
                prime: bool = False) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stats = collections.Counter()
    wire = collections.Counter()
    plain = collections.Counter()
    fails: list[dict] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    kinds, weights = list(KINDS), list(KINDS.values())

    def run(tid: int) -> None:
        rng = random.Random(seed * 1000003 + idx * 1009 + tid)
        cl = Client(port)
        local = collections.Counter()
        lwire = collections.Counter()
        lplain = collections.Counter()
        lfails = []
        primers = TRAFFIC.primers(rng) if prime else []
        while time.monotonic() < deadline or primers:
            if primers:
                kind, fn = primers.pop()
            else:
                kind = rng.choices(kinds, weights)[0]
                fn = getattr(TRAFFIC, "k_" + kind)
            req = r = None
            try:
                r, check, req = fn(cl, rng)
                if r is None:
                    local[kind + ":ok"] += 1
                    continue
                n = check()
                local[kind + ":ok"] += 1
                lwire[kind] += r.wire
                lplain[kind] += n
            except Exception as e:  # noqa: BLE001 - every error is a finding
                cl.close()
                err = f"{type(e).__name__}: {e}"
                local[kind + ":fail"] += 1
                local["sig:" + kind + ": " + re.sub(r"\d+", "N", err)[:90]] += 1
                if len(lfails) < 20:
                    saved = save_body(r, f"{idx}-{tid}-{len(lfails)}") if r is not None else ""
                    lfails.append({"kind": kind, "request": req or cl.last, "error": err,
                                   "response": (r.describe() + saved) if r is not None else "",
                                   "trace": traceback.format_exc(limit=3)})
        cl.close()
        with lock:
            stats.update(local)
            wire.update(lwire)
            plain.update(lplain)
            fails.extend(lfails)

    ts = [threading.Thread(target=run, args=(t,), daemon=True) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    q.put((dict(stats), dict(wire), dict(plain), fails))


def run_phase(port: int, seconds: float, procs: int, threads: int, seed: int,
              on_tick=None, prime: bool = False) -> tuple[collections.Counter, collections.Counter,
                                                          collections.Counter, list]:
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    ps = [ctx.Process(target=worker_proc, args=(i, threads, port, seconds, seed, q, prime),
                      daemon=True) for i in range(procs)]
    for p in ps:
        p.start()
    results = []
    t_end = time.monotonic() + seconds + 120
    while len(results) < procs and time.monotonic() < t_end:
        if on_tick:
            on_tick()
        try:
            results.append(q.get(timeout=5))
        except Exception:  # noqa: BLE001 - queue.Empty
            continue
    for p in ps:
        p.join(10)
        if p.is_alive():
            p.kill()
    stats, wire, plain, fails = collections.Counter(), collections.Counter(), \
        collections.Counter(), []
    for s, w, pl, f in results:
        stats.update(s)
        wire.update(w)
        plain.update(pl)
        fails.extend(f)
    if len(results) < procs:
        fails.append({"kind": "harness", "error": f"{procs - len(results)} load processes "
                      "did not report", "request": None, "response": "", "trace": ""})
    return stats, wire, plain, fails


# ---------------------------------------------------------------------------------------------
# Server measurements

def server_pids(srv) -> list[int]:
    return [srv.pid, *children_of(srv.pid)] if srv.pid else []


def total_rss_kib(pids) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def rss_parts_kib(pids) -> dict[str, int]:
    parts = collections.Counter()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                        k, v = line.split()[:2]
                        parts[k[3:-1].lower()] += int(v)
        except OSError:
            pass
    return dict(parts)


def total_fds(pids) -> int:
    n = 0
    for pid in pids:
        try:
            n += len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            pass
    return n


def quiesce(srv, timeout: float = 30.0) -> tuple[int, int, list[int], dict[str, int]]:
    """Waits until the server is idle: its fd count unchanged for 2 s (connections closed,
    lingering closes done) and its RSS unchanged within 0.5 % for 2 s (pools of closed
    connections released). Returns (RSS KiB, fds, pids, RSS parts)."""
    deadline = time.monotonic() + timeout
    last_fds, last_rss, stable_since = None, None, time.monotonic()
    while time.monotonic() < deadline:
        pids = server_pids(srv)
        n, rss = total_fds(pids), total_rss_kib(pids)
        if n != last_fds or last_rss is None or abs(rss - last_rss) > last_rss * 0.005:
            last_fds, last_rss, stable_since = n, rss, time.monotonic()
        elif time.monotonic() - stable_since >= 2.0:
            break
        time.sleep(0.25)
    pids = server_pids(srv)
    # RSS: the median of a few samples a moment apart
    rss = sorted(total_rss_kib(pids) for _ in range(5) if time.sleep(0.2) is None)[2]
    return rss, total_fds(pids), pids, rss_parts_kib(pids)


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


def learn_etags(port: int, docs) -> dict[tuple[str, str, str | None], str]:
    out = {}
    cl = Client(port)
    for prefix in ("/s/", "/d/", "/f/"):
        for name in ("page.html", "style.css", "app.js", "license.txt", "big-text.txt"):
            for coding in (None, "gzip", "br", "zstd", "deflate"):
                if prefix == "/s/" and coding == "deflate":
                    continue
                r = cl.request("GET", prefix + name,
                               [("Accept-Encoding", coding)] if coding else [])
                check_body(r, coding, docs[name])
                etag = r.get("etag")
                if etag:
                    out[(prefix, name, coding)] = etag
    cl.close()
    return out


def crash_lines(text: str) -> list[str]:
    return [l for l in text.splitlines() if any(p.search(l) for p in CRASH_PATTERNS)]


def log_summary(text: str) -> dict[str, int]:
    counts = collections.Counter()
    for line in text.splitlines():
        m = re.search(r"\[(?:[\w.-]+:)?(warn|error|crit|alert|emerg)\]", line)
        if not m:
            continue
        code = re.search(r"\b(AH\d{5}|MC\d{5})\b", line)
        counts[f"{m.group(1)} {code.group(1) if code else '(no code)'}"] += 1
    return dict(counts)


def sanitizer_reports(srv) -> list[Path]:
    """ASan/UBSan report files that are not empty (asan_run.sh's wrapper: log_path in
    <server>/logs/san/)."""
    logs = srv.gen / "logs"
    return [p for p in sorted(logs.rglob("*san*")) if p.is_file() and p.stat().st_size > 0]


def sanitized(env: McEnv) -> bool:
    """The module is an ASan build (it needs libasan.so)."""
    try:
        return b"libasan.so" in env.module_path.read_bytes()
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=240, help="total run time (default 240)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="warm-up seconds before the RSS/fd baseline (default 25%%, 8-90 s)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--procs", type=int, default=4, help="client processes (default 4)")
    ap.add_argument("--min-requests", type=int, default=100000)
    ap.add_argument("--rss-tolerance", type=float, default=5.0, help="percent (default 5)")
    ap.add_argument("--rss-slack-mib", type=float, default=0,
                    help="RSS growth up to this many MiB passes whatever the percentage "
                         "(default 0; the short CTest run, whose warm-up is brief, uses 4)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="seconds a request may take before it counts as failed (default 30)")
    ap.add_argument("--keep", action="store_true",
                    help="leave the server running and its directory in place at the end")
    ap.add_argument("--stock", action="store_true",
                    help="the same server with Debian's mod_deflate + mod_brotli instead of the "
                         "module, for a memory comparison: traffic without request bodies "
                         f"(kinds {','.join(STOCK_KINDS)}), checks counted but not failing")
    ap.add_argument("--idle-after", type=float, default=0,
                    help="after the last segment, wait this many seconds idle and report the "
                         "RSS then (default 0: not measured)")
    ap.add_argument("--cores", action="store_true",
                    help="core dumps of crashed children into <server dir>/cores")
    ap.add_argument("--max-mem-free", type=int, default=256,
                    help="httpd's MaxMemFree in KiB (default 256; httpd's own default is 2048): "
                         "what every connection's allocator keeps, times the connections")
    ap.add_argument("--segments", type=int, default=3,
                    help="idle points in the measured part, for the RSS trend (default 3)")
    ap.add_argument("--only", default="",
                    help="comma-separated kinds to send (default: all), to narrow down a finding")
    ap.add_argument("-v", "--verbose", action="store_true", help="RSS and fds every 5 s")
    ap.add_argument("--post-close", action="store_true",
                    help="send request bodies with Connection: close (httpd then skips "
                         "ap_discard_request_body): routes around the keep-alive inflate hang "
                         "found by this soak, to measure everything else")
    args = ap.parse_args()

    global TRAFFIC, POST_CLOSE, CLIENT_TIMEOUT, FAIL_DIR, STOCK
    POST_CLOSE = args.post_close
    CLIENT_TIMEOUT = args.timeout
    STOCK = args.stock
    if args.only or args.stock:
        only = set(args.only.split(",")) if args.only else set(STOCK_KINDS)
        unknown = only - set(KINDS)
        if unknown:
            ap.error(f"unknown kinds {sorted(unknown)}; kinds: {', '.join(KINDS)}")
        for k in list(KINDS):
            if k not in only:
                del KINDS[k]
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    warm = args.warmup if args.warmup is not None else min(90.0, max(8.0, args.seconds * 0.25))
    main_secs = max(1.0, args.seconds - warm)
    procs = max(1, min(args.procs, args.concurrency))
    threads = max(1, args.concurrency // procs)
    conc = procs * threads

    env = McEnv(McEnv.locate_ini().resolve())
    env.gen_dir = env.gen_dir.parent / "soak"
    is_sanitized = sanitized(env)
    if args.cores:
        wrapper = start_wrapper(env)
        env.apache_bin = wrapper
    t_start = time.monotonic()
    docs = build_documents(env)
    srv = make_server(env, docs, args.max_mem_free, args.cores, args.stock)
    srv.start()
    print(f"soak: httpd pid {srv.pid} on 127.0.0.1:{srv.port}, {srv.gen}", flush=True)
    FAIL_DIR = srv.gen / "failed-bodies"
    print(f"soak: seed {seed}, concurrency {conc} ({procs} processes x {threads} threads), "
          f"warm-up {warm:.0f} s, measured {main_secs:.0f} s", flush=True)
    if os.environ.get("LD_PRELOAD"):
        print(f"soak: LD_PRELOAD={os.environ['LD_PRELOAD']} "
              f"ASAN_OPTIONS={os.environ.get('ASAN_OPTIONS', '')}", flush=True)
    failures: list[str] = []
    try:
        etags = learn_etags(srv.port, docs)
        TRAFFIC = Traffic(docs, etags)
        pids0 = server_pids(srv)

        t0 = time.monotonic()
        w_stats, w_wire, w_plain, w_fails = run_phase(srv.port, warm, procs, threads, seed,
                                                      prime=True)
        rss_start, fds_start, pids_start, parts_start = quiesce(srv)
        print(f"soak: warm-up done in {time.monotonic() - t0:.0f} s, "
              f"{sum(v for k, v in w_stats.items() if k.endswith(':ok'))} requests; "
              f"RSS {rss_start} KiB, fds {fds_start}, pids {pids_start}", flush=True)

        samples = []

        def tick():
            pids = server_pids(srv)
            samples.append((time.monotonic() - t0, total_rss_kib(pids), total_fds(pids)))
            if args.verbose:
                print(f"  t={samples[-1][0]:4.0f}s RSS {samples[-1][1]} KiB fds {samples[-1][2]} "
                      f"{rss_parts_kib(pids)}", flush=True)

        # the measured part in segments, the server idle after each: RSS and fds at every
        # idle point show the trend (a leak grows with every segment)
        t1 = time.monotonic()
        stats, wire, plain, fails = w_stats, w_wire, w_plain, list(w_fails)
        idle_points = [(0, rss_start, fds_start)]
        nseg = max(1, args.segments)
        for i in range(nseg):
            s_stats, s_wire, s_plain, s_fails = run_phase(
                srv.port, main_secs / nseg, procs, threads, seed + 1 + i, tick)
            stats.update(s_stats)
            wire.update(s_wire)
            plain.update(s_plain)
            fails.extend(s_fails)
            rss_end, fds_end, pids_end, parts_end = quiesce(srv)
            done = sum(v for k, v in stats.items() if k.endswith(":ok"))
            idle_points.append((done, rss_end, fds_end))
            print(f"soak: segment {i + 1}/{nseg} done, {done} requests so far; idle RSS "
                  f"{rss_end} KiB ({100.0 * (rss_end - rss_start) / max(1, rss_start):+.2f}%), "
                  f"fds {fds_end}", flush=True)
        elapsed = time.monotonic() - t1
        rss_idle = None
        if args.idle_after > 0:
            time.sleep(args.idle_after)
            rss_idle = total_rss_kib(server_pids(srv))
            print(f"soak: {args.idle_after:.0f} s idle after the load: RSS {rss_idle} KiB "
                  f"{rss_parts_kib(server_pids(srv))}", flush=True)
    finally:
        if not args.keep:
            srv.stop()
            if args.cores:
                wrapper.unlink(missing_ok=True)
    log = srv.read_log()

    # ---- summary
    total_ok = sum(v for k, v in stats.items() if k.endswith(":ok"))
    total_fail = sum(v for k, v in stats.items() if k.endswith(":fail"))
    print("\n== soak summary ==")
    print(f"{'kind':10} {'ok':>9} {'failed':>7} {'wire MB':>9} {'decoded MB':>11}")
    for kind in KINDS:
        print(f"{kind:10} {stats[kind + ':ok']:9d} {stats[kind + ':fail']:7d} "
              f"{wire[kind] / 1e6:9.1f} {plain[kind] / 1e6:11.1f}")
    print(f"{'total':10} {total_ok:9d} {total_fail:7d} {sum(wire.values()) / 1e6:9.1f} "
          f"{sum(plain.values()) / 1e6:11.1f}")
    rate = total_ok / max(1e-9, warm + elapsed)
    print(f"requests: {total_ok} completed+aborted-as-planned in {warm + elapsed:.0f} s "
          f"({rate:.0f}/s); every completed response checked")
    if samples:
        print(f"under load: RSS {min(s[1] for s in samples)}-{max(s[1] for s in samples)} KiB, "
              f"fds {min(s[2] for s in samples)}-{max(s[2] for s in samples)}")
    growth = 100.0 * (rss_end - rss_start) / max(1, rss_start)
    print(f"RSS (idle, after warm-up -> end): {rss_start} KiB -> {rss_end} KiB ({growth:+.2f}%)"
          + (f"; {args.idle_after:.0f} s later {rss_idle} KiB" if rss_idle is not None else ""))
    print(f"  RSS parts after warm-up {parts_start}, at the end {parts_end}")
    print("  idle points (requests, RSS KiB, fds): " +
          ", ".join(f"({n}, {r}, {f})" for n, r, f in idle_points))
    print(f"fds (idle, after warm-up -> end): {fds_start} -> {fds_end}")
    print(f"server pids: start {pids0}, end {pids_end}")
    print(f"error_log [warn]+ lines: {log_summary(log)}")

    sigs = sorted(((v, k[4:]) for k, v in stats.items() if k.startswith("sig:")), reverse=True)
    if sigs:
        print("failures by kind and error:")
        for v, k in sigs[:40]:
            print(f"  {v:6d}  {k}")
    if STOCK:
        # a memory comparison: the expectations are the module's, not mod_deflate's
        print(f"--stock: {total_fail} responses differed from the module's expectations "
              "(not a failure)")
        fails, total_fail = [], 0
    for f in fails[:30]:
        failures.append(f"{f['kind']}: {f['error']}\n    request: {f['request']}\n"
                        f"    response: {f['response']}")
    if total_fail:
        failures.append(f"{total_fail} failed requests")
    crashes = crash_lines(log)
    if crashes:
        failures.append("crash lines in error_log:\n    " + "\n    ".join(crashes[:20]))
    cores = sorted((srv.gen / "cores").glob("core*")) if args.cores else []
    if cores:
        failures.append("core dumps: " + " ".join(map(str, cores)))
    reports = sanitizer_reports(srv)
    if reports:
        failures.append("sanitizer reports: " + " ".join(map(str, reports)))
        for p in reports[:3]:
            print(f"---- {p}\n{p.read_text(errors='replace')[:6000]}")
    if sorted(pids_start) != sorted(pids_end) or sorted(pids0) != sorted(pids_end):
        failures.append(f"server processes changed: {pids0} -> {pids_start} -> {pids_end}")
    if is_sanitized:
        print("RSS not checked: sanitized build (ASan's quarantine holds freed memory)")
    elif growth > args.rss_tolerance and rss_end - rss_start > args.rss_slack_mib * 1024:
        failures.append(f"RSS grew {growth:.2f}% (limit {args.rss_tolerance}%"
                        + (f" and {args.rss_slack_mib} MiB" if args.rss_slack_mib else "") + ")")
    if fds_end > fds_start:
        failures.append(f"open fds grew: {fds_start} -> {fds_end}")
    if total_ok < args.min_requests:
        failures.append(f"only {total_ok} requests (minimum {args.min_requests})")
    print(f"time: {time.monotonic() - t_start:.0f} s; server dir {srv.gen}")
    if failures:
        print("\nSOAK FAILED (the server directory stays for a look):\n  " + "\n  ".join(failures))
        return 1
    if not args.keep:
        shutil.rmtree(srv.gen, ignore_errors=True)
    print("\nSOAK PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
