# SPDX-License-Identifier: Apache-2.0
"""Bodies and servers of test_375_request_body_codings.py (request bodies through the DEFLATE
input filter): the CGI (echo375.py) and the python backend that report what they saw, the
site, valid and damaged multi-member / multi-frame bodies, and how a test sends one and reads
what the handler was told."""
from __future__ import annotations

import hashlib
import http.client
import json
import random
import socket
import struct
import subprocess
import time

from mc_bodies import text_body
from mc_drop_in import encode, post
from mc_process import free_port, stop_process

CGI = r'''#!/usr/bin/python3
import hashlib, json, os, sys
data = sys.stdin.buffer.read()
names = ("CONTENT_LENGTH", "HTTP_CONTENT_ENCODING", "HTTP_TRANSFER_ENCODING", "HTTP_CONTENT_MD5",
         "HTTP_DIGEST", "HTTP_CONTENT_DIGEST", "HTTP_REPR_DIGEST", "REQUEST_METHOD")
out = json.dumps({"env": {k: os.environ.get(k) for k in names}, "length": len(data),
                  "sha256": hashlib.sha256(data).hexdigest()}).encode()
sys.stdout.buffer.write(b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(out))
sys.stdout.buffer.write(out)
'''

BACKEND = r'''
import hashlib, json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNT = [0]

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n)

    def answer(self):
        if self.path == "/_count":
            out = json.dumps({"count": COUNT[0]}).encode()
        else:
            COUNT[0] += 1
            data = self.body()
            out = json.dumps({"headers": [[k, v] for k, v in self.headers.items()],
                              "length": len(data),
                              "sha256": hashlib.sha256(data).hexdigest()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = answer

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
'''

SITE = r"""
ScriptAlias /cgi/ "@HTDOCS@/cgi375/"
ScriptAlias /cgi-limit/ "@HTDOCS@/cgi375/"
<Directory "@HTDOCS@/cgi375">
    Options +ExecCGI
    Require all granted
</Directory>
<Location /cgi/>
    SetInputFilter DEFLATE
</Location>
<Location /cgi-limit/>
    SetInputFilter DEFLATE
    MultiCompressInflateRatio 1000000 1000000
    MultiCompressInflateLimit 100K
</Location>
ProxyPass        /px/ http://127.0.0.1:{backend}/
ProxyPass        /px-limit/ http://127.0.0.1:{backend}/
<Location /px/>
    SetInputFilter DEFLATE
</Location>
<Location /px-limit/>
    SetInputFilter DEFLATE
    MultiCompressInflateRatio 1000000 1000000
    MultiCompressInflateLimit 100K
</Location>
<Directory "@HTDOCS@/enc375">
    RemoveType .gz .zst
    AddEncoding gzip .gz
    AddEncoding zstd .zst
    SetOutputFilter INFLATE
</Directory>
"""


# ---- bodies

def skippable(payload: bytes, variant: int = 0) -> bytes:
    """RFC 8878 section 3.1.2: magic 0x184D2A5?, a 32-bit little-endian size, the payload."""
    return struct.pack("<II", 0x184D2A50 + variant, len(payload)) + payload


def gzip_members(parts: list[bytes]) -> bytes:
    return b"".join(encode(p, "gzip") for p in parts)


def zstd_frames(parts: list[bytes]) -> bytes:
    return b"".join(encode(p, "zstd") for p in parts)


def parts() -> list[bytes]:
    return [text_body(30000), b"", b"second member\n", random.Random(375).randbytes(3000),
            text_body(5000)]


def valid_bodies() -> dict[str, tuple[str, bytes, bytes]]:
    """name: (Content-Encoding, encoded body, decoded body)."""
    p = parts()
    plain = b"".join(p)
    a, b = text_body(40000), b"<p>after the skippable frame</p>\n" * 50
    return {
        "gzip-members": ("gzip", gzip_members(p), plain),
        "gzip-one": ("gzip", encode(plain, "gzip"), plain),
        "zstd-frames": ("zstd", zstd_frames(p), plain),
        "zstd-skippable-first": ("zstd", skippable(b"meta", 3) + encode(a, "zstd"), a),
        "zstd-skippable-between": ("zstd", encode(a, "zstd") + skippable(b"s" * 70000, 15)
                                   + encode(b, "zstd"), a + b),
        "zstd-skippable-last": ("zstd", encode(a, "zstd") + encode(b, "zstd") + skippable(b""),
                                a + b),
        "zstd-only-skippable": ("zstd", skippable(b"one") + skippable(b"", 9), b""),
        "br-one": ("br", encode(plain, "br"), plain),
    }



