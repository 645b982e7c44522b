# SPDX-License-Identifier: Apache-2.0
"""Request bodies through the DEFLATE input filter (`SetInputFilter DEFLATE`).

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
free 127.0.0.1 port), both in mc_request_codings.py with the bodies, answer with JSON: the
headers or environment they saw, and the length and sha256 of the body they read.
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import socket

import pytest

from mc_bodies import text_body
from mc_client import Response, request
from mc_drop_in import assert_no_crash, encode, start_dropin, stop_checked, wait_for_log
from mc_request_codings import (CGI, PREFIX, SITE, Backend, assert_describes, bad_bodies,
                                gzip_members, parts, send, skippable, valid_bodies,
                                zstd_frames)

MIB = 1 << 20

LOG_ALLOW = r"MC0002[0-9]"
TARGETS = ["cgi", "px"]
VALID = list(valid_bodies())
BAD = list(bad_bodies())


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
