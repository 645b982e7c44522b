# SPDX-License-Identifier: Apache-2.0
"""MultiCompressCache entries are verified before a byte is sent.

memcached and redis are shared by a fleet and have no authentication by default, so the store
may hold anything under the module's key: an entry cut short, a flipped byte, another file's or
encoding's entry, a forgery, garbage. Each test fills an entry through a request, then writes a
bad value under the same key directly in the store (memcached text protocol, redis RESP, from
Python), and checks that the next response is a full 200 compressed live from the file (source
note "live"), that the live response stores a good entry again (the next request is a hit), and
that the error_log has exactly one MC00120 warning per kind of bad entry (one child, so one
process logs). With MultiCompressCacheSecret on two servers that share a store, an entry one
writes is a hit on the other, and an entry without a valid HMAC is refused.

Entry layout (mod_multicompress/core/include/mc/cache_entry.h): "MCE", version 1, flags
(bit 0: MAC), coding, level, key length K, then little-endian u64 body length, file size,
mtime (us), inode; the key; the body; CRC-32 of all that; HMAC-SHA256 when a secret is set.
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import hmac
import os
import random
import re
import time
from pathlib import Path

import pytest

from mc_client import assert_vary_once
from mc_decode import decode
from mc_entries import make_entry, parse_entry, store_get, store_key, store_keys, store_set
from mc_process import free_port
from mc_server import HttpdServer
from mc_stores import (SOURCE_LOG_CONF, Sourced, StoreProcess, copy_static, get,
                       log_lines_matching, poll_until, set_mtime, write_file)

STORES = ("memcache", "redis")
BAD_ENTRY = "MC00120"
# what mod_socache_memcache / mod_socache_redis log for a value larger than the read buffer
PROVIDER_OVERFLOW = r"AH00792|AH03480"
ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")
SECRET = b"0123456789abcdef0123456789abcdef-fleet-secret"

# Cache levels below the live ones: no upgrade worker rewrites an entry under the test's feet.
# These tests check what a read from the store verifies: each child's tier of entries it verified
# already (MultiCompressCacheLocal) would keep serving the copy it checked at the first hit and
# never read the value written over it, so it is off here (test_622 checks that only verified
# entries enter the tier).
SITE = SOURCE_LOG_CONF + """
MultiCompressCache On
MultiCompressCacheStore @SPEC@
MultiCompressCacheLocal Off
@SECRET_LINE@
Alias /c "@DOCS@/cache"
<Directory "@DOCS@/cache">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCacheLevel br 1
    MultiCompressCacheLevel zstd 1
    MultiCompressCacheLevel gzip 1