def bad_bodies() -> dict[str, tuple[str, bytes, str]]:
    """name: (Content-Encoding, body, the log line it gets)."""
    p = parts()
    gz = gzip_members(p[:2])
    second = encode(p[2] + p[4], "gzip")
    zs = zstd_frames(p[:2])
    sk = skippable(b"payload")
    return {
        "gzip-garbage-after-member": ("gzip", gz + b"GARBAGE", "MC00020"),
        "gzip-zeros-after-member": ("gzip", gz + bytes(16), "MC00020"),
        "gzip-second-truncated": ("gzip", gz + second[:-3], "MC00022"),
        "gzip-second-header-only": ("gzip", gz + second[:10], "MC00022"),
        "gzip-second-bad-crc": ("gzip", gz + second[:-8] + bytes([second[-8] ^ 1]) + second[-7:],
                                "MC00020"),
        "zstd-garbage-after-frame": ("zstd", zs + b"GARBAGE!", "MC00020"),
        "zstd-second-truncated": ("zstd", zs + encode(p[4], "zstd")[:-4], "MC00022"),
        "zstd-skippable-truncated": ("zstd", zs + sk[:-1], "MC00022"),
        "zstd-skippable-header-cut": ("zstd", zs + sk[:6], "MC00022"),
        "br-two-streams": ("br", encode(p[0], "br") + encode(p[2], "br"), "MC00020"),
    }



def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- servers

class Backend:
    """The python backend, stopped by PID."""

    def __init__(self, directory):
        self.script = directory / "backend375.py"
        self.script.write_text(BACKEND)
        self.port = 0
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Backend":
        for _ in range(3):
            self.port = free_port()
            self.proc = subprocess.Popen(["/usr/bin/python3", str(self.script), str(self.port)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return self
                except OSError:
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError("the backend did not start")

    def count(self) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", "/_count")
            return json.loads(conn.getresponse().read())["count"]
        finally:
            conn.close()

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        stop_process(proc)


PREFIX = {"cgi": "/cgi/echo375.py/", "cgi-limit": "/cgi-limit/echo375.py/", "px": "/px/",
          "px-limit": "/px-limit/"}


def send(front, target: str, body, ce: str | None, *, chunked: bool = False, headers=()):
    hdrs = list(headers) + ([("Content-Encoding", ce)] if ce is not None else [])
    return post(front.port, PREFIX[target] + "x", body, chunked=chunked, headers=hdrs)


def seen(r) -> tuple[dict[str, str | None], int, str]:
    """(request headers or CGI environment, as CGI names; body length; body sha256)."""
    assert r.status == 200, r
    j = json.loads(r.body)
    if "env" in j:
        return j["env"], j["length"], j["sha256"]
    env: dict[str, str | None] = {}
    for k, v in j["headers"]:
        name = k.upper().replace("-", "_")
        env["CONTENT_LENGTH" if name == "CONTENT_LENGTH" else "HTTP_" + name] = v
    return env, j["length"], j["sha256"]


def assert_describes(r, plain: bytes, *, length_known: bool = True, rest_ce: str | None = None):
    env, n, digest = seen(r)
    assert n == len(plain) and digest == sha(plain), (n, len(plain))
    assert env.get("HTTP_CONTENT_ENCODING") == rest_ce, env
    for h in ("HTTP_CONTENT_MD5", "HTTP_DIGEST", "HTTP_CONTENT_DIGEST", "HTTP_REPR_DIGEST"):
        assert env.get(h) is None, env
    if length_known:
        assert env.get("CONTENT_LENGTH") == str(len(plain)), env
        assert env.get("HTTP_TRANSFER_ENCODING") is None, env
    else:
        # a body of unknown length: no length at all, never the compressed one
        assert env.get("CONTENT_LENGTH") is None, env
        assert (env.get("HTTP_TRANSFER_ENCODING") or "").lower() == "chunked", env
