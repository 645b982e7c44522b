# SPDX-License-Identifier: Apache-2.0
"""Shared-dictionary compression, RFC 9842 (issue 13): `MultiCompressUseAsDictionary`, the
coding dcz, the store.

A response in the scope of MultiCompressUseAsDictionary carries Use-As-Dictionary and is kept
by SHA-256; a later request that names it (Available-Dictionary) and accepts dcz gets the
skippable-frame header (5e 2a 4d 18 20 00 00 00 + hash) and a zstd frame against it, which must
decode with real decoders nobody here wrote: python3-zstandard with a raw-content dictionary and
the `zstd` CLI with --patch-from. Unknown, malformed or cross-origin dictionaries mean the normal
negotiation (a dictionary is kept to the virtual host that offered it: test_496). Static files, a handler's streamed body (mod_mctest) and a CGI that
flushes; HEAD, 304, Range; MultiCompressCache entries per dictionary; a fleet of two servers
sharing a real memcached (a dictionary learned by one is used by the other, also after the old
file was deleted); a tampered store entry; `dcb` refused at startup with libbrotli 1.0.9.
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import zstandard

from mc_env import HttpdServer, Response, assert_vary_once, decode, mctest_body, request
from mc_stores import StoreProcess

DCZ_MAGIC = bytes.fromhex("5e2a4d1820000000")
AE = "dcz, zstd, br, gzip"

SITE = """
MultiCompressEncodings dcz zstd br gzip
Alias /d "@HTDOCS@/dict"
<Directory "@HTDOCS@/dict">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS text/plain application/javascript text/javascript text/css text/html
</Directory>
<LocationMatch "^/d/app\\.v[0-9]+\\.js$">
    MultiCompressUseAsDictionary "/d/app.*.js" dest=script
</LocationMatch>
# a site-wide dictionary for live pages
<Location /d/site-dict.txt>
    MultiCompressUseAsDictionary "/mctest/*" id=site-v1
</Location>
<Location /d/stream-dict.txt>
    MultiCompressUseAsDictionary "/cgi-bin/*"
</Location>
<Location /mctest/>
    MultiCompressEncodings dcz zstd br gzip
</Location>
<Location /d/small-only/>
    MultiCompressUseAsDictionary "/d/small-only/*"
    MultiCompressDictionaryMaxSize 1K
</Location>
<Location /d/off/>
    MultiCompressUseAsDictionary Off
</Location>
Alias /dc "@HTDOCS@/dict-cache"
<Directory "@HTDOCS@/dict-cache">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS application/javascript text/javascript
    MultiCompressCache On
    MultiCompressUseAsDictionary "/dc/lib.*.js"
</Directory>
Alias /ds "@HTDOCS@/dict-static"
<Directory "@HTDOCS@/dict-static">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS application/javascript text/javascript
    MultiCompressStatic On
    MultiCompressUseAsDictionary "/ds/*"
</Directory>
<Location /mc-metrics>
    SetHandler multicompress-metrics
