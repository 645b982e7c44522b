# SPDX-License-Identifier: Apache-2.0
"""Hits sent as httpd's core sends a file: sidecars opened as the default handler opens a file, so
`EnableSendfile Off` (httpd's default) sends a sidecar without sendfile and `On` with it, and
read, never mapped, where sendfile does not apply (TLS); a sidecar under one bucket buffer (8000
bytes) is read whole in one read() and written with the headers, with either setting. Where the
child's tier (MultiCompressCacheLocal) would keep it, a sidecar of up to 256 KiB is read whole
once and kept, and later hits are sent from memory, never with sendfile. Observed
through the core output filter's own trace (`LogLevel core:trace6` logs each
`sendfile_nonblocking` call with the bytes sent), the same signal for a plain file, which the test
checks first. Over TLS + HTTP/2: sidecars
and hits from each child's tier of verified cache entries (a heap bucket over the tier's copy)
go through mod_ssl and mod_http2 whole.
"""
from __future__ import annotations

import random
import re
import time
from pathlib import Path

from mc_client import request
from mc_decode import decode
from mc_stores import set_mtime, write_sidecar
from mc_tls import TlsServer, curl

ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")
LOCAL_HIT = 'multicompress_cache_events_total{event="local_hit"}'


def local_hits(srv) -> float:
    r = request(srv.port, "/metrics", None)
    assert r.status == 200, r
    m = re.search(r'^multicompress_cache_events_total\{event="local_hit"\} ([0-9.]+)$',
                  r.body.decode(), re.M)
    return float(m.group(1)) if m else 0.0


SENDFILE_SITE = """
LogLevel notice core:trace6 multicompress:trace1
MultiCompressStatic On
# no tier: every hit opens its sidecar and sends it as the core sends a file
MultiCompressCacheLocal Off
Alias /on "@HTDOCS@/sf-on"
Alias /off "@HTDOCS@/sf-off"
<Directory "@HTDOCS@/sf-on">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    EnableSendfile On
</Directory>
<Directory "@HTDOCS@/sf-off">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    EnableSendfile Off
</Directory>
"""


def sendfile_calls(srv, since: int, nbytes: int) -> int:
    """The core output filter's sendfile calls since log offset `since` that sent `nbytes`."""
    rx = re.compile(rf"sendfile_nonblocking: {nbytes}/{nbytes}\b")
    return sum(1 for line in srv.log_lines(since) if rx.search(line))


def big_page(path: Path) -> None:
    """An HTML page whose br sidecar is well over one bucket buffer (8000 bytes): hex digits of a
    seeded random stream, which brotli cannot shrink below half."""
    rnd = random.Random(612)
    path.write_text("<html><body><pre>\n" +
                    "\n".join(f"{rnd.getrandbits(256):064x}" for _ in range(600)) +
                    "\n</pre></body></html>\n")
    set_mtime(path, time.time() - 100)


def test_mc_612_01_sidecar_sendfile_follows_enable_sendfile(make_server):
    srv = make_server("sf", site_template=None, extra_conf=SENDFILE_SITE, trace=False,
                      htdocs_copies=[("sf-on", "static"), ("sf-off", "static")]).start()
    sizes = {}
    for d in ("sf-on", "sf-off"):
        big_page(srv.htdocs / d / "big.html")
        for name in ("page.html", "big.html"):
            path = srv.htdocs / d / name
            write_sidecar(path, "br", newer_by=1)
            sizes[d, name] = (path.stat().st_size, Path(str(path) + ".br").stat().st_size)
    assert sizes["sf-on", "page.html"][1] < 8000 < sizes["sf-on", "big.html"][1], sizes
    for (d, name), (plain_size, side_size) in sizes.items():
        prefix = "/on" if d == "sf-on" else "/off"
        # the signal itself: plain Apache's own file response
        mark = srv.log_size()
        r = request(srv.port, f"{prefix}/{name}", None)
        assert r.status == 200 and len(r.body) == plain_size
        time.sleep(0.3)
        assert sendfile_calls(srv, mark, plain_size) == (1 if d == "sf-on" else 0), \
            srv.read_log(mark)[-2000:]
        # the sidecar hit: the same when it is larger than one bucket buffer; a smaller one is
        # read in one read() and written with the headers, whatever EnableSendfile says
        mark = srv.log_size()
        got = request(srv.port, f"{prefix}/{name}", "br")
        assert got.status == 200 and got.content_encoding == "br" and len(got.body) == side_size
        assert decode(got.body, "br") == (srv.htdocs / d / name).read_bytes()
        time.sleep(0.3)
        log = srv.read_log(mark)
        assert "sending sidecar" in log, log[-2000:]
        want = 1 if d == "sf-on" and side_size >= 8000 else 0
        assert sendfile_calls(srv, mark, side_size) == want, \
            f"{d}: sendfile calls for the sidecar's {side_size} bytes:\n{log[-3000:]}"