</Directory>
"""


# ---------------------------------------------------------------------------------------------
# Servers and checks

@pytest.fixture(scope="module", params=STORES)
def store(request):
    s = StoreProcess(request.param).start()
    try:
        yield s
    finally:
        s.cleanup()


def site(spec: str, secret_file: Path | None = None, docs: str = "@HTDOCS@") -> str:
    line = f'MultiCompressCacheSecret "{secret_file}"' if secret_file else ""
    return (SITE.replace("@SPEC@", spec).replace("@SECRET_LINE@", line)
            .replace("@DOCS@", docs))


# The servers of a fleet have one ServerName (with the public port): their cache keys are the
# same (an entry is bound to its virtual host).
FLEET_NAME = ("www.fleet.test", 80)


def server(make_server, store: StoreProcess, name: str, secret_file: Path | None = None,
           docs: str | None = None, fleet: bool = False) -> HttpdServer:
    kw = {} if docs else {"htdocs_copies": [("cache", "static")]}
    conf = site(store.spec, secret_file, docs or "@HTDOCS@")
    if fleet:
        conf = f"ServerName {FLEET_NAME[0]}:{FLEET_NAME[1]}\n" + conf
    srv = make_server(f"{name}-{store.kind}", site_template=None, extra_conf=conf,
                      extra_modules=[f"socache_{store.kind}"], mpm_conf=ONE_CHILD, **kw)
    srv.start()
    srv.key_server = FLEET_NAME if fleet else ("127.0.0.1", srv.port)
    return srv


def write_secret(tmp_path: Path, data: bytes = SECRET, mode: int = 0o600) -> Path:
    p = tmp_path / f"secret-{len(list(tmp_path.iterdir()))}"
    p.write_bytes(data)
    os.chmod(p, mode)
    return p


def check_live(got: Sourced, coding: str, original: bytes) -> None:
    """A full 200, compressed live from the file: never the bad entry."""
    r = got.resp
    assert r.status == 200, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert decode(r.body, coding) == original, "the body does not decode to the file"
    assert r.header_all("Content-Length") in ([], [str(len(r.body))]), r
    assert_vary_once(r)
    assert got.note == "live", f"source {got.note!r}: the store's value was used"


def check_hit(got: Sourced, coding: str, original: bytes) -> None:
    r = got.resp
    assert r.status == 200, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert decode(r.body, coding) == original
    assert got.note == "cache", f"source {got.note!r}, expected a cache hit"


def fill(srv: HttpdServer, store: StoreProcess, url: str, coding: str, original: bytes,
         path: Path) -> tuple[bytes, bytes]:
    """Requests a file nobody asked for yet; returns (store key, the entry stored for it)."""
    name, port = srv.key_server
    key = store_key(store, path, coding, port=port, server_name=name)
    assert store_get(store, key) is None, "an entry before the first request"
    check_live(get(srv, url, coding), coding, original)
    value = poll_until(lambda: store_get(store, key), timeout=5)
    assert value, (f"nothing stored under {key!r}; keys in {store.kind}: "
                   f"{sorted(store_keys(store))[:10]}")
    check_hit(get(srv, url, coding), coding, original)
    return key, value


def tamper(srv, store, key: bytes, bad: bytes, url: str, coding: str, original: bytes) -> None:
    """Stores `bad` under `key`; the next response must be live and right, and must store a
    good entry again (the request after it is a hit)."""
    store_set(store, key, bad)
    check_live(get(srv, url, coding), coding, original)
    refilled = poll_until(lambda: (v := store_get(store, key)) is not None and v != bad and v,
                          timeout=5)
    assert refilled, f"no good entry stored again after {bad[:24]!r}..."
    check_hit(get(srv, url, coding), coding, original)


def bad_entry_lines(srv: HttpdServer) -> list[str]:
    return poll_until(lambda: log_lines_matching(srv, BAD_ENTRY), timeout=1) or []


def assert_logged_once_per_kind(srv: HttpdServer, kinds: set[str]) -> None:
    lines = bad_entry_lines(srv)
    seen: dict[str, int] = {}
    for line in lines:
        m = re.search(r"\(([a-zA-Z ]+): ", line)
        assert m, line
        seen[m.group(1)] = seen.get(m.group(1), 0) + 1
    assert seen == {k: 1 for k in kinds}, "MC00120 lines:\n" + "\n".join(lines)
    assert all("[warn]" in l or ":warn]" in l for l in lines), lines


def allow(log_allow, *kinds: str) -> None:
    log_allow.extend(rf"{BAD_ENTRY}: .*\({re.escape(k)}: " for k in kinds)


def new_file(srv: HttpdServer, name: str = "page.html") -> tuple[str, bytes, Path]:
    url, path = copy_static(srv, name, "/c", "cache")
    return url, path.read_bytes(), path


# ---------------------------------------------------------------------------------------------
# Tests

def test_mc_625_01_entry_cut_short(make_server, log_allow, store):
    """An entry cut short at any length (a partial write, an evicted chunk) is a miss. Before,
    a cut inside the body was served as a 200 whose body does not decode."""
    allow(log_allow, "truncated")
    srv = server(make_server, store, "integrity-cut")
    for coding in ("br", "gzip"):
        url, original, path = new_file(srv)
        key, good = fill(srv, store, url, coding, original, path)
        for n in (len(good) - 1, len(good) - 4, len(good) // 2, 60, 39, 5, 0):
            tamper(srv, store, key, good[:n], url, coding, original)
    assert_logged_once_per_kind(srv, {"truncated"})


def test_mc_625_02_flipped_byte(make_server, log_allow, store):
    """One byte flipped, in the body or the header: the CRC-32 no longer matches."""
    allow(log_allow, "checksum mismatch")
    srv = server(make_server, store, "integrity-flip")
    url, original, path = new_file(srv)
    key, good = fill(srv, store, url, "zstd", original, path)
    # in the body (the key takes bytes 40-83), in the CRC, and the level in the header
    for at in (100, len(good) // 2, len(good) - 5, len(good) - 1, 6):
        bad = bytearray(good)
        bad[at] ^= 0x20
        tamper(srv, store, key, bytes(bad), url, "zstd", original)
    assert_logged_once_per_kind(srv, {"checksum mismatch"})


def test_mc_625_03_entry_of_another_file_encoding_or_version(make_server, log_allow, store):
    """An intact entry under the wrong key: another file's, another encoding's, or this file's
    before it was touched. Before, the other file's body was sent as this one."""
    allow(log_allow, "identity mismatch")
    srv = server(make_server, store, "integrity-ident")
    url, original, path = new_file(srv)
    other_url, other_original, other_path = new_file(srv, "style.css")
    key, _ = fill(srv, store, url, "br", original, path)
    _, other_br = fill(srv, store, other_url, "br", other_original, other_path)
    _, zstd_entry = fill(srv, store, url, "zstd", original, path)
    tamper(srv, store, key, other_br, url, "br", original)
    tamper(srv, store, key, zstd_entry, url, "br", original)
    # this file's entry from before a touch, under the key of the file as it is now
    old_entry = store_get(store, key)
    set_mtime(path, path.stat().st_mtime + 5)
    new_key, _ = fill(srv, store, url, "br", original, path)
    assert new_key != key
    tamper(srv, store, new_key, old_entry, url, "br", original)
    assert_logged_once_per_kind(srv, {"identity mismatch"})


