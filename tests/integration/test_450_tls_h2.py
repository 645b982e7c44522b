# SPDX-License-Identifier: Apache-2.0
"""HTTPS (mod_ssl) and HTTP/2 (mod_http2, `Protocols h2 http/1.1`) with clients nobody here
wrote: curl over HTTP/1.1 and h2 (raw bodies decoded by the test, and --compressed decoded by
curl) and nghttp (nghttp2-client) over h2, for gzip, br and zstd. Each response must carry the
negotiated Content-Encoding and Vary: Accept-Encoding, decode to the served file, and a
streamed response must be decodable piece by piece as it arrives, over both protocols."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from mc_bodies import big_body_blocks, static_file
from mc_decode import StreamDecoder, ZSTD_MAX_WINDOW, decode, zstd_window
from mc_server import LogCheck
from mc_tls import (ClientResponse, TlsServer, curl, demo_file, nghttp, parse_header_dump,
                    timed_stream)

CODINGS = ["gzip", "br", "zstd"]
# curl flag, and the version curl reports in its status line
PROTOCOLS = {"h2": ("--http2", "2"), "http1.1": ("--http1.1", "1.1")}


def expected_body(env, path: str) -> bytes:
    if path.startswith("/static/"):
        return static_file(env, path[len("/static/"):])
    rel = path.lstrip("/")  # the demo: "/", "/style.css", "/br-only/", "/gzip-only/app.js"
    return demo_file(env, rel + "index.html" if rel == "" or rel.endswith("/") else rel)


# page.html is 85 KB (several h2 DATA frames unless compressed); the others are the demo's
# page and assets.
FILES = ["/static/page.html", "/static/style.css", "/static/app.js", "/", "/style.css",
         "/app.js"]


@pytest.fixture(scope="module")
def tls(env):
    for tool in ("curl", "nghttp", "openssl"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} not installed (apt-get install curl nghttp2-client openssl)",
                        pytrace=False)
    features = subprocess.run(["curl", "-V"], capture_output=True, text=True).stdout
    for feat in ("HTTP2", "brotli", "zstd", "libz"):
        assert re.search(rf"^Features:.*\b{feat}\b", features, re.M), \
            f"this curl lacks {feat}: {features}"
    srv = TlsServer(env, "tls-h2")
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()
    # what the per-test checks have not seen: shutdown
    problems = LogCheck.of(srv).problems(srv.log_lines(getattr(srv, "checked_upto", 0)))
    assert not problems, problems


def assert_vary(resp: ClientResponse) -> None:
    tokens = resp.vary_tokens()
    assert tokens.count("accept-encoding") == 1, f"Vary: {resp.header_all('vary')}"


def assert_coded(resp: ClientResponse, coding: str | None, expected: bytes,
                 decoded_by_client: bool = False) -> None:
    """Status 200, Content-Encoding `coding` (None: identity), Vary once, Content-Length
    absent or right, and the body decodes to `expected`."""
    assert resp.status == 200, resp.headers
    ces = resp.header_all("content-encoding")
    assert ces == ([coding] if coding else []), f"Content-Encoding {ces}, wanted {coding}"
    assert_vary(resp)
    if decoded_by_client or coding is None:
        assert resp.body == expected, "body differs from the file"
        return
    cl = resp.header_all("content-length")
    assert len(cl) <= 1 and (not cl or int(cl[0]) == len(resp.body)), \
        f"Content-Length {cl}, {len(resp.body)} bytes on the wire"
    assert decode(resp.body, coding) == expected, "decoded body differs from the file"
    assert len(resp.body) < len(expected), "compressed body is not smaller"


# ---- curl, raw bodies decoded here

@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("proto", PROTOCOLS)
def test_mc_450_01_curl_each_encoding(env, tls, tmp_path, proto, coding):
    flag, version = PROTOCOLS[proto]
    for path in FILES:
        resp = curl(tls.https_url(path), tmp_path, flag, "-H", f"Accept-Encoding: {coding}")
        assert resp.version == version, f"{path}: HTTP/{resp.version}, wanted {version}"
        assert_coded(resp, coding, expected_body(env, path))


@pytest.mark.parametrize("proto", PROTOCOLS)
@pytest.mark.parametrize("accept", [None, "identity", "compress, x-foo"])
def test_mc_450_02_curl_identity(env, tls, tmp_path, proto, accept):
    """No Accept-Encoding (curl sends none by default) or nothing acceptable: the file as is,
    still with Vary."""
    flag, version = PROTOCOLS[proto]
    args = [flag] + (["-H", f"Accept-Encoding: {accept}"] if accept else [])
    for path in ("/static/page.html", "/"):
        resp = curl(tls.https_url(path), tmp_path, *args)
        assert resp.version == version
        assert_coded(resp, None, expected_body(env, path))


# ---- curl --compressed: curl offers "deflate, gzip, br, zstd" and decodes itself

@pytest.mark.parametrize("directory,coding",
                         [("/", "zstd"), ("/br-only/", "br"), ("/gzip-only/", "gzip")])
@pytest.mark.parametrize("proto", PROTOCOLS)
def test_mc_450_03_curl_compressed_per_directory(env, tls, tmp_path, proto, directory, coding):
    flag, version = PROTOCOLS[proto]
    for name in ("", "style.css", "app.js"):
        path = directory + name
        resp = curl(tls.https_url(path), tmp_path, flag, "--compressed")
        assert resp.version == version
        assert_coded(resp, coding, expected_body(env, path), decoded_by_client=True)


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("proto", PROTOCOLS)
def test_mc_450_04_curl_compressed_one_encoding(env, tls, tmp_path, proto, coding):
    """--compressed with an explicit Accept-Encoding: curl asks for one coding, decodes it."""
    flag, version = PROTOCOLS[proto]
    resp = curl(tls.https_url("/static/page.html"), tmp_path, flag, "--compressed",
                "-H", f"Accept-Encoding: {coding}")
    assert resp.version == version
    assert_coded(resp, coding, static_file(env, "page.html"), decoded_by_client=True)


@pytest.mark.parametrize("path,accept,coding", [
    ("/static/page.html", "gzip;q=0.5, br;q=0.9, zstd;q=0.1", "br"),
    ("/static/page.html", "zstd;q=0, *", "br"),
    ("/static/page.html", "GZIP;q=1, br;q=0.999", "gzip"),
    ("/static/page.html", "br, gzip, zstd", "zstd"),
    ("/br-only/", "zstd, gzip", None),
    ("/gzip-only/", "zstd, br, x-gzip;q=0.1", "gzip"),
])
def test_mc_450_05_negotiation_over_h2(env, tls, tmp_path, path, accept, coding):
    resp = curl(tls.https_url(path), tmp_path, "--http2", "-H", f"Accept-Encoding: {accept}")
    assert resp.version == "2"
    assert_coded(resp, coding, expected_body(env, path))


def test_mc_450_06_head_and_304_over_h2(env, tls, tmp_path):
    """HEAD gets GET's headers; the altered ETag of the zstd variant still yields a 304 that
    carries Vary and that ETag (through mod_http2's request handling)."""
    url = tls.https_url("/static/page.html")
    get = curl(url, tmp_path, "--http2", "-H", "Accept-Encoding: zstd")
    head = curl(url, tmp_path, "--http2", "-I", "-H", "Accept-Encoding: zstd")
    assert head.status == 200  # (curl -I writes the headers as the body)
    for name in ("content-encoding", "vary", "etag"):
        assert head.header(name) == get.header(name), (name, head.headers, get.headers)
    etag = get.header("etag")
    assert etag and etag.endswith('-zstd"'), etag
    cond = curl(url, tmp_path, "--http2", "-H", "Accept-Encoding: zstd",
                "-H", f"If-None-Match: {etag}")
    assert cond.status == 304, cond.headers
    assert cond.body == b""
    assert_vary(cond)
    assert cond.header("etag") == etag


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_450_07_large_streamed_body_over_h2(env, tls, tmp_path, coding):
    """3 MB from a CGI (no Content-Length) over h2: flow control, many DATA frames, one
    complete stream; zstd stays within the 8 MiB window browsers accept."""
    size = 3_000_000
    resp = curl(tls.https_url(f"/cgi-it/big.py?size={size}"), tmp_path, "--http2",
                "-H", f"Accept-Encoding: {coding}")
    assert resp.version == "2" and resp.status == 200
    assert resp.header_all("content-encoding") == [coding]
    assert_vary(resp)
    assert decode(resp.body, coding) == b"".join(big_body_blocks(size))
    if coding == "zstd":
        assert zstd_window(resp.body) <= ZSTD_MAX_WINDOW


# ---- nghttp (nghttp2-client): one h2 connection, concurrent streams

@pytest.mark.parametrize("coding", [*CODINGS, None])
def test_mc_450_10_nghttp_each_encoding(env, tls, coding):
    """None: `accept-encoding: identity`, the files as they are (85 KB: many DATA frames)."""
    urls = [tls.https_url(p) for p in FILES]
    got = nghttp(urls, [f"accept-encoding: {coding or 'identity'}"])
    assert sorted(got) == sorted(FILES), got.keys()
    for path in FILES:
        resp = got[path]
        # nghttp inflates gzip itself: then the body it printed is already decoded
        assert resp.decoded_by_client == (coding == "gzip")
        assert_coded(resp, coding, expected_body(env, path), resp.decoded_by_client)
        assert resp.frames and resp.frames[-1].end_stream, f"{path}: stream not ended"
        wire = sum(f.length for f in resp.frames)
        cl = resp.header("content-length")
        assert cl is None or int(cl) == wire, f"{path}: Content-Length {cl}, {wire} bytes sent"
        if coding:
            assert wire < len(expected_body(env, path)), f"{path}: not compressed"
    if coding is None:
        assert len(got["/static/page.html"].frames) > 1
    # the server saw HTTP/2 requests and logged the encoding it chose
    missing = tls.wait_access([rf'"GET {re.escape(path)} HTTP/2\.0" 200 \d+ '
                               rf'"{coding or "identity"}" {coding or "-"} ' for path in FILES])
    assert not missing, f"not in the access log: {missing}"


@pytest.mark.parametrize("directory,coding",
                         [("/", "zstd"), ("/br-only/", "br"), ("/gzip-only/", "gzip")])
def test_mc_450_11_nghttp_per_directory(env, tls, directory, coding):
    """What a browser offers over HTTPS; the directory's MultiCompressEncodings decides."""
    paths = [directory, directory + "style.css", directory + "app.js"]
    got = nghttp([tls.https_url(p) for p in paths], ["accept-encoding: gzip, deflate, br, zstd"])
    for path in paths:
        assert_coded(got[path], coding, expected_body(env, path), got[path].decoded_by_client)


# ---- streaming: a flushed first chunk arrives, and decodes, while the script still sleeps

STREAM = "/cgi-it/stream.py?sleep=1.5&lines=2"


def check_two_lines(body: bytes) -> None:
    lines = body.split(b"\n")
    assert lines[0].startswith(b"line 1 of 2") and lines[1].startswith(b"line 2 of 2"), body


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("proto", PROTOCOLS)
def test_mc_450_20_curl_streaming(env, tls, tmp_path, proto, coding):
    """curl -N writes what it receives at once; the test decodes it as it comes."""
    flag, version = PROTOCOLS[proto]
    hdr = tmp_path / "stream.hdr"
    res = timed_stream(["curl", "-sSN", "-k", flag, "-D", str(hdr),
                        "-H", f"Accept-Encoding: {coding}", tls.https_url(STREAM)], coding)
    resp = ClientResponse(*parse_header_dump(hdr.read_text()), b"")
    assert resp.version == version and resp.status == 200
    assert resp.header_all("content-encoding") == [coding]
    assert resp.header("content-length") is None
    assert_vary(resp)
    check_two_lines(res.body)
    assert res.t_end >= 1.4, f"the script ended after {res.t_end:.2f}s: the test proves nothing"
    assert len(res.line_times) == 2
    assert res.line_times[0] < 1.0 and res.line_times[0] < res.t_end - 1.0, \
        f"line 1 decoded at {res.line_times[0]:.2f}s, response ended at {res.t_end:.2f}s"


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_450_21_nghttp_streaming(env, tls, coding):
    """The DATA frames nghttp received, with its timestamps: line 1 decodes from the frames
    that arrived 1.5 s before the stream's last one."""
    got = nghttp([tls.https_url(STREAM)], [f"accept-encoding: {coding}"])
    resp = got[STREAM]
    assert resp.status == 200 and resp.header_all("content-encoding") == [coding]
    assert_vary(resp)
    dec = StreamDecoder(None if resp.decoded_by_client else coding)
    out, t_line1 = b"", None
    for f in resp.frames:
        out += dec.feed(f.data)
        if t_line1 is None and b"\n" in out:
            t_line1 = f.t
    out += dec.finish()
    check_two_lines(out)
    t_first, t_last = resp.frames[0].t, resp.frames[-1].t
    assert resp.frames[-1].end_stream
    assert t_line1 is not None and t_line1 < t_last - 1.0, \
        f"line 1 decodable at {t_line1}s, first DATA at {t_first}s, last DATA at {t_last}s"
