# SPDX-License-Identifier: Apache-2.0
"""MultiCompressCache: compressed bodies of static files in a socache store (issue 6).

The first request of a file is a miss, compressed live at the normal level and stored; the
upgrade worker then stores a stronger copy (MultiCompressCacheLevel: br 11, zstd 19, gzip 9), so
a later request is a hit with a smaller body. Keys carry path, size, mtime, inode and encoding:
an edited or touched file is never served stale. A store that is down (nothing listening, or
killed mid-test) means live compression, never a failed request, and one MC00040 line per
process. Stores: shmcb, and real memcached and redis-server processes (mc_stores.StoreProcess)
on free loopback ports.
"""
from __future__ import annotations

import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mc_env import (LEVEL_RE, ZSTD_MAX_WINDOW, HttpdServer, assert_vary_once, decode, suffixed,
                    zstd_window)
from mc_stores import (SOURCE_LOG_CONF, Sourced, StoreProcess, copy_static, dead_store_spec, get,
                       log_lines_matching, pid_of_log_line, poll_until, reference, set_mtime,
                       write_file, write_sidecar)

CODINGS = ("zstd", "br", "gzip")
STORES = ("shmcb", "memcache", "redis")
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


@pytest.fixture(scope="module", params=STORES)
def srv(request, env):
    """A server per store kind: shmcb (the default, no MultiCompressCacheStore line), and a
    real memcached / redis-server started for it."""
    kind = request.param
    store = None
    s = None
    try:
        spec = None
        if kind != "shmcb":
            store = StoreProcess(kind).start()
            spec = store.spec
        s = new_server(env, f"cache-{kind}", kind, spec)
        s.store = store
        s.store_kind = kind
        s.start()
        yield s
    finally:
        if s is not None:
            s.stop()
        if store is not None:
            store.cleanup()


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


# ---- miss, hit, upgrade

@pytest.mark.parametrize("coding", CODINGS)
def test_mc_620_01_miss_hit_upgrade(srv, coding):
    url, path = copy_of(srv, "page.html")
    original = path.read_bytes()
    ref = reference(srv, url)
    miss, up = miss_then_upgrade(srv, url, coding, original)
    check_hit(up, ref, coding, original)
    # the strong copy stays: the same bytes again
    again = get(srv, url, coding)
    check_hit(again, ref, coding, original)
    assert again.resp.body == up.resp.body
    if srv.store is not None:
        assert srv.store.item_count() >= 1, f"nothing in {srv.store_kind}"


def test_mc_620_02_each_encoding_its_own_entry(srv):
    """Three encodings of one file are three entries; each decodes to the file."""
    url, path = copy_of(srv, "data.json")
    original = path.read_bytes()
    ref = reference(srv, url)
    ups = {c: miss_then_upgrade(srv, url, c, original)[1] for c in CODINGS}
    for c, up in ups.items():
        check_hit(up, ref, c, original)
        check_hit(get(srv, url, c), ref, c, original)
    assert len({u.resp.body for u in ups.values()}) == 3


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_620_03_head_and_304_on_hit(srv, coding):
    url, path = copy_of(srv, "style.css")
    original = path.read_bytes()
    ref = reference(srv, url)
    _, up = miss_then_upgrade(srv, url, coding, original)
    head = get(srv, url, coding, method="HEAD")
    check_hit(head, ref, coding, original, head=True)
    assert head.resp.header_all("Content-Length") == [str(len(up.resp.body))], head.resp
    etag = suffixed(ref.resp.header("ETag"), coding)
    for method in ("GET", "HEAD"):
        for cond in ([("If-None-Match", etag)],
                     [("If-Modified-Since", ref.resp.header("Last-Modified"))]):
            got = get(srv, url, coding, cond, method=method)
            assert got.resp.status == 304, (method, cond, got.resp)
            assert got.resp.body == b""
            assert got.resp.header_all("ETag") == [etag], got.resp
            assert_vary_once(got.resp)
    check_hit(get(srv, url, coding, [("If-None-Match", '"other"')]), ref, coding, original)


