# SPDX-License-Identifier: Apache-2.0
"""Counters (docs/contract.md "Observing it"): `SetHandler multicompress-metrics` in the
Prometheus text format, a section on /server-status and `MultiCompress` lines in ?auto.

Counts cover every child and thread and survive a graceful restart. A real Prometheus (Debian's
`prometheus`), started by the test on a free port with a scrape config that points at the test
server, scrapes it; its HTTP API must return the module's series with the values the test
caused.
"""
from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

import brotli
import pytest

from mc_bodies import static_file
from mc_client import request
from mc_decode import decode
from mc_process import free_port, stop_process
from mc_server import HttpdServer
from mc_stores import SUFFIX

PROMETHEUS = "/usr/bin/prometheus"

SITE = """
ExtendedStatus On
<Location /server-status>
    SetHandler server-status
</Location>
<Location /metrics>
    SetHandler multicompress-metrics
</Location>
Alias /m "@HTDOCS@/m"
<Directory "@HTDOCS@/m">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
</Directory>
Alias /e "@HTDOCS@/e"
<Directory "@HTDOCS@/e">
    SetOutputFilter MULTICOMPRESS
    ErrorDocument 404 /e/page.html
</Directory>
Alias /side "@HTDOCS@/side"
<Directory "@HTDOCS@/side">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
Alias /cached "@HTDOCS@/cached"
<Directory "@HTDOCS@/cached">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCache On
</Directory>
ScriptAlias /cgi480/ "@HTDOCS@/cgi480/"
<Directory "@HTDOCS@/cgi480">
    Options +ExecCGI
    SetInputFilter DEFLATE
</Directory>
"""

ECHO_CGI = """#!/usr/bin/python3
import sys
data = sys.stdin.buffer.read()
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\n%d\\n" % len(data))
"""

SAMPLE = re.compile(r'^(multicompress_[a-z_]+_total)(\{[^}]*\})? ([0-9.]+)$')
# The gauges (TYPE gauge, no _total): the CPU budget's two, the dictionaries held and the bytes
# of the children's tiers of verified cache entries.
GAUGE = re.compile(r'^(multicompress_(?:budget_cpu_share|budget_step|dictionary_memory_bytes|'
                   r'cache_local_bytes)) ([0-9.]+)$')
# What the gauges say now (not counts: they move with the load, the dictionaries and the entries
# held).
GAUGES = ("multicompress_budget_cpu_share", "multicompress_budget_step",
          "multicompress_dictionary_memory_bytes", "multicompress_cache_local_bytes")


def scrape(srv) -> dict[str, float]:
    r = request(srv.port, "/metrics", None)
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    out: dict[str, float] = {}
    for line in r.body.decode().splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) multicompress_[a-z_]+_total |"
                            r"^# HELP multicompress_(budget_cpu_share|budget_step|"
                            r"dictionary_memory_bytes|cache_local_bytes) |"
                            r"^# TYPE multicompress_(budget_cpu_share|budget_step|"
                            r"dictionary_memory_bytes|cache_local_bytes) gauge$", line), line
            continue
        g = GAUGE.match(line)
        if g:
            out[g.group(1)] = float(g.group(2))
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def responses(enc: str, source: str) -> str:
    return f'multicompress_responses_total{{encoding="{enc}",source="{source}"}}'


def delta(before: dict, after: dict) -> dict[str, float]:
    """What the counts gained; the gauges are not counts (other servers' load moves the budget's,
    dictionaries held move the memory, entries held the tier's bytes)."""
    return {k: after[k] - before.get(k, 0) for k in after
            if after[k] != before.get(k, 0) and k not in GAUGES}


@pytest.fixture(scope="module")
def srv(env):
    s = HttpdServer(env, "metrics", site_template=None, extra_conf=SITE, extra_modules=["status", "socache_shmcb"],
                    htdocs_copies=[("m", "static"), ("side", "static"), ("cached", "static"),
                                   ("cgi480", "static"), ("e", "static")])
    try:
        s.start()
        echo = s.htdocs / "cgi480" / "echo.py"
        echo.write_text(ECHO_CGI)
        echo.chmod(0o755)
        yield s
    finally:
        s.stop()


