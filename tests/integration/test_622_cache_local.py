# SPDX-License-Identifier: Apache-2.0
"""Cache hits at the limit: each child's tier of verified cache entries (MultiCompressCacheLocal).

An entry read from the store at its final level (after parse_entry accepted it) is kept in the
child's memory and later hits are sent from there (source `cache`,
`multicompress_cache_events_total{event="local_hit"}`, the `multicompress_cache_local_bytes`
gauge), even with the store emptied or overwritten behind it; only verified entries enter it; it
is bounded (a full tier evicts the least recently used entry, never grows), never serves another
version of a file (also while the file is replaced under load: every body is one version,
whole), is freed with its child (graceful restart), and `Off` turns it off. One child
(mc_tier.ONE_CHILD) so that every request meets the same tier. test_612 has tier hits over TLS +
HTTP/2; test_623 the tier's other safety rules (virtual hosts, permissions, status counters).
"""
from __future__ import annotations

import os
import threading
import time

import pytest
import zstandard

from mc_client import request
from mc_decode import ZSTD_MAX_WINDOW, decode, zstd_window
from mc_entries import make_entry, parse_entry, store_get, store_key, store_set
from mc_stores import StoreProcess, copy_static, get, log_lines_matching, poll_until, set_mtime
from mc_tier import (HIT, LOCAL_BYTES, LOCAL_EVICT, LOCAL_HIT, UPGRADE_WAIT, local_hits, metrics,
                     strong_hit, tier_server)


def test_mc_622_01_tier_serves_hits_without_the_store(make_server):
    """With memcached as the store: once the strong entry was read (and verified) from the store,
    hits come from the child's tier; emptying memcached changes nothing (without the tier they
    would be misses, compressed live)."""
    store = StoreProcess("memcache").start()
    try:
        srv = tier_server(make_server, "tier-mc", store=store.spec)
        url, path = copy_static(srv, "page.html", "/t", "tier")
        original = path.read_bytes()
        strong = strong_hit(srv, url, original)
        before = metrics(srv)
        assert before.get(LOCAL_BYTES, 0) >= len(strong.resp.body), before
        again = get(srv, url, "br")
        assert again.note == "cache" and again.resp.body == strong.resp.body, again
        assert store.command("flush_all").startswith(b"OK")  # every item invalid from now on
        for _ in range(3):
            got = get(srv, url, "br")
            assert got.note == "cache", f"not from the tier after the store was emptied: {got}"
            assert got.resp.body == strong.resp.body
            assert got.resp.header("Content-Length") == str(len(strong.resp.body))
        after = metrics(srv)
        assert after[LOCAL_HIT] - before.get(LOCAL_HIT, 0) == 4, (before, after)
        assert after[HIT] - before[HIT] == 4
        # HEAD and a conditional request of a tier hit behave as the store's hits
        head = get(srv, url, "br", method="HEAD")
        assert head.resp.status == 200 and head.resp.body == b"", head
        etag = strong.resp.header("ETag")
        cond = request(srv.port, url, "br", [("If-None-Match", etag)])
        assert cond.status == 304, cond
    finally:
        store.cleanup()


def test_mc_622_02_full_tier_evicts_and_never_grows(make_server):
    """16K per child: page.html, style.css, app.js, data.json in br-11 (about 7, 6, 4.7 and
    3.6 KB) do not fit together; the least recently used goes, the gauge stays within the bound,
    and the evicted entry is read from the store again (a hit, not a local one)."""
    srv = tier_server(make_server, "tier-bound", local="16K")
    urls = {}
    for name in ("page.html", "style.css", "app.js", "data.json"):
        url, path = copy_static(srv, name, "/t", "tier")
        urls[name] = (url, path.read_bytes())
        strong_hit(srv, url, urls[name][1])
        assert metrics(srv).get(LOCAL_BYTES, 0) <= 16 * 1024
    m = metrics(srv)
    assert m[LOCAL_EVICT] >= 1, m
    assert 0 < m[LOCAL_BYTES] <= 16 * 1024, m
    # page.html was used least recently: evicted, so its next hit comes from the store
    url, original = urls["page.html"]
    before = local_hits(srv)
    got = get(srv, url, "br")
    assert got.note == "cache" and decode(got.resp.body, "br") == original
    assert local_hits(srv) == before, "the evicted entry was served from the tier"
    # ... and it is back in the tier for the next one
    got = get(srv, url, "br")
    assert got.note == "cache" and local_hits(srv) == before + 1
    assert metrics(srv)[LOCAL_BYTES] <= 16 * 1024


