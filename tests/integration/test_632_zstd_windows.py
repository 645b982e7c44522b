# SPDX-License-Identifier: Apache-2.0
"""Precompressed zstd that browsers can decode (RFC 9659: at most an 8 MiB window).

`zstd --long` writes frames that declare a 128 MiB window, and a body may hold several frames:
every frame of a `.zst` sidecar and of a zstd entry read from the cache store is checked, not
only the first. A body with a frame over 8 MiB is never sent; the page is compressed live and
the log says why once (per file version for sidecars, per kind and process for store entries).
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import zstandard

from mc_decode import ZSTD_MAX_WINDOW, decode
from mc_entries import make_entry, parse_entry, store_get, store_key, store_set
from mc_server import HttpdServer
from mc_stores import (SOURCE_LOG_CONF, get, log_lines_matching, poll_until,
                       write_file)

ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")
# What a read from the store checks: each child's tier of entries it verified already
# (MultiCompressCacheLocal) would keep serving the copy it checked at the first hit and never
# read the value written over it (test_622 checks that only verified entries enter the tier).
SITE = SOURCE_LOG_CONF + """
MultiCompressCacheStore @STORE@
MultiCompressCacheLocal Off
<Directory "@HTDOCS@/side">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/cache">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressCache On
    # no upgrade rewrites the entry under the test's feet
    MultiCompressCacheLevel zstd 1
</Directory>
"""
PAGE = b"<html><body>\n" + b"<p>a page of a site, a page of a site, more text</p>\n" * 2000 + \
    b"</body></html>\n"


def frame(data: bytes, window_log: int, content_size: bool) -> bytes:
    params = zstandard.ZstdCompressionParameters.from_level(
        3, window_log=window_log, write_content_size=content_size)
    c = zstandard.ZstdCompressor(compression_params=params)
    if content_size:
        return c.compress(data)
    o = c.compressobj()
    return o.compress(data) + o.flush()


def long_body(data: bytes) -> bytes:
    """Two frames: the first within 8 MiB, the second declaring 128 MiB (zstd --long=27)."""
    half = len(data) // 2
    body = frame(data[:half], 20, True) + frame(data[half:], 27, False)
    assert zstandard.get_frame_parameters(body).window_size <= ZSTD_MAX_WINDOW
    assert zstandard.ZstdDecompressor(max_window_size=1 << 27).decompressobj().decompress(
        body) is not None
    return body


@pytest.fixture(scope="module")
def srv(env, memcache_store):
    store = memcache_store
    s = HttpdServer(env, "zstd-windows", site_template=None,
                    extra_conf=SITE.replace("@STORE@", store.spec),
                    extra_modules=["socache_memcache"], mpm_conf=ONE_CHILD)
    try:
        s.start()
        for d in ("side", "cache"):
            (s.htdocs / d).mkdir()
        yield s
    finally:
        s.stop()


def browser_decodable(body: bytes) -> bytes:
    """Decodes as a browser would: no frame may need more than 8 MiB."""
    return zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).decompressobj() \
        .decompress(body)


def test_mc_632_01_sidecar_with_a_long_frame(srv, log_allow):
    log_allow.append(r"MC00031")
    path = write_file(srv.htdocs / "side" / "page.html", PAGE, time.time() - 1000)
    write_file(Path(str(path) + ".zst"), long_body(PAGE), time.time())
    mark = srv.log_size()
    for _ in range(3):
        got = get(srv, "/side/page.html", "zstd")
        assert got.source == "live", got.source
        assert browser_decodable(got.resp.body) == PAGE
    warned = log_lines_matching(srv, r"MC00031", mark)
    assert len(warned) == 1 and "page.html.zst" in warned[0], srv.log_lines(mark)


def test_mc_632_02_store_entry_with_a_long_frame(srv, memcache_store, log_allow):
    store = memcache_store
    log_allow.append(r"MC00120")
    path = write_file(srv.htdocs / "cache" / "page.html", PAGE, time.time() - 1000)
    first = get(srv, "/cache/page.html", "zstd")
    assert first.source == "live"
    key = store_key(store, path, "zstd", port=srv.port)
    good = poll_until(lambda: store_get(store, key), timeout=5)
    assert good, "no entry stored"
    assert poll_until(lambda: get(srv, "/cache/page.html", "zstd").source == "cache")
    store_set(store, key, make_entry(parse_entry(good), long_body(PAGE)))
    mark = srv.log_size()
    got = get(srv, "/cache/page.html", "zstd")
    assert got.source == "live" and decode(got.resp.body, "zstd") == PAGE
    assert browser_decodable(got.resp.body) == PAGE
    assert log_lines_matching(srv, r"MC00120.*window", mark), srv.log_lines(mark)