def wait_counts(srv, want: dict[str, float], before: dict, timeout: float = 5.0) -> dict:
    """Counts are added when a request is logged, just after its response went out."""
    deadline = time.monotonic() + timeout
    while True:
        got = delta(before, scrape(srv))
        if all(got.get(k, 0) == v for k, v in want.items()) or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def test_mc_480_01_live_responses_bytes_and_cpu(srv):
    """Every live response is counted once, by coding, with its bytes in and out."""
    before = scrape(srv)
    page = static_file(srv.env, "page.html")
    sent = {"gzip": 0, "br": 0, "zstd": 0, "deflate": 0}
    for coding in ("gzip", "br", "zstd", "deflate"):
        for _ in range(5):
            r = request(srv.port, "/m/page.html", coding)
            assert r.header("Content-Encoding") == coding
            assert decode(r.body, coding) == page
            sent[coding] += len(r.body)
    want = {responses(c, "live"): 5 for c in sent}
    want.update({f'multicompress_bytes_in_total{{encoding="{c}"}}': 5 * len(page) for c in sent})
    want.update({f'multicompress_bytes_out_total{{encoding="{c}"}}': n for c, n in sent.items()})
    got = wait_counts(srv, want, before)
    for k, v in want.items():
        assert got.get(k) == v, (k, got)
    for c in sent:
        assert got.get(f'multicompress_compress_cpu_seconds_total{{encoding="{c}"}}', 0) > 0


def test_mc_480_02_identity_reasons(srv):
    before = scrape(srv)
    assert request(srv.port, "/m/tiny.html", "gzip").header("Content-Encoding") is None
    assert request(srv.port, "/m/page.html", "identity").header("Content-Encoding") is None
    assert request(srv.port, "/m/page.html", "gzip",
                   headers=[("Range", "bytes=0-99")]).status == 206
    assert request(srv.port, "/m/page.html", "gzip",
                   headers=[("Cache-Control", "no-transform")]).header("Content-Encoding") is None
    want = {
        responses("identity", "identity"): 4,
        'multicompress_identity_responses_total{reason="too_small"}': 1,
        'multicompress_identity_responses_total{reason="not_acceptable"}': 1,
        'multicompress_identity_responses_total{reason="range"}': 1,
        'multicompress_identity_responses_total{reason="no_transform"}': 1,
    }
    got = wait_counts(srv, want, before)
    assert {k: got.get(k) for k in want} == want, got
    # Requests no filter of ours saw (the metrics page itself) are not counted.
    assert set(got) == set(want), got


def test_mc_480_03_sidecar_and_cache_sources(srv):
    page = static_file(srv.env, "page.html")
    side = srv.htdocs / "side" / "page.html"
    br = brotli.compress(page, quality=11)
    Path(str(side) + SUFFIX["br"]).write_bytes(br)
    os.utime(str(side) + SUFFIX["br"], (time.time() + 5, time.time() + 5))
    before = scrape(srv)
    for _ in range(3):
        r = request(srv.port, "/side/page.html", "br")
        assert r.header("Content-Encoding") == "br" and r.body == br
    # First request fills the cache, the next ones are hits.
    for _ in range(4):
        r = request(srv.port, "/cached/page.html", "gzip")
        assert decode(r.body, "gzip") == page
    got = wait_counts(srv, {responses("br", "sidecar"): 3, responses("gzip", "cache"): 3},
                      before)
    assert got.get(responses("br", "sidecar")) == 3, got
    assert got.get('multicompress_bytes_out_total{encoding="br"}') == 3 * len(br), got
    assert got.get(responses("gzip", "live")) == 1, got
    assert got.get(responses("gzip", "cache")) == 3, got
    assert got.get('multicompress_cache_events_total{event="hit"}') == 3, got
    assert got.get('multicompress_cache_events_total{event="miss"}') == 1, got
    assert got.get('multicompress_cache_events_total{event="store"}', 0) >= 1, got


def test_mc_480_09_internal_redirect_counted_once(srv):
    """An ErrorDocument is an internal redirect: log_transaction gets the chain's first request,
    the filters run for the last, and the response is counted once, as the client got it."""
    page = static_file(srv.env, "page.html")
    before = scrape(srv)
    for coding in ("gzip", "identity"):
        r = request(srv.port, "/e/missing.html", coding)
        assert r.status == 404
        enc = r.header("Content-Encoding")
        assert enc == (None if coding == "identity" else coding), enc
        assert (decode(r.body, enc) if enc else r.body) == page
    want = {responses("gzip", "live"): 1, responses("identity", "identity"): 1}
    got = wait_counts(srv, want, before)
    counted = {k: v for k, v in got.items() if k.startswith("multicompress_responses_total")}
    assert counted == want, got