@pytest.mark.parametrize("how", ["rewrite", "touch", "replace-same-mtime"])
def test_mc_620_04_edited_file_is_never_stale(srv, how):
    """The key is computed by the module, whatever the store: touch and replace run on shmcb."""
    if how != "rewrite" and srv.store_kind != "shmcb":
        pytest.skip("store-independent: checked with shmcb")
    url, path = copy_of(srv, "page.html")
    original = path.read_bytes()
    _, up = miss_then_upgrade(srv, url, "br", original)
    old = path.stat()
    if how == "rewrite":       # new content (same size), new mtime
        new = original.replace(b"apr_table", b"APR_TABLE")
        assert new != original and len(new) == len(original)
        path.write_bytes(new)
        set_mtime(path, old.st_mtime + 5)
    elif how == "touch":       # same content, new mtime
        new = original
        set_mtime(path, old.st_mtime + 5)
    else:                      # new content renamed over it: same size and mtime, new inode
        new = original.replace(b"apr_table", b"APR_TABLE")
        tmp = path.with_name(path.name + ".tmp")
        write_file(tmp, new, old.st_mtime)
        os.rename(tmp, path)
        assert path.stat().st_ino != old.st_ino and path.stat().st_mtime == old.st_mtime
    got = get(srv, url, "br")
    size = check_body(got, "br", new)  # new content: never the old entry's
    assert size > len(up.resp.body), f"after '{how}' the old (upgraded) entry was sent"
    assert got.note == "live", f"after '{how}': source {got.note!r}"
    if how == "rewrite":
        # the new version gets its own entry and upgrade
        up2 = wait_upgraded(srv, url, "br", new, size)
        assert decode(up2.resp.body, "br") == new


def test_mc_620_05_identity_and_range_bypass_the_cache(srv):
    url, path = copy_of(srv, "app.js")
    original = path.read_bytes()
    miss_then_upgrade(srv, url, "zstd", original)
    got = get(srv, url)
    assert got.resp.status == 200 and not got.resp.header_all("Content-Encoding")
    assert got.resp.body == original
    got = get(srv, url, "zstd", [("Range", "bytes=10-99")])
    assert got.resp.status == 206, got.resp
    assert not got.resp.header_all("Content-Encoding")
    assert got.resp.body == original[10:100]
    assert got.note != "cache"


# ---- shmcb-only scenarios (directory settings); run once

@pytest.fixture
def shm(srv):
    if srv.store_kind != "shmcb":
        pytest.skip("directory settings: checked with shmcb only")
    return srv


def test_mc_620_06_max_entry(shm):
    """/small: MultiCompressCacheMaxEntry 2K; page.html (85 KB, ~9 KB compressed) and
    small.html (10 KB, ~3 KB) are never cached."""
    for name in ("page.html", "small.html"):
        url, path = copy_of(shm, name, "/small")
        original = path.read_bytes()
        sizes = set()
        for _ in range(4):
            got = get(shm, url, "br")
            sizes.add(check_body(got, "br", original))
            assert got.note == "live", got
            time.sleep(0.3)
        assert len(sizes) == 1, f"{name}: a different body came back: {sizes}"


def test_mc_620_07_cache_level(shm):
    """MultiCompressCacheLevel br 6 in /lvl: the strong copy is between live br 4 and br 11."""
    url_c, path_c = copy_of(shm, "page.html", "/c")
    url_l, path_l = copy_of(shm, "page.html", "/lvl")
    original = path_c.read_bytes()
    miss_c, up_c = miss_then_upgrade(shm, url_c, "br", original)
    miss_l, up_l = miss_then_upgrade(shm, url_l, "br", original)
    assert len(miss_c.resp.body) == len(miss_l.resp.body)  # both live at br 4
    assert len(up_c.resp.body) < len(up_l.resp.body) < len(miss_l.resp.body)


def test_mc_620_08_no_upgrade_below_live_level(shm):
    """MultiCompressCacheLevel zstd 1 (below the live 3): hits keep the live body."""
    url, path = copy_of(shm, "page.html", "/noup")
    original = path.read_bytes()
    miss = get(shm, url, "zstd")
    size = check_body(miss, "zstd", original)
    time.sleep(1.0)
    for _ in range(3):
        got = get(shm, url, "zstd")
        assert check_body(got, "zstd", original) == size
    assert got.note == "cache", got
    assert got.resp.body == miss.resp.body


def test_mc_620_09_sidecar_before_cache(shm):
    """MultiCompressStatic and the cache: a fresh sidecar wins; without one, the cache."""
    url, path = copy_of(shm, "license.txt", "/both")
    original = path.read_bytes()
    gz = write_sidecar(path, "gzip", newer_by=1).read_bytes()
    for _ in range(2):
        got = get(shm, url, "gzip")
        assert got.resp.body == gz
        assert got.note == "sidecar", got
    _, up = miss_then_upgrade(shm, url, "zstd", original)  # no .zst: the cache
    assert up.note == "cache", up


def test_mc_620_10_cache_off_in_directory(shm):
    url, path = copy_of(shm, "page.html", "/nocache")
    original = path.read_bytes()
    sizes = set()
    for _ in range(3):
        got = get(shm, url, "zstd")
        sizes.add(check_body(got, "zstd", original))
        assert got.note == "live"
        time.sleep(0.3)
    assert len(sizes) == 1


def test_mc_620_11_concurrent_first_requests(shm):
    """40 clients ask for one new file at once, in every encoding: every body is right."""
    url, path = copy_of(shm, "page.html")
    original = path.read_bytes()
    jobs = [CODINGS[i % 3] for i in range(40)]
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda c: (c, get(shm, url, c)), jobs))
    for c, got in results:
        check_body(got, c, original)
        assert got.note in ("live", "cache"), got