def test_mc_622_03_never_another_version(make_server):
    """A file replaced (a new inode), or rewritten in place with the same size and a new mtime,
    is never answered from the tier's entry of the old version."""
    srv = tier_server(make_server, "tier-stale")
    url, path = copy_static(srv, "style.css", "/t", "tier")
    v1 = path.read_bytes()
    strong_hit(srv, url, v1)
    before = local_hits(srv)
    assert get(srv, url, "br").note == "cache"
    assert local_hits(srv) == before + 1, "v1 is not served from the tier"
    # replaced by a rename (how a deploy writes it)
    v2 = v1.replace(b"color", b"COLOR")
    assert v2 != v1 and len(v2) == len(v1)
    tmp = path.with_suffix(".new")
    tmp.write_bytes(v2)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    set_mtime(path, time.time() - 500)
    got = get(srv, url, "br")
    assert decode(got.resp.body, "br") == v2 and got.note == "live", got
    # rewritten in place, the same size, a new mtime: same inode, another version
    v3 = v1.replace(b"margin", b"MARGIN")
    assert v3 != v1 and len(v3) == len(v1)
    with open(path, "r+b") as f:
        f.write(v3)
    set_mtime(path, time.time() - 400)
    got = get(srv, url, "br")
    assert decode(got.resp.body, "br") == v3, "an older version's body for the rewritten file"


def test_mc_622_04_a_file_replaced_under_load_is_one_version_whole(make_server):
    """Clients fetch a page while it is replaced (renames) back and forth between two versions:
    every body decodes to exactly one of them (live, store or tier), never a mix."""
    srv = tier_server(make_server, "tier-race")
    url, path = copy_static(srv, "page.html", "/t", "tier")
    v1 = path.read_bytes()
    v2 = v1 + b"<!-- the second version -->\n"
    times = {v1: time.time() - 900, v2: time.time() - 800}
    stop = threading.Event()
    errors: list[str] = []
    sources: dict[str, int] = {}

    def writer():
        n = 0
        while not stop.is_set():
            data = v2 if n % 2 == 0 else v1
            tmp = path.with_name(f".{path.name}.{n}")
            tmp.write_bytes(data)
            os.chmod(tmp, 0o644)
            os.utime(tmp, (times[data], times[data]))
            os.replace(tmp, path)
            n += 1
            time.sleep(0.05)

    def reader():
        while not stop.is_set():
            try:
                got = get(srv, url, "br")
                body = decode(got.resp.body, "br")
            except Exception as ex:  # noqa: BLE001 - reported below
                errors.append(repr(ex))
                continue
            sources[got.note] = sources.get(got.note, 0) + 1
            if body not in (v1, v2):
                errors.append(f"a body of neither version ({got.note}, {len(body)} bytes)")

    before = local_hits(srv)
    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader)
                                                   for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(6)
    stop.set()
    for t in threads:
        t.join(30)
    assert not errors, errors[:5]
    assert sources.get("cache", 0) > 0 and sources.get("live", 0) > 0, sources
    assert local_hits(srv) > before, f"the tier served none of them: {sources}"


def test_mc_622_05_freed_on_graceful_restart(make_server):
    """The tier goes with its child: after a graceful restart (memcached keeps the store's
    entries across it, shmcb would not) the gauge is 0 and the first hit is the store's."""
    store = StoreProcess("memcache").start()
    try:
        srv = tier_server(make_server, "tier-graceful", store=store.spec)
        url, path = copy_static(srv, "app.js", "/t", "tier")
        strong_hit(srv, url, path.read_bytes())
        assert metrics(srv)[LOCAL_BYTES] > 0
        old = set(srv.child_pids())
        srv.graceful()
        assert poll_until(lambda: not (old & set(srv.child_pids())), timeout=15), \
            "the old generation's child did not exit"
        assert poll_until(lambda: metrics(srv).get(LOCAL_BYTES) == 0, timeout=5), metrics(srv)
        before = local_hits(srv)
        got = get(srv, url, "br")  # the new child's tier is empty: a hit from the store
        assert got.note == "cache" and local_hits(srv) == before, got
        assert get(srv, url, "br").note == "cache" and local_hits(srv) == before + 1
        assert metrics(srv)[LOCAL_BYTES] > 0
    finally:
        store.cleanup()


def test_mc_622_06_off(make_server):
    srv = tier_server(make_server, "tier-off", local="Off")
    url, path = copy_static(srv, "style.css", "/t", "tier")
    strong_hit(srv, url, path.read_bytes())
    for _ in range(3):
        assert get(srv, url, "br").note == "cache"
    m = metrics(srv)
    assert m.get(LOCAL_HIT) == 0 and m.get(LOCAL_BYTES) == 0, m


