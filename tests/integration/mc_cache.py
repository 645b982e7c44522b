# SPDX-License-Identifier: Apache-2.0
"""MultiCompressCache for test_620_cache.py and test_621_cache_stores.py: the site (one directory
per cache setting, the store line filled in), a server for a store kind, and the checks of a
live miss, a cache hit and the upgrade worker's strong copy."""
from __future__ import annotations

from pathlib import Path

from mc_client import assert_vary_once, suffixed
from mc_decode import ZSTD_MAX_WINDOW, decode, zstd_window
from mc_server import HttpdServer
from mc_stores import (SOURCE_LOG_CONF, Sourced, copy_static, get, log_lines_matching,
                       poll_until)

CODINGS = ("zstd", "br", "gzip")
STORE_DOWN = r"MC00040"
# what mod_socache_memcache / mod_socache_redis log themselves for each failed call
PROVIDER_ERRORS = r"AH00790|AH00791|AH03478|AH03479"
ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 32\nMaxRequestWorkers 32\n"
             "MinSpareThreads 1\nMaxSpareThreads 32\n")
UPGRADE_WAIT = 8.0  # seconds for the worker to store the strong copy (br 11 of 85 KB: ~0.1 s)

SITE = SOURCE_LOG_CONF + """
MultiCompressCache On
@STORE_LINE@
Alias /c "@DOCS@/cache"
<Directory "@DOCS@/cache">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Directory>
# bodies over 2 KB compressed are not cached
Alias /small "@DOCS@/cache-small"
<Directory "@DOCS@/cache-small">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCacheMaxEntry 2K
</Directory>
# a weaker strong copy: br 6
Alias /lvl "@DOCS@/cache-lvl"
<Directory "@DOCS@/cache-lvl">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCacheLevel br 6
</Directory>
# a cache level below the live level: no upgrade
Alias /noup "@DOCS@/cache-noup"
<Directory "@DOCS@/cache-noup">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCacheLevel zstd 1
</Directory>
# sidecars first, then the cache
Alias /both "@DOCS@/cache-both"
<Directory "@DOCS@/cache-both">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
Alias /nocache "@DOCS@/nocache"
<Directory "@DOCS@/nocache">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCache Off
</Directory>
"""
DIRS = ("cache", "cache-small", "cache-lvl", "cache-noup", "cache-both", "nocache")
PREFIX_DIR = {"/c": "cache", "/small": "cache-small", "/lvl": "cache-lvl",
              "/noup": "cache-noup", "/both": "cache-both", "/nocache": "nocache"}


def site(store_spec: str | None, docs: str = "@HTDOCS@") -> str:
    line = f"MultiCompressCacheStore {store_spec}" if store_spec else "# default store: shmcb"
    return SITE.replace("@STORE_LINE@", line).replace("@DOCS@", docs)


def store_module(kind: str) -> list[str]:
    return ["socache_shmcb"] if kind == "shmcb" else [f"socache_{kind}"]


def new_server(env, name: str, store_kind: str, store_spec: str | None,
               docs: str = "@HTDOCS@") -> HttpdServer:
    return HttpdServer(env, name, site_template=None, extra_conf=site(store_spec, docs),
                       extra_modules=store_module(store_kind),
                       htdocs_copies=[(d, "static") for d in DIRS])


def copy_of(srv: HttpdServer, name: str, prefix: str = "/c") -> tuple[str, Path]:
    return copy_static(srv, name, prefix, PREFIX_DIR[prefix])


def check_body(got: Sourced, coding: str, original: bytes) -> int:
    """Status, Content-Encoding, exact decoded bytes, Content-Length, Vary; returns the size."""
    r = got.resp
    assert r.status == 200, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert decode(r.body, coding) == original, "decoded body differs from the file"
    assert r.header_all("Content-Length") in ([], [str(len(r.body))]), r
    assert_vary_once(r)
    if coding == "zstd":
        assert zstd_window(r.body) <= ZSTD_MAX_WINDOW
    assert got.note == got.env, got
    return len(r.body)


def check_hit(got: Sourced, ref: Sourced, coding: str, original: bytes, *, head=False) -> None:
    """A cache hit: every header of a compressed static response, source 'cache'."""
    r = got.resp
    assert r.status == 200, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert r.header("Content-Type") == ref.resp.header("Content-Type"), r
    assert r.header_all("ETag") == [suffixed(ref.resp.header("ETag"), coding)], r
    assert r.header_all("Last-Modified") == [ref.resp.header("Last-Modified")], r
    assert_vary_once(r)
    if head:
        assert r.body == b""
    else:
        assert r.header_all("Content-Length") == [str(len(r.body))], r
        assert decode(r.body, coding) == original
    assert got.note == "cache", f"source note {got.note!r} on a cache hit: {r!r}"
    assert got.env == "cache", f"MULTICOMPRESS_SOURCE {got.env!r} on a cache hit"


def wait_upgraded(srv: HttpdServer, url: str, coding: str, original: bytes,
                  live_size: int) -> Sourced:
    """Polls until a response is smaller than the live one: the upgrade worker's strong copy."""

    def upgraded():
        got = get(srv, url, coding)
        return got if check_body(got, coding, original) < live_size else None

    up = poll_until(upgraded, timeout=UPGRADE_WAIT)
    assert up, (f"no smaller (upgraded) body within {UPGRADE_WAIT}s; "
                f"{srv.store_kind}: {log_lines_matching(srv, 'cache')[-5:]}")
    return up


def miss_then_upgrade(srv: HttpdServer, url: str, coding: str, original: bytes
                      ) -> tuple[Sourced, Sourced]:
    """First request: a live miss; then the upgraded hit. Returns (miss, upgraded)."""
    miss = get(srv, url, coding)
    live_size = check_body(miss, coding, original)
    assert miss.note == "live", f"first request of a new file: {miss.note!r}"
    return miss, wait_upgraded(srv, url, coding, original, live_size)