def test_mc_612_04_sidecar_kept_by_the_tier_is_never_sent_with_sendfile(make_server):
    """With the tier on, a sidecar larger than one bucket buffer is read whole once its body is
    to be sent, kept, and sent from memory afterwards, also where EnableSendfile On applies."""
    conf = SENDFILE_SITE.replace("MultiCompressCacheLocal Off", "MultiCompressCacheLocal 1M")
    srv = make_server("sf-tier", site_template=None, extra_conf=conf, trace=False,
                      htdocs_copies=[("sf-on", "static")], mpm_conf=ONE_CHILD).start()
    path = srv.htdocs / "sf-on" / "big.html"
    big_page(path)
    side = write_sidecar(path, "br", newer_by=1)
    size = side.stat().st_size
    assert 8000 < size < 256 * 1024, size
    for n in range(4):
        mark = srv.log_size()
        got = request(srv.port, "/on/big.html", "br")
        assert got.status == 200 and got.content_encoding == "br" and got.body == side.read_bytes()
        time.sleep(0.3)
        log = srv.read_log(mark)
        how = "read whole" if n == 0 else "kept by the child"
        assert f"sending sidecar {side} ({how})" in log, log[-2000:]
        assert sendfile_calls(srv, mark, size) == 0, log[-3000:]
    assert decode(got.body, "br") == path.read_bytes()
    # a HEAD reads nothing and keeps nothing: a new version is read whole on its first GET
    write_sidecar(path, "br", newer_by=2)
    mark = srv.log_size()
    assert request(srv.port, "/on/big.html", "br", method="HEAD").status == 200
    got = request(srv.port, "/on/big.html", "br")
    assert got.status == 200 and got.body == side.read_bytes()
    time.sleep(0.3)
    log = srv.read_log(mark)
    assert f"sending sidecar {side} (as a file)" in log and \
        f"sending sidecar {side} (read whole)" in log, log[-2000:]


# ---- over TLS + HTTP/2: a tier hit's bucket goes through mod_ssl and mod_http2 whole

TLS_EXTRA = """
Alias /sf-on "@HTDOCS@/sf-on"
Alias /sf-off "@HTDOCS@/sf-off"
<Location /metrics>
    SetHandler multicompress-metrics
</Location>
<Directory "@HTDOCS@/static">
    MultiCompressCache On
</Directory>
<Directory "@HTDOCS@/sf-on">
    Require all granted
    MultiCompressStatic On
    EnableSendfile On
</Directory>
<Directory "@HTDOCS@/sf-off">
    Require all granted
    MultiCompressStatic On
    EnableSendfile Off
</Directory>
"""


def test_mc_612_02_tier_hits_and_sidecars_over_h2(env, tmp_path):
    srv = TlsServer(env, "tier-h2", extra_conf=TLS_EXTRA, mpm_conf=ONE_CHILD,
                    extra_modules=["socache_shmcb"],
                    htdocs_copies=[("sf-on", "static"), ("sf-off", "static")])
    try:
        srv.start()
        original = (srv.htdocs / "static" / "style.css").read_bytes()
        url = srv.https_url("/static/style.css")
        bodies = []
        for _ in range(40):
            r = curl(url, tmp_path, "--http2", "-H", "Accept-Encoding: br")
            assert r.version == "2" and r.status == 200, r.headers
            assert decode(r.body, "br") == original
            bodies.append(r.body)
            if local_hits(srv) >= 3:
                break
            time.sleep(0.1)
        assert local_hits(srv) >= 3, "no hits from the tier over HTTP/2"
        for d in ("sf-on", "sf-off"):
            page = srv.htdocs / d / "page.html"
            write_sidecar(page, "zstd", newer_by=1)
            r = curl(srv.https_url(f"/{d}/page.html"), tmp_path, "--http2", "-H",
                     "Accept-Encoding: zstd")
            assert r.status == 200 and r.body == Path(str(page) + ".zst").read_bytes(), r.headers
    finally:
        srv.stop()


# ---- over TLS a sidecar larger than one bucket buffer is read whole, in one read()

def test_mc_612_03_sidecar_over_tls_is_read_whole(env, tmp_path):
    """mod_ssl reads every byte of a response, so over TLS (HTTP/2 or HTTP/1.1) a sidecar of
    more than one bucket buffer is read in one read() into memory, whatever EnableSendfile says,
    once its body is to be sent: not for a HEAD nor a 304. Its bytes are the sidecar's. The child
    keeps what it read (MultiCompressCacheLocal): the next request reads nothing."""
    srv = TlsServer(env, "whole-tls",
                    extra_conf=TLS_EXTRA + "\nLogLevel notice multicompress:trace1\n",
                    mpm_conf=ONE_CHILD, htdocs_copies=[("sf-on", "static"), ("sf-off", "static")])
    try:
        srv.start()
        for d in ("sf-on", "sf-off"):
            page = srv.htdocs / d / "big.html"
            big_page(page)
            write_sidecar(page, "zstd", newer_by=1)
            side = Path(str(page) + ".zst").read_bytes()
            assert len(side) > 8000, len(side)
            url = srv.https_url(f"/{d}/big.html")
            for n, proto in enumerate(("--http2", "--http1.1")):
                mark = srv.log_size()
                r = curl(url, tmp_path, proto, "-H", "Accept-Encoding: zstd")
                assert r.status == 200 and r.header("content-encoding") == "zstd", r.headers
                assert r.body == side
                assert decode(r.body, "zstd") == page.read_bytes()
                time.sleep(0.3)
                log = srv.read_log(mark)
                how = "read whole" if n == 0 else "kept by the child"
                assert f"sending sidecar {page}.zst ({how})" in log, (proto, log[-2000:])
                # a HEAD and a 304 read nothing
                mark = srv.log_size()
                h = curl(url, tmp_path, proto, "-I", "-H", "Accept-Encoding: zstd")
                assert h.status == 200, h.headers  # (curl -I writes the head as its body)
                assert h.header("content-length") in (None, str(len(side))), h.headers
                etag = r.header("etag")
                c = curl(url, tmp_path, proto, "-H", "Accept-Encoding: zstd",
                         "-H", f"If-None-Match: {etag}")
                assert c.status == 304 and c.body == b"", c.headers
                time.sleep(0.3)
                log = srv.read_log(mark)
                assert "(read whole)" not in log, (proto, log[-2000:])
    finally:
        srv.stop()
