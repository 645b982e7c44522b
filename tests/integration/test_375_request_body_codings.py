# SPDX-License-Identifier: Apache-2.0
"""Issue 10 item 6: request bodies through the DEFLATE input filter (`SetInputFilter DEFLATE`).

- Bodies of several gzip members (RFC 1952 section 2.2) and of several zstd frames, skippable
  frames anywhere (RFC 8878 section 3.1), only skippable frames included, decode exactly.
- What the handler is told describes the body it gets: a CGI (mod_cgid) sees CONTENT_LENGTH of
  the decoded body and no HTTP_CONTENT_ENCODING; a backend behind mod_proxy_http receives the
  decoded bytes with their own Content-Length and no Content-Encoding; digests of the compressed
  bytes are gone. A body longer than what is decoded before the handler (1 MiB) streams on
  without a length (Transfer-Encoding: chunked, no CONTENT_LENGTH). "br, gzip": only gzip is
  removed.
- Truncated bodies, garbage after a member, bad frames: 400 before the CGI or the backend is
  reached, with an MC00020/MC00022 line; over MultiCompressInflateLimit: 413.
- The INFLATE output filter decodes multi-member / multi-frame responses too.

The CGI (echo375.py) and the backend (a python http.server started and stopped by PID on a
free 127.0.0.1 port) answer with JSON: the headers or environment they saw, and the length and
sha256 of the body they read.
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import random
import socket
import struct
import subprocess
import time

import pytest

from mc_drop_in import assert_no_crash, encode, post, start_dropin, stop_checked, wait_for_log
from mc_env import Response, free_port, request, stop_process, text_body

MIB = 1 << 20

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

LOG_ALLOW = r"MC0002[0-9]"
TARGETS = ["cgi", "px"]


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


VALID = list(valid_bodies())


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


BAD = list(bad_bodies())


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


@pytest.fixture(scope="module")
def servers(env, tmp_path_factory):
    backend = Backend(tmp_path_factory.mktemp("t375")).start()
    p = parts()
    a, b = text_body(40000), text_body(3000)
    files = {
        "cgi375/echo375.py": CGI,
        "enc375/members.html.gz": gzip_members(p),
        "enc375/frames.html.zst": skippable(b"x") + zstd_frames(p) + skippable(b"", 1),
        "enc375/two.html.zst": encode(a, "zstd") + skippable(b"mid") + encode(b, "zstd"),
    }
    try:
        front = start_dropin(env, "t375", SITE.replace("{backend}", str(backend.port)),
                             files=files, modules=["proxy", "proxy_http"])
    except Exception:
        backend.stop()
        raise
    yield front, backend
    try:
        stop_checked(front)
    finally:
        backend.stop()


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


# ---- valid bodies

@pytest.mark.parametrize("name", VALID)
@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_01_decoded_and_described(servers, target, name):
    front, _ = servers
    ce, data, plain = valid_bodies()[name]
    r = send(front, target, data, ce)
    assert_describes(r, plain)


@pytest.mark.parametrize("name", ["gzip-members", "zstd-skippable-between"])
@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_02_chunked_request(servers, target, name):
    """A chunked request body, cut into 333-byte chunks: the decoded length is known anyway."""
    front, _ = servers
    ce, data, plain = valid_bodies()[name]
    pieces = [data[i:i + 333] for i in range(0, len(data), 333)]
    r = send(front, target, pieces, ce, chunked=True)
    assert_describes(r, plain)


@pytest.mark.parametrize("coding", ["gzip", "zstd"])
@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_03_large_body_streams_on(servers, target, coding):
    """3 MiB decoded, more than is decoded before the handler: exact bytes, no length."""
    front, _ = servers
    plain = text_body(3 * MIB) + os.urandom(20000)
    third = len(plain) // 3
    pieces = [plain[:third], plain[third:2 * third], plain[2 * third:]]
    data = gzip_members(pieces) if coding == "gzip" else (
        encode(pieces[0], "zstd") + skippable(b"k") + zstd_frames(pieces[1:]))
    r = send(front, target, data, coding)
    assert_describes(r, plain, length_known=False)


@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_04_outer_coding_removed_only(servers, target):
    """Content-Encoding: br, gzip (br applied first): gzip is decoded, "br" stays and the handler
    gets the br bytes."""
    front, _ = servers
    inner = encode(text_body(20000), "br")
    data = gzip_members([inner[:500], inner[500:]])
    r = send(front, target, data, "br, gzip")
    assert_describes(r, inner, rest_ce="br")


@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_05_digests_of_compressed_bytes_removed(servers, target):
    front, _ = servers
    ce, data, plain = valid_bodies()["gzip-members"]
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    sha256 = base64.b64encode(hashlib.sha256(data).digest()).decode()
    r = send(front, target, data, ce, headers=[
        ("Content-MD5", md5), ("Digest", f"SHA-256={sha256}"),
        ("Content-Digest", f"sha-256=:{sha256}:"), ("Repr-Digest", f"sha-256=:{sha256}:")])
    assert_describes(r, plain)


@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_06_expect_100_continue(servers, target):
    """Expect: 100-continue: the 100 comes, then the body is sent and decoded."""
    front, _ = servers
    ce, data, plain = valid_bodies()["zstd-frames"]
    url = PREFIX[target] + "x"
    head = (f"POST {url} HTTP/1.1\r\nHost: 127.0.0.1:{front.port}\r\nConnection: close\r\n"
            f"Content-Encoding: {ce}\r\nContent-Length: {len(data)}\r\n"
            f"Expect: 100-continue\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", front.port), timeout=30) as sock:
        sock.sendall(head)
        interim = b""
        while b"\r\n\r\n" not in interim:
            chunk = sock.recv(1)
            assert chunk, interim
            interim += chunk
        assert interim.startswith(b"HTTP/1.1 100"), interim
        sock.sendall(data)
        resp = http.client.HTTPResponse(sock, method="POST")
        resp.begin()
        r = Response(resp.status, resp.reason, list(resp.getheaders()), resp.read())
    assert_describes(r, plain)


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_07_no_body(servers, target, method):
    """A request without a body (GET, or POST with Content-Length: 0) that names a coding: an
    empty body, not a 400 (mod_deflate steps aside for an empty body too)."""
    front, _ = servers
    url = PREFIX[target] + "x"
    conn = http.client.HTTPConnection("127.0.0.1", front.port, timeout=30)
    try:
        hdrs = {"Content-Encoding": "gzip"}
        if method == "POST":
            hdrs["Content-Length"] = "0"
        conn.request(method, url, headers=hdrs)
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200, (resp.status, body[:300])
        j = json.loads(body)
        assert j["length"] == 0
    finally:
        conn.close()


# ---- bad bodies

@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("name", BAD)
@pytest.mark.parametrize("target", TARGETS)
def test_mc_375_08_bad_body_400(servers, target, name):
    """400 from httpd before the CGI or the backend got anything, with our log line."""
    front, backend = servers
    ce, data, logno = bad_bodies()[name]
    before = backend.count()
    mark = front.log_size()
    r = send(front, target, data, ce)
    assert r.status == 400, r
    assert b"Bad Request" in r.body
    log = wait_for_log(front, mark, logno)
    assert logno in log, log
    assert backend.count() == before
    assert_no_crash(front, mark)


@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("coding", ["gzip", "zstd"])
@pytest.mark.parametrize("target", ["cgi-limit", "px-limit"])
def test_mc_375_09_over_limit_413(servers, target, coding):
    """Members each under MultiCompressInflateLimit 100K, the body over it: 413."""
    front, backend = servers
    part = text_body(60000)
    data = gzip_members([part] * 3) if coding == "gzip" else zstd_frames([part] * 3)
    before = backend.count()
    mark = front.log_size()
    r = send(front, target, data, coding)
    assert r.status == 413, r
    log = wait_for_log(front, mark, "MC00020")
    assert "larger than the configured limit" in log, log
    assert backend.count() == before
    # under the limit: fine
    ok = send(front, target, gzip_members([part]) if coding == "gzip" else zstd_frames([part]),
              coding)
    assert_describes(ok, part)


# ---- INFLATE output filter

@pytest.mark.parametrize("name", ["members.html.gz", "frames.html.zst", "two.html.zst"])
def test_mc_375_10_inflate_output_members(servers, name):
    front, _ = servers
    p = parts()
    expected = {"members.html.gz": b"".join(p), "frames.html.zst": b"".join(p),
                "two.html.zst": text_body(40000) + text_body(3000)}[name]
    r = request(front.port, f"/enc375/{name}", None)
    assert r.status == 200, r
    assert r.header("Content-Encoding") is None, r
    assert r.body == expected


def test_mc_375_11_server_still_serves(servers):
    front, _ = servers
    ce, data, plain = valid_bodies()["gzip-members"]
    for target in TARGETS:
        assert_describes(send(front, target, data, ce), plain)
    assert_no_crash(front, 0)
