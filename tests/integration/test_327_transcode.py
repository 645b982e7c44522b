# SPDX-License-Identifier: Apache-2.0
"""MultiCompressTranscode: a backend (a real mod_proxy_http reverse proxy in front of a second
httpd) answers br, zstd or gzip whatever the client accepts.

- With the directive On, a response in a coding the client does not accept is decoded and, where
  the client accepts one, compressed again (the front's negotiation); a client that accepts the
  backend's coding gets the backend's bytes. Vary: Accept-Encoding either way; the ETag becomes
  weak (the same content in other bytes); HEAD gets GET's headers.
- A body that is not what its Content-Encoding says (plain HTML labelled br, truncated, a bad
  CRC, a bad zstd checksum, data after the end) is never sent as a valid-looking body: before
  anything went out it gets a 502; after, the response is cut off without its end (no last
  chunk, no end of the gzip stream), as mod_proxy ends a response whose backend broke.
- The request bodies' inflate ratio limit applies: a br bomb gets a 502.
- Off (the default): the backend's bytes pass as they are, as before.
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import random
import re
import socket
import threading
import time
from urllib.parse import quote

import brotli
import pytest
import zstandard

from mc_bodies import static_file
from mc_client import assert_vary_once, request
from mc_decode import DecodeError, decode
from mc_drop_in import encode, start_dropin, stop_checked

BACKEND_SITE = r"""
<Location /shapes/>
    SetHandler mctest-shapes
</Location>
"""

FRONT_SITE = r"""
<Location /metrics>
    SetHandler multicompress-metrics
</Location>
ProxyPass /px/ http://127.0.0.1:{backend}/
ProxyPass /px-off/ http://127.0.0.1:{backend}/
ProxyPass /px-dec/ http://127.0.0.1:{backend}/
ProxyPass /broken/ http://127.0.0.1:{broken}/
<Location /broken/>
    AddOutputFilterByType MULTICOMPRESS text/html
</Location>
<Location /px/>
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressTranscode On
</Location>
<Location /px-off/>
    AddOutputFilterByType MULTICOMPRESS text/html
</Location>
<Location /px-dec/>
    MultiCompressTranscode On
</Location>
"""

SUFFIX = {"br": "br", "zstd": "zst", "gzip": "gz"}


def letters(n: int, seed: int = 327) -> bytes:
    """Random lowercase words: compresses to about 60 %, so the encoded body is long."""
    rng = random.Random(seed)
    out = bytearray()
    while len(out) < n:
        out += bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) + b" "
    return bytes(out[:n])


def zstd_checked(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(data)


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x55]) + data[at + 1:]


BIG = letters(1_000_000)


def documents(page: bytes) -> dict[str, bytes]:
    docs = {f"enc/page.{SUFFIX[c]}": encode(page, c) for c in SUFFIX}
    docs.update({f"enc/big.{SUFFIX[c]}": encode(BIG, c) for c in SUFFIX})
    big_br, big_gz, big_zst = docs["enc/big.br"], docs["enc/big.gz"], zstd_checked(BIG)
    docs.update({
        "bad/plain-as-br": page,                       # not what it says
        "bad/plain-as-zstd": page,
        "bad/plain-as-gzip": page,
        "bad/short-br": docs["enc/page.br"][:2000],    # truncated within the first block
        "bad/long-br": big_br[: len(big_br) // 2],     # truncated after much went out
        "bad/crc-gzip": big_gz[:-8] + bytes([big_gz[-8] ^ 1]) + big_gz[-7:],
        "bad/sum-zstd": big_zst[:-4] + bytes([big_zst[-4] ^ 1]) + big_zst[-3:],
        "bad/after-end-br": big_br + b"GARBAGE",
        # within MultiCompressInflateWindow's default (1 MiB): the ratio limit stops it
        "bad/bomb-br": brotli.compress(bytes(64 << 20), quality=5, lgwin=20),
    })
    return docs


class BreakingBackend:
    """A backend in this process that announces a long text body, sends half and closes: the
    front's mod_proxy_http then ends the response with its error bucket."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                             b"Content-Length: %d\r\n\r\n" % (2 * len(BIG)) + BIG)

    def close(self) -> None:
        self.sock.close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def servers(env):
    page = static_file(env, "page.html")
    breaking = BreakingBackend()
    back = start_dropin(env, "t327-backend", BACKEND_SITE, files=documents(page))
    try:
        front = start_dropin(env, "t327-front", FRONT_SITE.replace("{backend}", str(back.port))
                             .replace("{broken}", str(breaking.port)),
                             modules=["proxy", "proxy_http"])
    except Exception:
        stop_checked(back)
        breaking.close()
        raise
    yield front, back
    stop_checked(front)
    stop_checked(back)
    breaking.close()


