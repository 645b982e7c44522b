# SPDX-License-Identifier: Apache-2.0
"""Odd bucket shapes from mod_mctest: 1-byte buckets, FLUSH everywhere, EOS alone, transient
buckets reused after each pass, known and unknown lengths, empty bodies, 204/304, HEAD,
Range. /mctest/ has MULTICOMPRESS with zstd br gzip deflate; /mctest-plain/ no filter."""
import time

import pytest

from mc_bodies import mctest_body
from mc_client import assert_encoded, assert_vary_once, open_stream, request
from mc_decode import StreamDecoder

CODINGS = ["gzip", "br", "zstd", "deflate", None]

SHAPES = {
    "1byte-one-brigade": "size=20000&chunk=1",
    "1byte-brigades": "size=5000&chunk=1&pass=1",
    "1byte-flush-each": "size=3000&chunk=1&flush=1&pass=7",
    "odd-chunks-flush": "size=100000&chunk=7&flush=3&pass=5",
    "big-chunks-flush": "size=1048576&chunk=65536&flush=1",
    "eos-alone": "size=50000&chunk=1000&pass=10&eos=alone",
    "eos-alone-single": "size=50000&eos=alone",
    "flush-first": "size=20000&flushfirst=1&pass=1",
    "cl-one-brigade": "size=30000&cl=1",
    "cl-many-brigades": "size=30000&cl=1&chunk=1000&pass=3",
    "transient-pass-each": "size=60000&chunk=4096&kind=transient&pass=1",
    "transient-pass-3": "size=60000&chunk=333&kind=transient&pass=3&flush=2",
    "transient-one-brigade": "size=60000&chunk=4096&kind=transient",
    "pool": "size=40000&chunk=5000&kind=pool&pass=2",
    "immortal": "size=40000&chunk=5000&kind=immortal&pass=2",
    "8mib": "size=8388608&chunk=8192&pass=16",
    "8mib-cl": "size=8388608&chunk=100000&cl=1&pass=1",
}


def size_of(query: str) -> int:
    return int(dict(kv.split("=") for kv in query.split("&"))["size"])


@pytest.mark.parametrize("coding", CODINGS, ids=[str(c) for c in CODINGS])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_mc_650_01_shapes_decode(main, shape, coding):
    query = SHAPES[shape]
    resp = request(main.port, "/mctest/x?" + query, coding)
    assert_encoded(resp, coding, mctest_body(size_of(query)))


def test_mc_650_02_reference_handler(main):
    """Without the filter the handler's body is mctest_body() (the tests' reference)."""
    for query in SHAPES.values():
        resp = request(main.port, "/mctest-plain/x?" + query, "gzip")
        assert resp.status == 200 and resp.header("Content-Encoding") is None
        assert resp.body == mctest_body(size_of(query))


@pytest.mark.parametrize("query", ["size=0", "size=0&cl=1", "size=0&flushfirst=1",
                                   "size=0&eos=alone"])
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_650_03_empty_body(main, query, coding):
    """An empty body: identity (shorter than MinLength) or a valid empty stream."""
    resp = request(main.port, "/mctest/x?" + query, coding)
    assert resp.status == 200
    ce = resp.content_encoding
    assert ce in (None, coding)
    assert resp.decoded() == b""
    assert_vary_once(resp)


@pytest.mark.parametrize("status", [204, 304])
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_650_04_no_body_statuses(main, status, coding):
    resp = request(main.port, f"/mctest/x?status={status}", coding)
    assert resp.status == status
    assert resp.header("Content-Encoding") is None
    assert resp.body == b""
    # A 304 carries the ETag the 200 would carry (RFC 9110 §15.4.5): with the coding's
    # suffix when the 200 is compressed. A 204 has no representation: its ETag is untouched.
    if status == 304 and coding is not None:
        assert resp.header("ETag") == f'"mctest-{coding}"'
        assert_vary_once(resp)
    else:
        assert resp.header("ETag") == '"mctest"'


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
@pytest.mark.parametrize("query", ["size=50000", "size=50000&cl=1", "size=50000&chunk=1&pass=1"])
def test_mc_650_05_head(main, coding, query):
    get = request(main.port, "/mctest/x?" + query, coding)
    head = request(main.port, "/mctest/x?" + query, coding, method="HEAD")
    assert head.status == 200 and head.body == b""
    assert head.header("Content-Encoding") == get.header("Content-Encoding") == coding
    assert head.vary_tokens() == get.vary_tokens() == ["accept-encoding"]


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_650_06_range_on_generated_body(main, coding):
    """A Range request gets its uncompressed range. The handler sends the whole body and EOS
    in one brigade, so httpd's byterange filter (after ours) can cut the range."""
    resp = request(main.port, "/mctest/x?size=50000&chunk=999", coding,
                   headers=[("Range", "bytes=1000-1999")])
    assert resp.status == 206, resp
    assert resp.header("Content-Encoding") is None
    assert resp.body == mctest_body(50000)[1000:2000]


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", "deflate"])
def test_mc_650_07_flush_bucket_flushes(main, coding):
    """A FLUSH bucket (not a stall) makes what came before it decodable at once: the handler
    passes half the body with a FLUSH, sleeps 1.2 s, passes the rest."""
    t0 = time.monotonic()
    conn, resp = open_stream(main.port, "/mctest/x?size=40000&chunk=20000&flush=1&pass=1"
                                        "&delay=1200", coding)
    try:
        assert resp.getheader("Content-Encoding") == coding
        dec = StreamDecoder(coding)
        out, t_half = b"", None
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            out += dec.feed(chunk)
            if t_half is None and len(out) >= 20000:
                t_half = time.monotonic() - t0
        out += dec.finish()
    finally:
        conn.close()
    t_end = time.monotonic() - t0
    assert out == mctest_body(40000)
    assert t_end >= 2.3, "the handler did not sleep: the test proves nothing"
    assert t_half is not None and t_half < 0.8, (t_half, t_end)