def test_mc_625_04_forged_entries(make_server, log_allow, store):
    """Forgeries with a header that looks right: the format of the module before this check
    ("MC1", level, coding, body), and an entry copied from the store with another body under the
    old CRC. Before, the first was sent as the file."""
    allow(log_allow, "not ours", "checksum mismatch")
    srv = server(make_server, store, "integrity-forge")
    url, original, path = new_file(srv)
    key, good = fill(srv, store, url, "br", original, path)
    import brotli
    foreign = brotli.compress(b"<html>forged</html>")
    tamper(srv, store, key, b"MC1\x04\x03" + foreign, url, "br", original)
    tamper(srv, store, key, make_entry(parse_entry(good), foreign, fix_crc=False), url, "br",
           original)
    assert_logged_once_per_kind(srv, {"not ours", "checksum mismatch"})


def test_mc_625_05_garbage_and_trailing_bytes(make_server, log_allow, store):
    """Garbage (an empty value is a cut-short entry), a good entry with bytes appended, and a
    value larger than any entry of this file can be (the store's module logs that read as an
    overflow itself)."""
    allow(log_allow, "not ours", "truncated", "length mismatch")
    log_allow.append(PROVIDER_OVERFLOW)
    srv = server(make_server, store, "integrity-garbage")
    url, original, path = new_file(srv)
    key, good = fill(srv, store, url, "gzip", original, path)
    rng = random.Random(625)
    for n in (1, 64, 5000):
        tamper(srv, store, key, b"\xd1" + rng.randbytes(n - 1), url, "gzip", original)
    tamper(srv, store, key, gzip.compress(original), url, "gzip", original)  # no header at all
    tamper(srv, store, key, b"", url, "gzip", original)
    tamper(srv, store, key, good + b"\0", url, "gzip", original)
    tamper(srv, store, key, good + good, url, "gzip", original)
    tamper(srv, store, key, b"MCE\x01" + rng.randbytes(2 * len(original)), url, "gzip", original)
    assert_logged_once_per_kind(srv, {"not ours", "truncated", "length mismatch"})