# ---- stores that are down

@pytest.mark.parametrize("kind", ["memcache", "redis"])
def test_mc_620_12_store_not_listening(env, make_server, log_allow, kind):
    """Nothing listens on the store's port: every request is live and correct; MC00040 at most
    once per child process."""
    log_allow.extend([STORE_DOWN, PROVIDER_ERRORS])
    srv = make_server(f"cache-down-{kind}", site_template=None,
                      extra_conf=site(dead_store_spec(kind)), extra_modules=store_module(kind),
                      htdocs_copies=[(d, "static") for d in DIRS])
    srv.store_kind = kind
    srv.start()
    url, path = copy_of(srv, "page.html")
    original = path.read_bytes()
    t0 = time.monotonic()
    for i in range(12):
        coding = CODINGS[i % 3]
        got = get(srv, url, coding)
        check_body(got, coding, original)
        assert got.note == "live", got
    assert time.monotonic() - t0 < 10, "a down store slows every request"
    lines = poll_until(lambda: log_lines_matching(srv, STORE_DOWN), timeout=2)
    assert lines, "no MC00040 line for a store that is down"
    pids = [pid_of_log_line(l) for l in lines]
    assert len(pids) == len(set(pids)), "MC00040 more than once per process:\n" + "\n".join(lines)


@pytest.mark.parametrize("kind", ["memcache", "redis"])
def test_mc_620_13_store_killed_mid_test(env, make_server, log_allow, kind):
    """The store dies after serving hits: requests go on, correct: the entry the child verified
    and keeps in its tier (MultiCompressCacheLocal) is still a hit, the rest is live."""
    log_allow.extend([STORE_DOWN, PROVIDER_ERRORS])
    store = StoreProcess(kind).start()
    srv = None
    try:
        srv = make_server(f"cache-kill-{kind}", site_template=None, extra_conf=site(store.spec),
                          extra_modules=store_module(kind), mpm_conf=ONE_CHILD,
                          htdocs_copies=[(d, "static") for d in DIRS])
        srv.store_kind = kind
        srv.store = store
        srv.start()
        url, path = copy_of(srv, "page.html")
        original = path.read_bytes()
        ref = reference(srv, url)
        _, up = miss_then_upgrade(srv, url, "zstd", original)
        check_hit(up, ref, "zstd", original)
        assert store.item_count() >= 1
        store.kill()
        for i in range(9):
            coding = CODINGS[i % 3]
            got = get(srv, url, coding)
            check_body(got, coding, original)
            if coding == "zstd":
                assert got.note == "cache" and got.resp.body == up.resp.body, got
            else:
                assert got.note == "live", got
        lines = poll_until(lambda: log_lines_matching(srv, STORE_DOWN), timeout=2)
        assert lines, "no MC00040 line after the store died"
        pids = [pid_of_log_line(l) for l in lines]
        assert len(pids) == len(set(pids)), "\n".join(lines)
    finally:
        if srv is not None:
            srv.stop()
        store.cleanup()


# ---- a fleet: two servers, one store

@pytest.mark.parametrize("kind", ["memcache", "redis"])
def test_mc_620_14_two_servers_share_one_store(env, make_server, kind):
    """Server B's first request of a file that server A upgraded is a hit (same path, same
    file), so a fleet compresses each file once."""
    store = StoreProcess(kind).start()
    a = b = None
    try:
        # One site behind one name: the servers' ServerName (with the public port) is the same,
        # so are their cache keys.
        fleet_name = "ServerName www.fleet.test:80\n"
        a = make_server(f"fleet-a-{kind}", site_template=None,
                        extra_conf=fleet_name + site(store.spec),
                        extra_modules=store_module(kind),
                        htdocs_copies=[(d, "static") for d in DIRS])
        a.store_kind, a.store = kind, store
        a.start()
        # B serves A's directory (one file, one key)
        b = make_server(f"fleet-b-{kind}", site_template=None,
                        extra_conf=fleet_name + site(store.spec, docs=str(a.htdocs)),
                        extra_modules=store_module(kind))
        b.store_kind, b.store = kind, store
        b.start()
        url, path = copy_of(a, "data.json")
        original = path.read_bytes()
        ref = reference(b, url)
        _, up = miss_then_upgrade(a, url, "br", original)
        got = get(b, url, "br")
        check_hit(got, ref, "br", original)
        assert got.resp.body == up.resp.body
    finally:
        # the servers first: an upgrade still running must not find the store gone
        for s in (b, a):
            if s is not None:
                s.stop()
        store.cleanup()


