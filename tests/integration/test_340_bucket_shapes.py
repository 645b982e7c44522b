# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: bucket shapes from mod_mctest_dropin (mctest-shapes)
and Debian's mod_bucketeer: 1-byte buckets, FLUSH mid-stream (the flushed prefix decodes before the
rest is sent), file and mmap buckets, EOS alone, data after EOS, and a large body in 64 KiB buckets.
Every response must decode to exactly the bytes the handler meant to send."""
import hashlib
import time

import pytest

from mc_bodies import mctest_body, static_file
from mc_client import assert_encoded, open_stream, request
from mc_decode import StreamDecoder
from mc_drop_in import children_rss_kib, start_dropin, stop_checked

CODINGS = ["gzip", "br", "zstd", "deflate"]

SITE = r"""
<Location /shapes/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html text/plain
    MultiCompressEncodings zstd br gzip deflate
</Location>
<Location /shapes-small-buf/>
    SetHandler mctest-shapes
    SetOutputFilter MULTICOMPRESS
    MultiCompressEncodings zstd br gzip deflate
    MultiCompressBufferSize 1K
</Location>
# mod_bucketeer before ours: ^B splits buckets, ^F adds FLUSH, ^P passes the brigade
<Directory "@HTDOCS@/bkt">
    AddOutputFilter BUCKETEER html
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressEncodings zstd br gzip deflate
</Directory>
"""

B, F, P = b"\x02", b"\x06", b"\x10"

# A file over 256 KiB: a whole body's file bucket this large is copied with pread() in pieces
# (256 KiB) rather than mapped; its bytes vary with the position, so an offset off by one shows.
LARGE_DOC = "big/large.txt"
LARGE = mctest_body(700_001)


def bucketeer_doc(env) -> bytes:
    """page.html with control characters every few bytes: many tiny buckets, flushes and passes
    (about 40% of them right next to each other: empty buckets between them)."""
    page = static_file(env, "page.html")
    out = bytearray()
    marks = [B, F, P, B + B, F + P, P + F + B, B]
    for i in range(0, len(page), 97):
        out += page[i:i + 97] + marks[(i // 97) % len(marks)]
        if i % 970 == 0:
            out += page[i:i + 1] + B + page[i + 1:i + 2] + F  # 1-byte buckets
    return bytes(out)


def strip_marks(doc: bytes) -> bytes:
    return doc.replace(B, b"").replace(F, b"").replace(P, b"")


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t340", SITE,
                     files={"bkt/marked.html": bucketeer_doc(env), LARGE_DOC: LARGE},
                     modules=["bucketeer"])
    yield s
    stop_checked(s)


SHAPES = {
    "heap": ("shape=heap&size=70000", None),
    "heap-cl": ("shape=heap&size=70000&cl=1", None),
    "bytes1-one-brigade": ("shape=bytes1&size=6000", None),
    "bytes1-pass-each": ("shape=bytes1&size=2500&pass=1", None),
    "bytes1-pass-97": ("shape=bytes1&size=20000&pass=97", None),
    "eosalone": ("shape=eosalone&size=50000&chunk=4096", None),
    "eosalone-1byte": ("shape=eosalone&size=3000&chunk=1", None),
    "eosalone-cl": ("shape=eosalone&size=50000&chunk=7000&cl=1", None),
    "aftereos": ("shape=aftereos&size=30000", None),
    "flush-many": ("shape=flush&size=40000&parts=25&delay=0", None),
    "file": ("shape=file&file=static/page.html", "page.html"),
    "file-slice": ("shape=file&file=static/page.html&off=1234&len=40000", "page.html"),
    "file-cl": ("shape=file&file=static/style.css&cl=1", "style.css"),
    "mmap": ("shape=mmap&file=static/page.html", "page.html"),
    "mmap-slice": ("shape=mmap&file=static/license.txt&off=4097&len=5000", "license.txt"),
    "file-large": (f"shape=file&file={LARGE_DOC}", LARGE_DOC),
    # two pieces, the second of 37 858 bytes, from an offset that is not a page's
    "file-large-slice": (f"shape=file&file={LARGE_DOC}&off=4097&len=300001", LARGE_DOC),
    "file-large-cl": (f"shape=file&file={LARGE_DOC}&off=1&cl=1", LARGE_DOC),
    "file-large-eos-alone": (f"shape=file&file={LARGE_DOC}&eos=alone", LARGE_DOC),
}


def expected(env, query: str, doc: str | None) -> bytes:
    args = dict(kv.split("=") for kv in query.split("&"))
    if doc is None:
        return mctest_body(int(args["size"]))
    data = LARGE if doc == LARGE_DOC else static_file(env, doc)
    off = int(args.get("off", 0))
    return data[off:off + int(args["len"])] if "len" in args else data[off:]


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("loc", ["/shapes/", "/shapes-small-buf/"])
def test_mc_340_01_shapes_decode(env, srv, loc, shape, coding):
    query, doc = SHAPES[shape]
    ctype = "&ct=text/plain" if doc == "license.txt" else ""
    r = request(srv.port, f"{loc}x?{query}{ctype}", coding)
    assert_encoded(r, coding, expected(env, query, doc))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_340_02_data_after_eos_never_sent(srv, coding):
    """What a handler passes after EOS is dropped: the next response on the same keep-alive
    connection is intact."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        for _ in range(3):
            conn.putrequest("GET", "/shapes/x?shape=aftereos&size=30000", skip_accept_encoding=True)
            conn.putheader("Accept-Encoding", coding)
            conn.endheaders()
            resp = conn.getresponse()
            body = resp.read()
            assert resp.status == 200 and resp.getheader("Content-Encoding") == coding
            d = StreamDecoder(coding)
            assert d.feed(body) + d.finish() == mctest_body(30000)
            assert b"DATA-AFTER-EOS" not in body
    finally:
        conn.close()


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_340_03_flush_prefix_decodes_early(srv, coding):
    """FLUSH after each of 3 parts, 0.7 s between them: each part decodes as soon as it is
    flushed, long before the response ends."""
    size, parts, delay = 30000, 3, 700
    t0 = time.monotonic()
    conn, resp = open_stream(srv.port, f"/shapes/x?shape=flush&size={size}&parts={parts}"
                                       f"&delay={delay}", coding)
    try:
        assert resp.status == 200 and resp.getheader("Content-Encoding") == coding
        dec = StreamDecoder(coding)
        out, seen = b"", []
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            out += dec.feed(chunk)
            seen.append((round(time.monotonic() - t0, 3), len(out)))
        out += dec.finish()
    finally:
        conn.close()
    total = time.monotonic() - t0
    assert out == mctest_body(size)
    assert total >= 1.35, "the handler did not sleep: the test proves nothing"
    first = size // parts
    t_first = next(t for t, n in seen if n >= first)
    t_second = next(t for t, n in seen if n >= 2 * first)
    assert t_first < 0.5, f"first flushed part decoded only after {t_first:.2f}s ({seen})"
    assert t_second < 1.2, f"second flushed part decoded only after {t_second:.2f}s ({seen})"


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_340_04_bucketeer(env, srv, coding):
    r = request(srv.port, "/bkt/marked.html", coding)
    assert_encoded(r, coding, strip_marks(bucketeer_doc(env)))