@pytest.mark.log_allow(r"MC00020: request body: invalid gzip")
def test_mc_480_04_inflate_counts(srv):
    body = b"x" * 5000
    before = scrape(srv)
    gz = zlib.compressobj(6, zlib.DEFLATED, 31)
    data = gz.compress(body) + gz.flush()
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.request("POST", "/cgi480/echo.py", body=data,
                     headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"})
        resp = conn.getresponse()
        assert resp.read() == b"5000\n"
        assert resp.status == 200
        conn.request("POST", "/cgi480/echo.py", body=b"not gzip at all",
                     headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"})
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 400
    finally:
        conn.close()
    got = wait_counts(srv, {"multicompress_inflate_bodies_total": 1}, before)
    assert got.get("multicompress_inflate_bodies_total") == 1, got
    assert got.get("multicompress_inflate_bytes_in_total") == len(data), got
    assert got.get("multicompress_inflate_bytes_out_total") == len(body), got
    assert got.get('multicompress_inflate_errors_total{status="400"}') == 1, got


def test_mc_480_05_every_child_and_thread(srv):
    """64 requests from 16 threads on their own connections land on several children and
    threads; the totals count every one."""
    before = scrape(srv)
    errors: list[str] = []

    def worker():
        for _ in range(4):
            r = request(srv.port, "/m/style.css", "br")
            if r.header("Content-Encoding") != "br":
                errors.append(str(r.status))

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    got = wait_counts(srv, {responses("br", "live"): 64}, before)
    assert got.get(responses("br", "live")) == 64, got


def test_mc_480_06_status_page(srv):
    r = request(srv.port, "/server-status?auto", None)
    assert r.status == 200
    lines = [l for l in r.body.decode().splitlines() if l.startswith("MultiCompress")]
    assert lines, r.body[:500]
    keys = dict(l.split(": ", 1) for l in lines)
    m = scrape(srv)
    assert int(keys["MultiCompressResponsesLive"]) == sum(
        v for k, v in m.items() if k.startswith("multicompress_responses_total")
        and 'source="live"' in k)
    html = request(srv.port, "/server-status", None).body.decode()
    assert "<h2>mod_multicompress</h2>" in html and "<td>gzip</td>" in html


def test_mc_480_07_graceful_restart_keeps_counts(srv):
    for _ in range(3):
        request(srv.port, "/m/page.html", "zstd")
    time.sleep(0.2)
    before = scrape(srv)
    assert before[responses("zstd", "live")] >= 3
    srv.graceful()
    after = scrape(srv)
    for k, v in before.items():
        if "_total" in k:  # counters only: the budget's gauges go up and down
            assert after.get(k, 0) >= v, (k, v, after.get(k))
    request(srv.port, "/m/page.html", "zstd")
    got = wait_counts(srv, {responses("zstd", "live"): 1}, after)
    assert got.get(responses("zstd", "live")) == 1, got


class Prometheus:
    """Debian's prometheus in the foreground, on a free port, stopped by PID."""

    def __init__(self, target_port: int):
        self.dir = Path(tempfile.mkdtemp(prefix="mc-prometheus-"))
        self.port = free_port()
        (self.dir / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n  - job_name: mc\n    metrics_path: /metrics\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{target_port}']\n")
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Prometheus":
        log = open(self.dir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={self.dir / 'prometheus.yml'}",
             f"--storage.tsdb.path={self.dir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError((self.dir / "prometheus.log").read_text(errors="replace"))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready",
                                            timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("prometheus did not become ready")

    def query(self, expr: str) -> list[dict]:
        url = (f"http://127.0.0.1:{self.port}/api/v1/query?"
               + urllib.parse.urlencode({"query": expr}))
        with urllib.request.urlopen(url, timeout=5) as r:
            doc = json.load(r)
        assert doc["status"] == "success", doc
        return doc["data"]["result"]

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        stop_process(proc, timeout=15)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.mark.skipif(not os.path.exists(PROMETHEUS), reason="prometheus is not installed")
def test_mc_480_08_real_prometheus_scrapes_the_series(env, make_server):
    """A fresh server, 7 gzip and 2 br responses; Prometheus scrapes /metrics and its API
    returns exactly those values for the module's series (and `up` is 1)."""
    srv = make_server("metrics-prom", site_template=None, extra_conf=SITE,
                      extra_modules=["status", "socache_shmcb"], htdocs_copies=[("m", "static")])
    srv.start()
    for _ in range(7):
        assert request(srv.port, "/m/page.html", "gzip").header("Content-Encoding") == "gzip"
    for _ in range(2):
        assert request(srv.port, "/m/page.html", "br").header("Content-Encoding") == "br"
    prom = Prometheus(srv.port).start()
    try:
        deadline = time.monotonic() + 30
        got: dict[str, float] = {}
        while time.monotonic() < deadline:
            got = {}
            for series in prom.query('{__name__=~"multicompress_responses_total"}'):
                m = series["metric"]
                got[f'{m["encoding"]}/{m["source"]}'] = float(series["value"][1])
            if got.get("gzip/live") == 7 and got.get("br/live") == 2:
                break
            time.sleep(0.5)
        assert got.get("gzip/live") == 7 and got.get("br/live") == 2, got
        assert got.get("zstd/live") == 0, got
        up = prom.query('up{job="mc"}')
        assert up and float(up[0]["value"][1]) == 1.0, up
        page = len(static_file(srv.env, "page.html"))
        bytes_in = prom.query('multicompress_bytes_in_total{encoding="gzip"}')
        assert float(bytes_in[0]["value"][1]) == 7 * page, bytes_in
    finally:
        prom.stop()