@pytest.mark.parametrize("kind", ["memcache", "redis"])
def test_mc_620_15_store_down_logs_do_not_grow_with_requests(env, make_server, log_allow, kind):
    """Issue 6: a store that is down means live compression "with one log line". Whatever the
    store's own module logs for the first failure, more requests must not add more lines (a busy
    server would otherwise write two [crit]/[error] lines per request). One child: the line is
    one per process, and with two a loaded machine may send the whole first burst to one of
    them, so the other's first line would land in the second burst."""
    log_allow.extend([STORE_DOWN, PROVIDER_ERRORS])
    srv = make_server(f"cache-quiet-{kind}", site_template=None,
                      extra_conf=site(dead_store_spec(kind)), extra_modules=store_module(kind),
                      htdocs_copies=[(d, "static") for d in DIRS], mpm_conf=ONE_CHILD)
    srv.store_kind = kind
    srv.start()
    url, path = copy_of(srv, "page.html")
    original = path.read_bytes()

    def burst():
        for i in range(12):
            check_body(get(srv, url, CODINGS[i % 3]), CODINGS[i % 3], original)
        time.sleep(0.3)  # let the log lines land
        return [l for l in srv.log_lines() if LEVEL_RE.search(l)]

    first = burst()
    second = burst()
    assert first, "nothing logged for a store that is down"
    new = second[len(first):]
    assert not new, (f"{len(new)} more [warn]+ lines for 12 more requests "
                     f"(first burst: {len(first)}):\n" + "\n".join(new[:6]))


def _cpu_seconds(pids) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime + stime
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("kind", ["memcache", "redis"])
def test_mc_620_16_no_strong_copies_for_a_store_that_is_down(env, make_server, log_allow, kind):
    """With the store down nothing can be kept, so the worker must not make br 11 / zstd 19
    copies that are thrown away (each miss would cost a strong compression in the background).
    Measured as the children's CPU time (their own, whatever else runs on the machine): 12 live
    requests of page.html (85 KB) take ~0.02 s; with strong copies made, ~0.5 s."""
    log_allow.extend([STORE_DOWN, PROVIDER_ERRORS])
    srv = make_server(f"cache-cpu-{kind}", site_template=None,
                      extra_conf=site(dead_store_spec(kind)), extra_modules=store_module(kind),
                      htdocs_copies=[(d, "static") for d in DIRS])
    srv.store_kind = kind
    srv.start()
    kids = srv.child_pids()

    def cpu_for_12(prefix: str, settle: float) -> float:
        url, path = copy_of(srv, "page.html", prefix)
        original = path.read_bytes()
        before = _cpu_seconds(kids)
        for i in range(12):
            check_body(get(srv, url, CODINGS[i % 3]), CODINGS[i % 3], original)
        time.sleep(settle)  # the worker, if it runs, is done by then
        return _cpu_seconds(kids) - before

    live = cpu_for_12("/nocache", 0.2)
    used = cpu_for_12("/c", 2.0)
    upgrades = log_lines_matching(srv, r"upgraded to")
    assert used < 2 * live + 0.15, (
        f"{used:.2f} s of CPU for 12 requests with the store down, {live:.2f} s without the "
        f"cache; {len(upgrades)} 'upgraded' trace lines")


def test_mc_620_17_stop_does_not_wait_for_an_upgrade(env, make_server):
    """A child exits at once even while its worker makes a strong copy of a large file (br 11
    of 3 MB takes ~7 s): the running compression is cancelled. Before, the child waited for it
    and httpd's parent escalated to SIGKILL after 3 s (AH00276/AH00277)."""
    srv = make_server("cache-stop", site_template=None, extra_conf=site(None),
                      extra_modules=store_module("shmcb"),
                      htdocs_copies=[(d, "static") for d in DIRS])
    srv.start()
    lines = (srv.env.src_dir / "htdocs" / "static" / "page.html").read_bytes().splitlines(True)
    rng = random.Random(7)
    big = bytearray()
    while len(big) < 3_000_000:
        big += b"%d " % rng.randrange(10**6) + rng.choice(lines)
    write_file(srv.htdocs / "cache" / "big.txt", bytes(big), mtime=time.time() - 1000)
    miss = get(srv, "/c/big.txt", "br")
    check_body(miss, "br", bytes(big))
    assert miss.note == "live", miss
    assert poll_until(lambda: log_lines_matching(srv, r"cache: stored br at level"), timeout=5)
    time.sleep(0.5)  # the worker has taken the job: br 11 is running
    assert not log_lines_matching(srv, r"upgraded to br"), "the upgrade finished too soon"
    mark = srv.log_size()
    t0 = time.monotonic()
    srv.stop()
    took = time.monotonic() - t0
    escalated = log_lines_matching(srv, r"AH0027[4-7]", mark)
    assert took < 2.5 and not escalated, f"stop took {took:.1f} s; {escalated}"