</Location>
@STORE_LINE@
"""


def script(version: int, size: int = 30000) -> bytes:
    """A deterministic JavaScript bundle; versions differ in a few places, as releases do."""
    lines = []
    for i in range(size // 60):
        n = i * 7919 % 10007
        tag = f"v{version}" if i % 97 == 0 else "v1"
        lines.append(f"function f{i}(a){{return a*{n}+{i % 13}; /* {tag} */}}")
    lines.append(f'document.body.dataset.app = "v{version}";')
    return ("\n".join(lines) + "\n").encode()


def available(data: bytes) -> str:
    return ":" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


def dcz_decode(body: bytes, dictionary: bytes) -> bytes:
    """Checks the dcz header and decodes the frame with python3-zstandard (raw content)."""
    assert body[:8] == DCZ_MAGIC, body[:8].hex()
    assert body[8:40] == hashlib.sha256(dictionary).digest()
    d = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    return zstandard.ZstdDecompressor(dict_data=d).decompressobj().decompress(body[40:])


def cli_decode(tmp: Path, body: bytes, dictionary: bytes) -> bytes:
    """The zstd CLI: --patch-from takes the dictionary, the skippable frame is skipped."""
    zstd = shutil.which("zstd")
    assert zstd, "zstd CLI missing (apt-get install zstd)"
    old = tmp / "old.bin"
    old.write_bytes(dictionary)
    src = tmp / "body.zst"
    src.write_bytes(body)
    out = tmp / "out.bin"
    p = subprocess.run([zstd, "-q", "-f", "-d", f"--patch-from={old}", str(src), "-o", str(out)],
                       capture_output=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    return out.read_bytes()


def frame_window(body: bytes) -> int:
    params = zstandard.get_frame_parameters(body[40:])
    return params.window_size


def make_server(env, name: str, store_spec: str | None = None,
                modules: tuple[str, ...] = ()) -> HttpdServer:
    line = f"MultiCompressCacheStore {store_spec}" if store_spec else "# default store: shmcb"
    s = HttpdServer(env, name, extra_conf=SITE.replace("@STORE_LINE@", line),
                    extra_modules=list(modules))
    return s


def populate(srv: HttpdServer) -> dict[str, bytes]:
    d = srv.htdocs / "dict"
    (d / "small-only").mkdir(parents=True, exist_ok=True)
    (d / "off").mkdir(parents=True, exist_ok=True)
    files = {
        "app.v1.js": script(1), "app.v2.js": script(2), "app.v3.js": script(3),
        "site-dict.txt": mctest_body(40000),
        "small-only/big.txt": mctest_body(5000), "small-only/tiny.txt": mctest_body(800),
        "off/app.v9.js": script(9),
    }
    for rel, data in files.items():
        (d / rel).write_bytes(data)
    st = srv.htdocs / "dict-static"
    st.mkdir(parents=True, exist_ok=True)
    for v in (1, 2):
        data = script(v, 40000)
        (st / f"lib.{v}.js").write_bytes(data)
        (st / f"lib.{v}.js.zst").write_bytes(zstandard.ZstdCompressor(level=19).compress(data))
        files[f"ds/lib.{v}.js"] = data
    c = srv.htdocs / "dict-cache"
    c.mkdir(parents=True, exist_ok=True)
    for v in (1, 2):
        (c / f"lib.{v}.js").write_bytes(script(v, 50000))
        files[f"dc/lib.{v}.js"] = (c / f"lib.{v}.js").read_bytes()
    return files


@pytest.fixture(scope="module")
def srv(env):
    s = make_server(env, "dictionary", modules=("socache_shmcb",))
    try:
        s.start()
        s.files = populate(s)
        yield s
    finally:
        s.stop()


def get_as(port: int, path: str, ae: str | None, headers=(), method: str = "GET",
           host: str | None = None) -> Response:
    """request() with a Host of our choosing (http.client sends its own otherwise)."""
    if host is None:
        return request(port, path, ae, headers=headers, method=method)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        if ae is not None:
            conn.putheader("Accept-Encoding", ae)
        for k, v in headers:
            conn.putheader(k, v)
        conn.endheaders()
        resp = conn.getresponse()
        return Response(resp.status, resp.reason, list(resp.getheaders()), resp.read())
    finally:
        conn.close()


def learn(srv, path: str, data: bytes, ae: str = "identity", host: str | None = None) -> None:
    r = get_as(srv.port, path, ae, host=host)
    assert r.status == 200 and r.decoded() == data
    assert r.header("Use-As-Dictionary"), r


def dcz_get(srv, path: str, dictionary: bytes, ae: str = AE, headers=(), method="GET",
            host: str | None = None):
    return get_as(srv.port, path, ae, method=method, host=host,
                  headers=[("Available-Dictionary", available(dictionary)), *headers])


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


# ---- a fleet sharing memcached


# A fleet's sites: each server has them as name-based virtual hosts with the public name and
# port, so every server of the fleet is the same origin for each (whatever port it listens on).
FLEET_SITES = ("www.fleet.test", "evict.fleet.test", "miss.fleet.test", "tamper.fleet.test")
FLEET_VHOSTS = "".join(f"<VirtualHost 127.0.0.1:@PORT@>\n    ServerName {name}:80\n"
                       f"</VirtualHost>\n" for name in FLEET_SITES)


def fleet_origin(host: str) -> str:
    return f"http://{host}:80"


@pytest.fixture(scope="module")
def fleet(env):
    store = StoreProcess("memcache").start()
    servers = []
    try:
        for name in ("fleet-a", "fleet-b"):
            s = make_server(env, name, store.spec, modules=("socache_memcache",))
            s.extra_conf += FLEET_VHOSTS
            s.start()
            s.files = populate(s)
            servers.append(s)
        yield store, servers
    finally:
        for s in servers:
            s.stop()
        store.cleanup()


def test_mc_492_09_fleet_shares_dictionaries(fleet, tmp_path):
    _, (a, b) = fleet
    host = "www.fleet.test"
    v1, v2 = a.files["app.v1.js"], a.files["app.v2.js"]
    learn(a, "/d/app.v1.js", v1, host="www.fleet.test")
    # b never served v1; and a deploy removed the old file everywhere
    for s in (a, b):
        (s.htdocs / "dict" / "app.v1.js").unlink()
    r = dcz_get(b, "/d/app.v2.js", v1, host=host)
    assert r.content_encoding == "dcz", r
    assert dcz_decode(r.body, v1) == v2 and cli_decode(tmp_path, r.body, v1) == v2
    # a large dictionary goes to the store in chunks (memcached keeps items under 1 MB)
    big = mctest_body(3 << 20)
    (a.htdocs / "dict" / "site-dict.txt").write_bytes(big)
    learn(a, "/d/site-dict.txt", big, host="www.fleet.test")
    live = dcz_get(b, "/mctest/page?size=200000", big, host=host)
    assert live.content_encoding == "dcz" and dcz_decode(live.body, big) == mctest_body(200000)


def test_mc_492_14_evicted_from_the_store(fleet):
    """A dictionary the store lost (evicted) and the other server never saw: the normal
    negotiation."""
    store, (a, b) = fleet
    host = "evict.fleet.test"
    data = a.files["app.v3.js"]
    (a.htdocs / "dict" / "app.v3.js").write_bytes(data)
    learn(a, "/d/app.v3.js", data, host=host)
    origin_tag = hashlib.sha256(fleet_origin(host).encode()).hexdigest()[:16]
    head = ("mcd1-" + hashlib.sha256(data).hexdigest() + "@" + origin_tag).encode()
    key = b"mc-cache:" + head.hex().encode()
    assert memcache_cmd(store.port, b"delete %s\r\n" % key).startswith(b"DELETED")
    r = dcz_get(b, "/d/app.v2.js", data, host=host)
    assert r.status == 200 and r.content_encoding == "zstd", r
    assert decode(r.body, "zstd") == b.files["app.v2.js"]


def memcache_gets(store) -> int:
    for line in memcache_cmd(store.port, b"stats\r\n").decode().splitlines():
        if line.startswith("STAT cmd_get "):
            return int(line.split()[2])
    raise AssertionError("no cmd_get in memcached's stats")


def test_mc_492_16_unknown_hashes_spare_the_store(fleet):
    """A client that names a dictionary nobody offered, again and again: the store is asked
    once per child, not once per request (misses are remembered for a few seconds)."""
    store, (_, b) = fleet
    before = memcache_gets(store)
    for _ in range(12):
        r = dcz_get(b, "/d/app.v2.js", b"never offered anywhere", host="miss.fleet.test")
        assert r.status == 200 and r.content_encoding == "zstd"
    asked = memcache_gets(store) - before
    assert 1 <= asked <= len(b.child_pids()), (asked, b.child_pids())


def memcache_cmd(port: int, line: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(line)
        return c.recv(4096)


@pytest.mark.log_allow(r"MC00270")
def test_mc_492_10_tampered_store_entry(fleet):
    store, (a, b) = fleet
    host = "tamper.fleet.test"
    data = a.files["app.v3.js"]
    (a.htdocs / "dict" / "app.v3.js").write_bytes(data)
    learn(a, "/d/app.v3.js", data, host="tamper.fleet.test")
    # mod_socache_memcache's key: the module's namespace ("mc-cache"), a colon, the key in hex
    key = b"mc-cache:" + ("mcd1-" + hashlib.sha256(data).hexdigest() + "-0").encode().hex().encode()
    assert memcache_cmd(store.port, b"get %s\r\n" % key).startswith(b"VALUE"), "no such entry"
    evil = b"X" * 1000
    # memcached's text protocol: replace the first chunk with other bytes
    assert memcache_cmd(store.port, b"set %s 0 0 %d\r\n%s\r\n" % (key, len(evil), evil)) \
        .startswith(b"STORED")
    # (app.v1.js was deleted by the deploy of test 09)
    r = dcz_get(b, "/d/app.v2.js", data, host=host)
    assert r.status == 200 and r.content_encoding != "dcz"
    assert decode(r.body, r.content_encoding) == b.files["app.v2.js"]
    assert "MC00270" in b.error_log.read_text()


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