@pytest.mark.parametrize("line,ok", [
    ("MultiCompressCacheLocal 4M", True), ("MultiCompressCacheLocal off", True),
    ("MultiCompressCacheLocal 0", True), ("MultiCompressCacheLocal 8Q", False),
    ("MultiCompressCacheLocal -1", False),
    ("<VirtualHost 127.0.0.1:@PORT@>\nMultiCompressCacheLocal 1M\n</VirtualHost>", False)])
def test_mc_622_07_values(make_server, line, ok):
    """A size (K, M, G) or Off, in the main server only: one tier per child."""
    srv = make_server("tier-cfg", site_template=None, extra_conf=line + "\n")
    p = srv.check_config()
    out = p.stdout + p.stderr
    assert (p.returncode == 0) == ok, out
    if not ok:
        assert "MultiCompressCacheLocal" in out and "Invalid command" not in out, out


def long_window_zstd(data: bytes) -> bytes:
    """A zstd body whose second frame declares a 128 MiB window (zstd --long=27): browsers
    refuse it (RFC 9659: at most 8 MiB)."""
    half = len(data) // 2
    first = zstandard.ZstdCompressor(level=3).compress(data[:half])
    # without a content size, so that the frame keeps the window it declares
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=27,
                                                            write_content_size=False)
    o = zstandard.ZstdCompressor(compression_params=params).compressobj()
    second = o.compress(data[half:]) + o.flush()
    assert zstandard.get_frame_parameters(second).window_size > ZSTD_MAX_WINDOW
    return first + second


@pytest.mark.parametrize("coding,bad", [("br", "flipped"), ("zstd", "window")])
def test_mc_622_08_only_verified_entries_enter_the_tier(make_server, log_allow, coding, bad):
    """A store entry that fails its check (a flipped byte; a zstd frame a browser cannot decode)
    is a miss with one MC00120 line and never enters the tier; the good entry the live response
    stores again does. Once in the tier, what is written over the store's entry is not read."""
    log_allow.append(r"MC00120")
    store = StoreProcess("memcache").start()
    try:
        srv = tier_server(make_server, f"tier-verify-{coding}", store=store.spec)
        url, path = copy_static(srv, "page.html", "/t", "tier")
        original = path.read_bytes()
        key = store_key(store, path, coding, port=srv.port)
        strong_hit(srv, url, original, coding)  # the live fill, the upgrade, a store hit
        good = store_get(store, key)
        assert good
        entry = parse_entry(good)
        if bad == "flipped":
            value = bytearray(good)
            value[len(value) // 2] ^= 0x20
            value = bytes(value)
        else:
            value = make_entry(entry, long_window_zstd(original))
        # a second file: its store entry is tampered before any child read it
        url2, path2 = copy_static(srv, "page.html", "/t", "tier")
        key2 = store_key(store, path2, coding, port=srv.port)
        strong_hit(srv, url2, original, coding)
        # the first file is in the tier: a bad value over its store entry is never read
        before = local_hits(srv)
        store_set(store, key, value)
        got = get(srv, url, coding)
        assert got.note == "cache" and decode(got.resp.body, coding) == original
        assert local_hits(srv) == before + 1
        assert not log_lines_matching(srv, r"MC00120")
        # the second one: evicted from the tier by a graceful restart (empty tiers), then bad
        srv.graceful()
        good2 = store_get(store, key2)
        assert good2
        value2 = (make_entry(parse_entry(good2), long_window_zstd(original)) if bad == "window"
                  else bytes(b ^ (0x20 if i == len(good2) // 2 else 0)
                             for i, b in enumerate(good2)))
        store_set(store, key2, value2)
        mark = srv.log_size()
        before = local_hits(srv)
        got = get(srv, url2, coding)
        assert got.note == "live" and decode(got.resp.body, coding) == original, got
        assert poll_until(lambda: log_lines_matching(srv, r"MC00120", mark), timeout=2)
        assert local_hits(srv) == before
        # the live response stored a good entry: read and verified once, then from the tier
        assert poll_until(lambda: get(srv, url2, coding).note == "cache", timeout=UPGRADE_WAIT)
        assert poll_until(lambda: (get(srv, url2, coding).note == "cache"
                                   and local_hits(srv) > before), timeout=UPGRADE_WAIT)
        got = get(srv, url2, coding)
        assert got.note == "cache" and decode(got.resp.body, coding) == original
        bad_lines = log_lines_matching(srv, r"MC00120", mark)
        assert len(bad_lines) == 1, bad_lines  # one line for the bad entry, whatever came after
        if coding == "zstd":
            assert zstd_window(got.resp.body) <= ZSTD_MAX_WINDOW
    finally:
        store.cleanup()
