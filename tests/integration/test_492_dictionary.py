# SPDX-License-Identifier: Apache-2.0
"""Shared-dictionary compression, RFC 9842: `MultiCompressUseAsDictionary`, the coding dcz, the
store.

A response in the scope of MultiCompressUseAsDictionary carries Use-As-Dictionary and is kept
by SHA-256; a later request that names it (Available-Dictionary) and accepts dcz gets the
skippable-frame header (5e 2a 4d 18 20 00 00 00 + hash) and a zstd frame against it, which must
decode with real decoders nobody here wrote: python3-zstandard with a raw-content dictionary and
the `zstd` CLI with --patch-from. Unknown, malformed or cross-origin dictionaries mean the normal
negotiation (a dictionary is kept to the virtual host that offered it: test_496). Static files,
a handler's streamed body (mod_mctest) and a CGI that flushes; HEAD, 304, Range;
MultiCompressCache entries per dictionary; `dcb` refused at startup with libbrotli 1.0.9. A fleet
of two servers sharing a real memcached: test_493_dictionary_fleet.py; the helpers both use:
mc_dictionary.py.
"""
from __future__ import annotations

import hashlib
import http.client
import time

import pytest
import zstandard

from mc_bodies import mctest_body
from mc_client import assert_vary_once, request
from mc_decode import decode
from mc_dictionary import (AE, DCZ_MAGIC, available, cli_decode, dcz_decode, dcz_get,
                           frame_window, get_as, learn, make_server, populate)
from mc_server import HttpdServer


@pytest.fixture(scope="module")
def srv(env):
    s = make_server(env, "dictionary", modules=("socache_shmcb",))
    try:
        s.start()
        s.files = populate(s)
        yield s
    finally:
        s.stop()


# ---- offering


def test_mc_492_01_offer_header_and_vary(srv):
    r = request(srv.port, "/d/app.v1.js", "gzip")
    assert r.status == 200
    assert r.header("Use-As-Dictionary") == 'match="/d/app.*.js", match-dest=("script")'
    assert "available-dictionary" in r.vary_tokens() and "accept-encoding" in r.vary_tokens()
    assert_vary_once(r)
    assert decode(r.body, r.content_encoding) == srv.files["app.v1.js"]
    site = request(srv.port, "/d/site-dict.txt", None)
    assert site.header("Use-As-Dictionary") == 'match="/mctest/*", id="site-v1"'
    # the URLs a pattern covers vary on Available-Dictionary, even where nothing is offered
    live = request(srv.port, "/mctest/x?size=3000", "zstd")
    assert "available-dictionary" in live.vary_tokens()
    other = request(srv.port, "/static/page.html", "zstd")
    assert "available-dictionary" not in other.vary_tokens()


def test_mc_492_02_not_offered(srv):
    # larger than MultiCompressDictionaryMaxSize, Off, a HEAD offers (same headers) but a 404 not
    assert request(srv.port, "/d/small-only/big.txt", None).header("Use-As-Dictionary") is None
    assert request(srv.port, "/d/small-only/tiny.txt", None).header("Use-As-Dictionary")
    assert request(srv.port, "/d/off/app.v9.js", None).header("Use-As-Dictionary") is None
    head = request(srv.port, "/d/app.v1.js", "zstd", method="HEAD")
    assert head.header("Use-As-Dictionary") and head.body == b""
    assert request(srv.port, "/d/app.v404.js", None).header("Use-As-Dictionary") is None


# ---- dcz