def url(prefix: str, doc: str, ce: str, etag: str | None = '"v1"', extra: str = "") -> str:
    u = f"/{prefix}/shapes/x?shape=file&file={doc}&ce={ce}&ct=text/html{extra}"
    if etag:
        u += "&etag=" + etag.replace('"', "%22")
    return u


def raw(srv, path: str, accept_encoding, method: str = "GET"):
    """(status, headers, body, complete): a response read to its end, or to where it was cut."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        if accept_encoding is not None:
            conn.putheader("Accept-Encoding", accept_encoding)
        conn.endheaders()
        resp = conn.getresponse()
        try:
            body, complete = resp.read(), True
        except http.client.IncompleteRead as e:
            body, complete = e.partial, False
        return resp.status, resp.getheaders(), body, complete
    finally:
        conn.close()


@pytest.mark.parametrize("backend,accept,want", [
    ("br", "gzip", "gzip"),
    ("zstd", "gzip", "gzip"),
    ("br", "gzip, zstd", "zstd"),
    ("zstd", "br, gzip", "br"),
    ("gzip", "br", "br"),
    ("br", "identity", None),
    ("zstd", None, None),
    ("br", "gzip;q=0, deflate", None),
])
def test_mc_327_01_decoded_and_encoded_again(env, servers, backend, accept, want):
    front, back = servers
    page = static_file(env, "page.html")
    doc = f"enc/page.{SUFFIX[backend]}"
    # The backend's digests: Content-Digest of its encoded bytes (wrong once decoded), and
    # Unencoded-Digest of the page (right whatever the coding).
    cd = "sha-256=:" + base64.b64encode(hashlib.sha256((back.htdocs / doc).read_bytes())
                                        .digest()).decode() + ":"
    ud = "sha-256=:" + base64.b64encode(hashlib.sha256(page).digest()).decode() + ":"
    extra = f"&cd={quote(cd, safe='')}&ud={quote(ud, safe='')}"
    r = request(front.port, url("px", doc, backend, extra=extra), accept)
    assert r.status == 200, r
    assert r.header("Unencoded-Digest") == ud
    assert r.header("Content-Digest") is None
    assert r.header_all("Content-Encoding") == ([want] if want else []), r.headers
    assert r.decoded() == page
    assert_vary_once(r)
    cl = r.header("Content-Length")
    assert cl is None or int(cl) == len(r.body)
    etag = r.header("ETag")
    assert etag is not None and etag.startswith('W/"v1'), etag


@pytest.mark.parametrize("backend", list(SUFFIX))
def test_mc_327_02_accepted_coding_passes_untouched(env, servers, backend):
    front, back = servers
    doc = f"enc/page.{SUFFIX[backend]}"
    r = request(front.port, url("px", doc, backend), f"{backend}, gzip")
    assert r.header_all("Content-Encoding") == [backend]
    assert r.body == (back.htdocs / doc).read_bytes()
    assert r.header("ETag") == '"v1"'
    assert "accept-encoding" in r.vary_tokens()


def test_mc_327_03_off_passes_as_before(servers):
    front, back = servers
    r = request(front.port, url("px-off", "enc/page.br", "br"), "gzip")
    assert r.header_all("Content-Encoding") == ["br"]
    assert r.body == (back.htdocs / "enc/page.br").read_bytes()


def test_mc_327_04_decoded_without_a_compressing_filter(env, servers):
    front, _ = servers
    r = request(front.port, url("px-dec", "enc/page.zst", "zstd"), "gzip")
    assert r.status == 200 and r.content_encoding is None
    assert r.body == static_file(env, "page.html")
    assert "accept-encoding" in r.vary_tokens()


def test_mc_327_05_head(servers):
    front, _ = servers
    get = request(front.port, url("px", "enc/page.br", "br"), "gzip")
    head = request(front.port, url("px", "enc/page.br", "br"), "gzip", method="HEAD")
    assert head.status == 200 and head.body == b""
    assert head.header("Content-Encoding") == get.header("Content-Encoding") == "gzip"
    assert head.header("Content-Length") is None
    assert head.header("ETag") == get.header("ETag")


@pytest.mark.parametrize("backend", list(SUFFIX))
def test_mc_327_06_long_body_streams(servers, backend):
    front, _ = servers
    want = "gzip" if backend != "gzip" else "zstd"
    r = request(front.port, url("px", f"enc/big.{SUFFIX[backend]}", backend), want)
    assert r.content_encoding == want
    assert r.decoded() == BIG


def test_mc_327_07_no_transform_and_partial_left_alone(servers):
    front, back = servers
    r = request(front.port, url("px", "enc/page.br", "br", extra="&cc=no-transform"), "gzip")
    assert r.content_encoding == "br" and r.body == (back.htdocs / "enc/page.br").read_bytes()


@pytest.mark.log_allow(r"MC00320", r"AH01110", r"AH00898")
@pytest.mark.parametrize("doc,ce", [
    ("bad/plain-as-br", "br"), ("bad/plain-as-zstd", "zstd"), ("bad/plain-as-gzip", "gzip"),
    ("bad/short-br", "br"), ("bad/bomb-br", "br"),
])
@pytest.mark.parametrize("prefix", ["px", "px-dec"])
def test_mc_327_08_bad_first_block_gets_502(servers, doc, ce, prefix):
    front, _ = servers
    mark = front.log_size()
    status, headers, body, _ = raw(front, url(prefix, doc, ce), "br" if ce == "gzip" else "gzip")
    assert status == 502, (status, headers, body[:200])
    assert b"<html" not in body or b"Bad Gateway" in body
    lines = [l for l in front.log_lines(mark) if "MC00320" in l]
    assert len(lines) == 1, front.log_lines(mark)
    if doc == "bad/bomb-br":
        assert "ratio" in lines[0]


@pytest.mark.log_allow(r"MC00320")
@pytest.mark.parametrize("doc,ce", [
    ("bad/long-br", "br"), ("bad/crc-gzip", "gzip"), ("bad/sum-zstd", "zstd"),
    ("bad/after-end-br", "br"),
])
@pytest.mark.parametrize("client", ["compressing", "identity"])
def test_mc_327_09_corrupt_later_is_cut_off(servers, doc, ce, client):
    """Much was sent already: the response ends without its end, never as a whole body."""
    front, _ = servers
    mark = front.log_size()
    accept = "identity" if client == "identity" else "br" if ce == "gzip" else "gzip"
    status, headers, body, complete = raw(front, url("px", doc, ce), accept)
    lines = [l for l in front.log_lines(mark) if "MC00320" in l]
    assert len(lines) == 1, front.log_lines(mark)
    if status == 502:
        # br (for the gzip backend) holds up to 1 MiB of input before its first output: nothing
        # had gone out yet, so httpd answered 502 as for a backend that breaks that early.
        assert accept == "br", (status, headers)
        return
    assert status == 200
    assert not complete, "the cut-off response ended as if it were whole"
    coding = dict((k.lower(), v) for k, v in headers).get("content-encoding")
    assert coding == (None if client == "identity" else accept), headers
    if coding is not None:
        with pytest.raises(DecodeError):
            decode(body, coding)  # the compressed stream has no end either


def test_mc_327_10_counters(servers):
    front, _ = servers

    def value(label: str) -> int:
        text = request(front.port, "/metrics").body.decode()
        m = re.search(r'^multicompress_transcode_events_total\{event="%s"\} (\d+)$' % label,
                      text, re.M)
        assert m, text
        return int(m.group(1))

    before = value("decoded")
    request(front.port, url("px", "enc/page.br", "br"), "gzip")
    request(front.port, url("px", "enc/page.br", "br"), "br")  # accepted: not decoded
    deadline = time.monotonic() + 5
    while value("decoded") < before + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert value("decoded") == before + 1


@pytest.mark.log_allow(r"AH01102", r"AH01110", r"AH00898", r"AH01097")
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_327_11_broken_backend_never_ends_the_stream(servers, coding):
    """Without MultiCompressTranscode too: a backend that breaks mid-body (mod_proxy's error
    bucket) must not get a compressed stream with its end, which a client would decode as a
    whole body (as it did before: the end was written after the error)."""
    front, _ = servers
    status, headers, body, complete = raw(front, "/broken/", coding)
    if status == 502:  # the compressor had passed nothing yet: httpd's own answer
        return
    assert status == 200 and not complete
    assert dict((k.lower(), v) for k, v in headers).get("content-encoding") == coding
    with pytest.raises(DecodeError):
        decode(body, coding)