def test_mc_340_05_bucketeer_identity(env, srv):
    """Sanity: mod_bucketeer really is in the chain (it removes the marks)."""
    r = request(srv.port, "/bkt/marked.html", None)
    assert_encoded(r, None, strip_marks(bucketeer_doc(env)))
    assert r.body != bucketeer_doc(env)


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_340_06_big_body_64k_buckets(srv, coding):
    """32 MiB in 64 KiB buckets, one pass each: decodes exactly (streamed, compared by hash) and
    the server's memory does not grow with the body."""
    mib = 32
    rss0 = children_rss_kib(srv)
    conn, resp = open_stream(srv.port, f"/shapes/x?shape=big&mb={mib}", coding)
    got, n = hashlib.sha256(), 0
    try:
        assert resp.status == 200 and resp.getheader("Content-Encoding") == coding
        assert resp.getheader("Content-Length") is None  # streamed: it cannot be known
        dec = StreamDecoder(coding)
        while True:
            chunk = resp.read1(1 << 20)
            if not chunk:
                break
            out = dec.feed(chunk)
            got.update(out)
            n += len(out)
        tail = dec.finish()
        got.update(tail)
        n += len(tail)
    finally:
        conn.close()
    assert n == mib << 20
    assert got.hexdigest() == hashlib.sha256(mctest_body(mib << 20)).hexdigest()
    grown = (children_rss_kib(srv) - rss0) // 1024
    assert grown < 64, f"server RSS grew by {grown} MiB for a {mib} MiB body"