def test_mc_625_08_large_entry_is_a_hit(make_server, store):
    """An entry over 64 KiB is read whole and is a hit. Before, the module read 64 KiB first:
    memcache and redis failed that read (AH00792 / AH03480, then MC00040 and the store left
    alone for 30 s), so large bodies were compressed live on every request."""
    srv = server(make_server, store, "integrity-large")
    data = base64.b64encode(random.Random(8).randbytes(150_000)) + b"\n"
    path = write_file(srv.htdocs / "cache" / "large.txt", data, mtime=time.time() - 1000)
    key, good = fill(srv, store, "/c/large.txt", "zstd", data, path)
    assert len(good) > 100_000, len(good)
    for _ in range(3):
        check_hit(get(srv, "/c/large.txt", "zstd"), "zstd", data)


def test_mc_625_06_fleet_secret(make_server, log_allow, store, tmp_path):
    """Two servers with one MultiCompressCacheSecret share a store: an entry one writes (with
    an HMAC-SHA256) is a hit on the other. A forged entry that is otherwise perfect (right
    identity, right CRC) but has no MAC, or a MAC made with another secret, is refused by both."""
    allow(log_allow, "bad MAC")
    secret = write_secret(tmp_path)
    a = server(make_server, store, "fleet-secret-a", secret, fleet=True)
    b = server(make_server, store, "fleet-secret-b", write_secret(tmp_path),
               docs=str(a.htdocs), fleet=True)
    url, original, path = new_file(a)
    key, good = fill(a, store, url, "br", original, path)
    e = parse_entry(good)
    assert e["flags"] == 1 and len(e["trailer"]) == 4 + 32, "no HMAC on the entry"
    assert hmac.compare_digest(e["trailer"][4:],
                               hmac.new(SECRET, good[:-32], hashlib.sha256).digest())
    hit = get(b, url, "br")
    check_hit(hit, "br", original)
    import brotli
    foreign = brotli.compress(b"<html>forged</html>")
    for srv in (b, a):
        tamper(srv, store, key, make_entry(e, foreign), url, "br", original)
        tamper(srv, store, key, make_entry(e, foreign, secret=b"another fleet's secret!"), url,
               "br", original)
    for srv in (a, b):
        assert_logged_once_per_kind(srv, {"bad MAC"})


SECRET_ERRORS = {
    "missing": (None, 0o600, "cannot open"),
    "short": (b"tooshort\n", 0o600, "bytes; a secret has"),
    "world-readable": (SECRET, 0o644, "other users"),
}


@pytest.mark.parametrize("case", [*SECRET_ERRORS, "virtual-host", "valid"])
def test_mc_625_07_secret_file_checked_at_startup(env, tmp_path, case):
    """A secret file that cannot be used stops httpd at startup with a message naming the
    directive; so does the directive inside a <VirtualHost> (one secret per server)."""
    if case in SECRET_ERRORS:
        data, mode, want = SECRET_ERRORS[case]
        path = tmp_path / "secret"
        if data is not None:
            path.write_bytes(data)
            os.chmod(path, mode)
        conf = f'MultiCompressCache On\nMultiCompressCacheSecret "{path}"\n'
    elif case == "virtual-host":
        path = write_secret(tmp_path)
        want = "cannot occur within <VirtualHost>"
        conf = (f'MultiCompressCache On\n<VirtualHost 127.0.0.1:{free_port()}>\n'
                f'    MultiCompressCacheSecret "{path}"\n</VirtualHost>\n')
    else:
        path = write_secret(tmp_path, SECRET + b"\n")
        want = None
        conf = f'MultiCompressCache On\nMultiCompressCacheSecret "{path}"\n'
    srv = HttpdServer(env, f"secret-{case}", site_template=None, extra_conf=conf, trace=False)
    srv.port = free_port()
    srv.render()
    p = srv.configtest()
    out = p.stdout + p.stderr
    if want is None:
        assert p.returncode == 0 and "Syntax OK" in out, out
    else:
        assert p.returncode != 0, out
        assert "MultiCompressCacheSecret" in out and want in out, out