def test_mc_492_03_dcz_decodes(srv, tmp_path):
    v1, v2 = srv.files["app.v1.js"], srv.files["app.v2.js"]
    learn(srv, "/d/app.v1.js", v1)
    r = dcz_get(srv, "/d/app.v2.js", v1)
    assert r.status == 200 and r.content_encoding == "dcz", r
    assert dcz_decode(r.body, v1) == v2
    assert cli_decode(tmp_path, r.body, v1) == v2
    assert int(r.header("Content-Length")) == len(r.body)
    assert {"accept-encoding", "available-dictionary"} <= set(r.vary_tokens())
    assert_vary_once(r)
    plain = request(srv.port, "/d/app.v2.js", "zstd")
    assert plain.content_encoding == "zstd"
    assert len(r.body) * 5 < len(plain.body), (len(r.body), len(plain.body))
    # RFC 9842 §4: a window the client accepts
    assert frame_window(r.body) <= max(8 << 20, len(v1) * 5 // 4)
    # the dictionary response itself went out in any coding; its decoded bytes are the key
    learn(srv, "/d/app.v3.js", srv.files["app.v3.js"], ae="br")
    r3 = dcz_get(srv, "/d/app.v1.js", srv.files["app.v3.js"])
    assert r3.content_encoding == "dcz" and dcz_decode(r3.body, srv.files["app.v3.js"]) == v1


def test_mc_492_04_levels_and_etag(srv):
    v1, v2 = srv.files["app.v1.js"], srv.files["app.v2.js"]
    learn(srv, "/d/app.v1.js", v1)
    r = dcz_get(srv, "/d/app.v2.js", v1)
    etag = r.header("ETag")
    tag = hashlib.sha256(v1).hexdigest()[:8]
    assert etag and etag.endswith(f'-dcz-{tag}"'), etag
    base = request(srv.port, "/d/app.v2.js", None).header("ETag")
    assert etag == base[:-1] + f'-dcz-{tag}"'
    # another dictionary: another validator
    learn(srv, "/d/app.v3.js", srv.files["app.v3.js"])
    other = dcz_get(srv, "/d/app.v2.js", srv.files["app.v3.js"])
    assert other.content_encoding == "dcz" and other.header("ETag") != etag
    # the 304 for the dcz validator carries it and the Vary of the 200
    nm = dcz_get(srv, "/d/app.v2.js", v1, headers=[("If-None-Match", etag)])
    assert nm.status == 304 and nm.header("ETag") == etag, nm
    assert {"accept-encoding", "available-dictionary"} <= set(nm.vary_tokens())
    # a validator for another dictionary is not this representation's: a full 200
    full = dcz_get(srv, "/d/app.v2.js", v1, headers=[("If-None-Match", other.header("ETag"))])
    assert full.status == 200 and full.content_encoding == "dcz"
    # HEAD: the headers GET gets
    head = dcz_get(srv, "/d/app.v2.js", v1, method="HEAD")
    assert head.content_encoding == "dcz" and head.header("ETag") == etag and head.body == b""
    # Range: identity 206, as for every coding
    rng = dcz_get(srv, "/d/app.v2.js", v1, headers=[("Range", "bytes=0-99")])
    assert rng.status == 206 and rng.content_encoding is None and rng.body == v2[:100]


@pytest.mark.parametrize("case", ["unknown", "malformed", "no-dcz", "star", "two-values",
                                  "cross-origin-no-cors", "dcz-q0"])
def test_mc_492_05_fallback(srv, case):
    v1 = srv.files["app.v1.js"]
    learn(srv, "/d/app.v1.js", v1)
    ad = available(v1)
    ae = AE
    headers: list[tuple[str, str]] = []
    if case == "unknown":
        ad = available(b"never offered")
    elif case == "malformed":
        ad = ad[:-3] + "!!:"
    elif case == "no-dcz":
        ae = "zstd, br, gzip"
    elif case == "star":
        ae = "*"
    elif case == "two-values":
        ad = ad + ", " + ad
    elif case == "cross-origin-no-cors":
        headers = [("Sec-Fetch-Mode", "no-cors"), ("Sec-Fetch-Site", "cross-site")]
    elif case == "dcz-q0":
        ae = "dcz;q=0, zstd, br"
    r = get_as(srv.port, "/d/app.v2.js", ae, headers=[("Available-Dictionary", ad), *headers])
    assert r.status == 200
    assert r.content_encoding != "dcz", r
    assert decode(r.body, r.content_encoding) == srv.files["app.v2.js"]
    # and same-origin CORS is fine
    if case == "cross-origin-no-cors":
        ok = request(srv.port, "/d/app.v2.js", AE, headers=[
            ("Available-Dictionary", available(v1)), ("Sec-Fetch-Mode", "cors"),
            ("Sec-Fetch-Site", "same-origin")])
        assert ok.content_encoding == "dcz"


def test_mc_492_06_live_handler_and_cgi(srv, tmp_path):
    """A handler's body (mod_mctest, in pieces and flushes) and a CGI that pauses, compressed
    against a site-wide dictionary."""
    site = srv.files["site-dict.txt"]
    learn(srv, "/d/site-dict.txt", site)
    for q in ("size=50000", "size=50000&chunk=777&flush=3", "size=120000&chunk=4096&pass=2"):
        r = dcz_get(srv, f"/mctest/page?{q}", site)
        assert r.status == 200 and r.content_encoding == "dcz", (q, r)
        size = int(q.split("&")[0].split("=")[1])
        assert dcz_decode(r.body, site) == mctest_body(size), q
        assert cli_decode(tmp_path, r.body, site) == mctest_body(size)
        assert len(r.body) < size // 20, (q, len(r.body))


def stream_line(i: int, n: int) -> bytes:
    """What htdocs/cgi-bin/stream.py writes for line i of n."""
    return (f"line {i} of {n}: streamed by stream.py, decodable before the script ends. " * 5)\
        .encode() + b"\n"


def test_mc_492_07_streamed_cgi_flushes(srv):
    """A CGI that pauses, compressed against a dictionary: its first line decodes before the
    script's pause ends (a stall flushes the dcz stream as any other)."""
    lines = 3
    dictionary = b"".join(stream_line(i, lines) for i in range(1, lines + 1))
    (srv.htdocs / "dict" / "stream-dict.txt").write_bytes(dictionary)
    learn(srv, "/d/stream-dict.txt", dictionary)
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.putrequest("GET", f"/cgi-bin/stream.py?sleep=2&lines={lines}",
                        skip_accept_encoding=True)
        conn.putheader("Accept-Encoding", AE)
        conn.putheader("Available-Dictionary", available(dictionary))
        conn.endheaders()
        t0 = time.monotonic()
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Encoding") == "dcz"
        header = b""
        out = b""
        d = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        dec = zstandard.ZstdDecompressor(dict_data=d).decompressobj()
        while len(out) < len(stream_line(1, lines)):
            chunk = resp.read1(65536)
            assert chunk, "stream ended early"
            if len(header) < 40:  # the dcz header first, then the frame as it comes
                take = 40 - len(header)
                header, chunk = header + chunk[:take], chunk[take:]
            if chunk:
                out += dec.decompress(chunk)
        assert header[:8] == DCZ_MAGIC and header[8:] == hashlib.sha256(dictionary).digest()
        assert time.monotonic() - t0 < 1.8, "the first line came only after the pause"
        assert out.startswith(stream_line(1, lines))
        rest = resp.read()
        out += dec.decompress(rest)
        assert out == dictionary
    finally:
        conn.close()


def test_mc_492_08_cache_per_dictionary(srv):
    """MultiCompressCache keys dcz entries by dictionary: a (file, dictionary) pair is
    compressed once, and another dictionary gets its own entry."""
    v1, v2 = srv.files["dc/lib.1.js"], srv.files["dc/lib.2.js"]
    learn(srv, "/dc/lib.1.js", v1)
    learn(srv, "/dc/lib.2.js", v2)
    first = dcz_get(srv, "/dc/lib.2.js", v1)
    assert first.content_encoding == "dcz" and dcz_decode(first.body, v1) == v2
    deadline = time.monotonic() + 10
    hit = None
    while time.monotonic() < deadline:
        hit = dcz_get(srv, "/dc/lib.2.js", v1)
        assert hit.content_encoding == "dcz" and dcz_decode(hit.body, v1) == v2
        if len(hit.body) < len(first.body):  # the strong copy (zstd 19) replaced the live one
            break
        time.sleep(0.2)
    assert hit is not None and len(hit.body) < len(first.body), (len(first.body), len(hit.body))
    other = dcz_get(srv, "/dc/lib.1.js", v2)
    assert other.content_encoding == "dcz" and dcz_decode(other.body, v2) == v1


def metric(srv, name: str) -> int:
    text = request(srv.port, "/mc-metrics", None).body.decode()
    total = 0
    for line in text.splitlines():
        if line.startswith(name):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def test_mc_492_13_counters(srv):
    """The status counters see dcz and the dictionary events (docs/contract.md "Observing
    it")."""
    v1 = srv.files["app.v1.js"]
    used = metric(srv, 'multicompress_dictionaries_total{event="used"}')
    live = metric(srv, 'multicompress_responses_total{encoding="dcz",source="live"}')
    unknown = metric(srv, 'multicompress_dictionaries_total{event="unknown"}')
    learn(srv, "/d/app.v1.js", v1)
    assert dcz_get(srv, "/d/app.v2.js", v1).content_encoding == "dcz"
    assert dcz_get(srv, "/d/app.v2.js", b"not held").content_encoding == "zstd"
    deadline = time.monotonic() + 5  # counted when the request is logged
    while time.monotonic() < deadline:
        if metric(srv, 'multicompress_dictionaries_total{event="unknown"}') > unknown:
            break
        time.sleep(0.1)
    assert metric(srv, 'multicompress_dictionaries_total{event="used"}') > used
    assert metric(srv, 'multicompress_responses_total{encoding="dcz",source="live"}') > live
    assert metric(srv, 'multicompress_dictionaries_total{event="unknown"}') > unknown
    assert metric(srv, 'multicompress_dictionaries_total{event="offered"}') > 0


def test_mc_492_15_learned_from_a_sidecar(srv):
    """A dictionary sent as its precompressed sidecar is learned from the file itself (the
    bytes the browser decodes to), and used."""
    v1, v2 = srv.files["ds/lib.1.js"], srv.files["ds/lib.2.js"]
    r = request(srv.port, "/ds/lib.1.js", "zstd")
    assert r.content_encoding == "zstd" and r.header("Use-As-Dictionary") == 'match="/ds/*"'
    assert decode(r.body, "zstd") == v1
    assert len(r.body) == (srv.htdocs / "dict-static" / "lib.1.js.zst").stat().st_size  # sidecar
    got = dcz_get(srv, "/ds/lib.2.js", v1)
    assert got.content_encoding == "dcz", got
    assert dcz_decode(got.body, v1) == v2


# ---- configuration


def test_mc_492_11_dcb_refused(env):
    s = HttpdServer(env, "dcb", extra_conf="MultiCompressEncodings dcb zstd\n")
    p = s.check_config()
    assert p.returncode != 0
    out = p.stdout + p.stderr
    assert "MultiCompressEncodings" in out and "dcb" in out and "1.0.9" in out, out


@pytest.mark.parametrize("line,needle", [
    ('MultiCompressUseAsDictionary "app.*.js"', "must be a path"),
    ('MultiCompressUseAsDictionary "/a/:id.js"', "only '*'"),
    ('MultiCompressUseAsDictionary "/a/*" dest=Script', "dest="),
    ('MultiCompressUseAsDictionary "/a/*" color=red', "dest=DESTINATION"),
    ("MultiCompressDictionaryMaxSize 0", "expects a size"),
    ("MultiCompressWindow dcz 20", "follows the dictionary"),
    ("MultiCompressLevel dcz 20", "1 to 19"),
])
def test_mc_492_12_bad_directives(env, line, needle):
    s = HttpdServer(env, "dict-bad", extra_conf=line + "\n")
    p = s.check_config()
    assert p.returncode != 0 and needle in p.stdout + p.stderr, p.stdout + p.stderr
