# SPDX-License-Identifier: Apache-2.0
"""The demo as a visitor sees it: conf/demo made by conf/demo/prepare.sh exactly as
scripts/demo.sh makes it (the site, five releases of a hashed bundle, sidecars written by the
built multicompress-precompress, a certificate for localhost and 127.0.0.1, httpd.conf), on
free ports, started with `-k start` and stopped by PID. Debian's Chromium (headless, driven by
tests/browser/demo_check.mjs) trusts the certificate for real (an NSS database under a HOME of
its own) and walks through every capability's page over HTTPS and HTTP/2, in one profile:
release 1 of the bundle, then release 2 (dcz, from a delta sidecar), the overview, the delta
sidecars, the site dictionary (a first navigation, then a second one as dcz), negotiation,
per-directory settings, sidecars, the cache, streaming, request bodies, Prometheus, the CPU
budget under load, the cross-site policy, the status page with its picture. Each panel must
show real values; screenshots go to <build>/tests/integration/gen/browser-output/demo/.

Then scripts/demo.sh itself (on the same build, MC_DEMO_BUILD_DIR): what it prints works, a
second start and a port in use end with one line that says what to do, and Ctrl-C stops every
process it started.
"""
from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from mc_browser import check_ran, output_dir, require_browser, run_script, trust_store
from mc_client import request
from mc_demo import DemoServer, demo_sh
from mc_process import children_of, free_port, wait_gone
from mc_server import HttpdServer, LogCheck

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def demo(env):
    srv = DemoServer(env, "demo")
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def run(env, demo, tmp_path_factory):
    require_browser(env)
    out = output_dir(env, "demo")
    tmp = tmp_path_factory.mktemp("demo")
    trust_store(tmp / "home", demo.gen / "tls" / "cert.pem")
    mark = demo.log_size()
    report = run_script(env, "demo_check.mjs",
                        ["--base", f"https://localhost:{demo.tls_port}/",
                         "--other", f"https://127.0.0.1:{demo.tls_port}/", "--home", str(tmp / "home")],
                        out, tmp / "profile", timeout=400)
    print(f"\ndemo screenshots and report: {out}")
    report["_log_problems"] = LogCheck.of(demo).problems(demo.log_lines(mark))
    demo.checked_upto = demo.log_size()
    report["_releases"] = demo.releases()
    return report


def page(run: dict, name: str) -> dict:
    for p in run["pages"]:
        if p["name"] == name:
            assert "error" not in p, f"{name}: {p['error']}"
            return p
    raise AssertionError(f"no page {name}: {run.get('error')}")


def resources(p: dict) -> dict[str, dict]:
    """The page's own table: path -> {source, coding, cells}."""
    return {r["data"]["path"]: {**r["data"], "cells": r["cells"]} for r in p["resources"]}


def test_mc_497_01_browser_ran(run):
    check_ran(run)
    names = [p["name"] for p in run["pages"]]
    assert names == ["release-1", "release-2", "index", "index-again", "dictionary",
                     "delta-sidecars", "site-dictionary", "negotiation", "per-directory",
                     "sidecars", "cache", "streaming", "request-body", "prometheus", "cpu-budget",
                     "cross-site", "status", "server-status"], names
    for p in run["pages"]:
        assert "error" not in p, f"{p['name']}: {p['error']}"
        assert p.get("status") in (None, 200), p
        assert Path(p["screenshot"]).read_bytes()[:8] == PNG, p["screenshot"]


def test_mc_497_02_overview_shows_each_resource_and_its_source(run):
    """The overview's table: sidecars (stylesheet, script, logo), the bundle as dcz against the
    release the browser had (a dictionary), /metrics compressed live; on the second visit the
    page itself from the cache."""
    first = page(run, "index")
    res = resources(first)
    latest = run["_releases"][-1]["path"]
    for path in ("/style.css", "/app.js", "/logo.svg"):
        assert res[path]["source"] == "sidecar" and res[path]["coding"] == "zstd", res[path]
    assert res[latest]["source"] == "dictionary" and res[latest]["coding"] == "dcz", res[latest]
    assert res["/metrics"]["source"] == "live", res["/metrics"]
    assert res["/"]["source"] in ("live", "cache"), res["/"]
    again = resources(page(run, "index-again"))
    assert again["/"]["source"] == "cache", again["/"]
    assert again[latest]["source"] == "browser", "the bundle is immutable: the browser keeps it"
    # every capability's card, each a link to its page
    cards = {c["panel"]: c["href"] for c in first["cards"]}
    assert cards == {p: f"/{p}/" for p in (
        "negotiation", "per-directory", "sidecars", "cache", "streaming", "request-body",
        "dictionary", "delta-sidecars", "site-dictionary", "status", "prometheus", "cpu-budget",
        "cross-site")}, cards
    m = re.match(r"(\d+) responses since the server started \(live (\d+), sidecar (\d+), "
                 r"cache (\d+), identity (\d+)\)", first["counters"])
    assert m and all(int(g) > 0 for g in m.groups()[:3]), first["counters"]
    assert first["release"] == str(len(run["_releases"])) and first["glossaryTerms"] > 30, first
    assert first["h1Color"] == "rgb(0, 102, 204)"


def test_mc_497_03_dictionary_bundle_v2_as_dcz(run):
    """Release 1 whole (its sidecar); Chromium keeps it and names it; release 2 comes as dcz in
    fewer than 1 000 bytes, its transfer size next to its size, and far less than the same
    URL without a dictionary."""
    rel = run["_releases"]
    r1 = page(run, "release-1")["bundle"]
    assert r1["coding"] == "zstd" and r1["source"] == "sidecar", r1
    assert r1["decoded"] == rel[0]["bytes"], r1
    assert run["probes"] and run["probes"][-1]["availableDictionary"] == f":{rel[0]['sha256']}:", \
        run["probes"]
    r2 = page(run, "release-2")["bundle"]
    assert r2["coding"] == "dcz" and r2["source"] == "dictionary" and r2["dictionary"] == 1, r2
    assert r2["decoded"] == rel[1]["bytes"], r2
    assert 0 < r2["encoded"] < 1000 and r2["transfer"] < 1000, r2
    w = r2["without"]
    assert w["coding"] == "zstd" and w["encoded"] > 5 * r2["encoded"], r2
    d = page(run, "dictionary")
    assert "MultiCompressUseAsDictionary auto dest=script" in d["config"], d["config"]
    assert f"Available-Dictionary: :{rel[0]['sha256']}:" in d["curl"], d["curl"]


def test_mc_497_04_negotiation(run):
    p = page(run, "negotiation")
    offered = [t.strip() for t in p["accept"].split(",")]
    assert "zstd" in offered and "br" in offered and p["coding"] == "zstd", p
    got = {r["data"]["accept"]: r["cells"][1] for r in p["others"]}
    assert got == {"": "identity", "gzip": "gzip", "br;q=0.5, gzip": "gzip", "gzip, br": "br",
                   "zstd, br, gzip": "zstd", "*": "zstd", "compress": "identity"}, got
    assert "MultiCompressEncodings dcz zstd br gzip" in p["config"], p["config"]


def test_mc_497_05_per_directory(run):
    p = page(run, "per-directory")
    got = {r["data"]["url"]: r["data"]["coding"] for r in p["dirs"]}
    assert got == {"/app.js": "zstd", "/br-only/": "br", "/br-only/app.js": "br",
                   "/br-only/style.css": "br", "/gzip-only/": "gzip", "/gzip-only/app.js": "gzip",
                   "/gzip-only/style.css": "gzip"}, got
    assert "MultiCompressLevel br 5" in p["config"], p["config"]


def test_mc_497_06_sidecars(run):
    p = page(run, "sidecars")
    for r in p["samples"]:
        assert r["data"]["source"] == "sidecar", r
    assert re.search(r"files: \d+ scanned, \d+ selected: \d+ compressed", p["precompress"]), \
        p["precompress"]
    assert "MultiCompressStatic On" in p["config"]


def test_mc_497_07_cache_first_live_then_from_the_store(run):
    p = page(run, "cache")
    sources = [r["data"]["source"] for r in p["requests"]]
    assert sources == ["live", "cache", "cache"], sources
    sizes = [r["cells"][3] for r in p["requests"]]
    assert all(s.endswith("kB") for s in sizes), sizes
    assert re.search(r"[1-9]\d* hits", p["counters"]), p["counters"]
    assert "MultiCompressCache On" in p["config"]


def test_mc_497_08_streaming(run):
    s = page(run, "streaming")["stream"]
    assert s["coding"] == "zstd" and s["events"] == 10, s
    t = [int(r["data"]["t"]) for r in page(run, "streaming")["events"]]
    assert s["end"] > 4000 and t[0] < s["end"] - 3000, (t, s)


def test_mc_497_09_request_body_reaches_the_cgi_decoded(run):
    u = page(run, "request-body")["upload"]
    assert u["same"] and u["read"] == u["plain"] and u["sent"] < u["plain"] / 5, u
    assert u["contentLength"] == str(u["plain"]) and u["contentEncoding"] == "", u


def test_mc_497_10_prometheus_counters(run):
    series = {r["cells"][0]: float(r["cells"][1]) for r in page(run, "prometheus")["series"]}
    for name in ('multicompress_responses_total{encoding="zstd",source="sidecar"}',
                 'multicompress_responses_total{encoding="zstd",source="cache"}',
                 'multicompress_responses_total{encoding="zstd",source="live"}',
                 'multicompress_dictionaries_total{event="used"}',
                 "multicompress_inflate_bodies_total"):
        assert series.get(name, 0) > 0, (name, series)


def test_mc_497_11_cpu_budget_steps_down_and_back(run):
    p = page(run, "cpu-budget")
    b = p["budget"]
    assert b["errors"] == 0 and b["responses"] > 20, b
    assert b["maxStep"] >= 2, f"the levels did not step down: {b['steps']}"
    assert b["lastStep"] < b["maxStep"], f"no step back up: {b['steps']}"
    assert len(b["sizes"]) >= 3, f"the responses did not change: {b['sizes']}"
    assert "MultiCompressCPUBudget 10%" in p["config"]


def test_mc_497_12_cross_site_with_cookie_is_identity(run):
    p = page(run, "cross-site")
    assert "demo_session" in p["cookies"], p
    x, s = p["crossSite"], p["sameSite"]
    assert x["fetchSite"] == "cross-site" and x["cookie"] and x["coding"] == "identity", x
    assert x["encoded"] == x["decoded"], x
    assert s["fetchSite"] == "same-origin" and s["cookie"] and s["coding"] == "zstd", s


def test_mc_497_13_status_page_and_its_picture(run):
    p = page(run, "status")
    assert p["section"] == "yes"
    text = "\n".join(p["svgText"])
    for coding in ("zstd", "dcz"):
        assert coding in p["svgText"], text
    assert re.search(r"live [1-9]\d*, sidecar [1-9]\d*, cache [1-9]\d* responses", text), text
    assert re.search(r"compressing: \d+\.\d\d s", text) and "(budget 10.0 %)" in text, text
    assert re.search(r"^MultiCompressResponsesSidecar: [1-9]", p["auto"], re.M), p["auto"]
    # bytes out split by source: dcz's came from the delta sidecars (and the cache)
    assert "bytes out, sidecar/cache" in p["svgText"], text
    stored = [int(m.group(1)) for t in p["svgTitles"]
              if (m := re.fullmatch(r"dcz: (\d+) bytes out, from a sidecar or the cache", t))]
    assert stored and stored[0] > 0, p["svgTitles"]
    assert page(run, "server-status")["svg"] == 1


def test_mc_497_15_site_dictionary_second_navigation_as_dcz(run, demo):
    """The dictionary prepare.sh trained on the documentation pages: the first navigation under
    /site-dictionary/ names none and its Link header announces the dictionary; Chromium fetches
    it (cacheable, offered to those pages); the second navigation, the page's own link, names it
    and arrives as dcz in less than half the bytes of the same page without it; a page of the
    documentation after it too. The panel says so with real values."""
    info = demo.site_dictionary()
    p = page(run, "site-dictionary")
    first = p["first"]
    assert first["availableDictionary"] is None, first
    assert first["arrival"]["coding"] == "zstd" and first["arrival"]["dictionary"] is None, first
    assert first["arrival"]["link"] == f'<{info["url"]}>; rel="compression-dictionary"', first
    fetched = [f for f in p["dictionaryFetches"] if f["path"] == info["url"]]
    assert fetched and fetched[0]["status"] == 200 and fetched[0]["done"], p["dictionaryFetches"]
    assert fetched[0]["useAsDictionary"] == 'match="/site-dictionary/*", match-dest=("document")'
    assert fetched[0]["cacheControl"] == "public, max-age=31536000", fetched
    second = p["second"][0]
    assert len(p["second"]) == 1, f"the second navigation named no dictionary: {p['second']}"
    for nav, path in ((second, "site-dictionary/docs/index.html"),
                      (p["third"], None)):
        a = nav["arrival"]
        assert nav["availableDictionary"] == f":{info['sha256']}:", nav
        assert a["coding"] == "dcz" and a["dictionary"] == "site" and a["source"] == "dictionary", a
        assert nav["coding"] == "dcz" and info["url"] in nav["dictionaryCell"], nav
        assert a["moduleSource"] in ("live", "cache"), a
        on_disk = demo.htdocs / (path or a["path"].lstrip("/"))
        assert a["decoded"] == on_disk.stat().st_size, (a, on_disk)
        w = a["without"]
        assert w["coding"] == "zstd" and 0 < a["encoded"] < w["encoded"], a
        assert a["transfer"] < w["transfer"], a
    # the contents, mostly the pages' template: a tenth of zstd's bytes (163 against 1 824)
    assert second["arrival"]["encoded"] < second["arrival"]["without"]["encoded"] / 4, second
    assert p["third"]["arrival"]["path"].endswith("-a-site-dictionary.html"), p["third"]
    assert (f"MultiCompressDictionary {info['url']} " in p["config"]
            and "match=/site-dictionary/* dest=document" in p["config"]), p["config"]
    assert re.search(rf"{info['bytes']} bytes of raw content, SHA-256 {info['hex']}", p["train"]), \
        p["train"]
    assert f"Available-Dictionary: :{info['sha256']}:" in p["curl"], p["curl"]


def test_mc_497_16_delta_sidecar_sent_as_dcz(run, demo):
    """Release 2 for a browser that holds release 1: the delta sidecar the tool wrote at start,
    FILE.dcz-<16 hex of release 1's SHA-256>, sent as it is (source sidecar), in fewer than
    1 000 bytes on the wire for the whole release; the Delta sidecars page lists it with what
    the browser got. curl gets the same bytes."""
    rel = run["_releases"]
    against = base64.b64decode(rel[0]["sha256"]).hex()[:16]
    name = f"{rel[1]['path'].rsplit('/', 1)[1]}.dcz-{against}"
    delta = demo.htdocs / "assets" / name
    assert delta.is_file(), sorted(p.name for p in delta.parent.iterdir())
    r2 = page(run, "release-2")["bundle"]
    assert r2["coding"] == "dcz" and r2["moduleSource"] == "sidecar" and r2["delta"] == name, r2
    assert r2["encoded"] == delta.stat().st_size and r2["transfer"] < 1000, r2
    assert r2["decoded"] == rel[1]["bytes"], r2
    d = page(run, "delta-sidecars")
    got = {r["data"]["release"]: r for r in d["got"]}
    assert got["2"]["data"]["moduleSource"] == "sidecar" and got["2"]["cells"][5] == name, got
    assert got["1"]["data"]["coding"] == "zstd", got
    listed = {(c["release"], c["against"]): int(c["bytes"]) for c in d["deltas"]}
    assert len(listed) == len(rel) * (len(rel) - 1), listed
    assert listed[("2", "1")] == delta.stat().st_size, listed
    assert "MultiCompressStatic On" in d["config"] and "--deltas 4" in d["config"], d["config"]
    assert f"Available-Dictionary: :{rel[0]['sha256']}:" in d["curl"] and name in d["curl"]
    r = request(demo.port, rel[1]["path"], "dcz, zstd",
                headers=[("Available-Dictionary", f":{rel[0]['sha256']}:")])
    assert (r.content_encoding, r.header("X-MC-Source")) == ("dcz", "sidecar"), r.headers
    assert r.body == delta.read_bytes()


def test_mc_497_14_no_error_log_lines(run):
    assert not run["_log_problems"], run["_log_problems"]


def test_mc_497_17_headers_report_the_source(demo):
    """What curl sees: X-MC-Source and Server-Timing (mod_headers, after the module decided)
    for a sidecar, a first request and a cache hit, and a 304 of a sidecar."""
    def get(path: str, *extra: tuple[str, str]):
        r = request(demo.port, path, "gzip", headers=list(extra))
        return r, r.header("X-MC-Source"), r.header("Server-Timing") or ""
    r, src, st = get("/sidecars/samples/design.txt")
    assert (r.status, r.header("Content-Encoding"), src) == (200, "gzip", "sidecar"), r.headers
    assert "mc-source;desc=sidecar" in st and 'mc-accept;desc="gzip"' in st, st
    etag = r.header("ETag")
    r, src, _ = get("/sidecars/samples/design.txt", ("If-None-Match", etag))
    assert (r.status, src) == (304, "sidecar"), r.headers
    assert [get("/per-directory/")[1] for _ in range(2)] == ["live", "cache"]
    r, src, st = get("/cgi-bin/negotiate")
    assert src == "live" and "mc-coding;desc=gzip" in st, r.headers


# ---- scripts/demo.sh

def test_mc_497_20_demo_script(env, tmp_path):
    """One command: it runs in the foreground and prints where to look and curl lines that do
    what it says; a second start and a port in use end with one "demo:" line; Ctrl-C stops
    httpd and every child."""
    base = HttpdServer(env, "demo-sh", site_template=None)._new_gen_dir()
    http, https = free_port(), free_port()
    while https == http:
        https = free_port()
    first = demo_sh(env, base / "one", http, https, start_new_session=True)
    pids: list[int] = []
    try:
        lines, deadline, httpd = [], time.monotonic() + 120, None
        while httpd is None and time.monotonic() < deadline and first.poll() is None:
            line = first.stdout.readline()
            lines.append(line)
            if m := re.search(r"running \(httpd pid (\d+)\)", line):
                httpd = int(m.group(1))
        assert httpd, "".join(lines) + (first.stderr.read() if first.poll() is not None else "")
        pids = [httpd, *children_of(httpd)]
        while not lines[-1].startswith("Logs: ") and time.monotonic() < deadline:
            lines.append(first.stdout.readline())
        printed = "".join(lines)
        assert f"https://localhost:{https}/" in printed and f"http://127.0.0.1:{http}/" in printed
        # the curl lines without a pipe, and what the line under each says
        curls = re.findall(r"^  (curl [^|\n]*)\n      (.*)$", printed, re.M)
        assert len(curls) >= 4, printed
        for cmd, says in curls:
            got = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=30)
            assert got.returncode == 0, (cmd, got.stderr)
            for want in re.findall(r"(Content-Encoding: \w+|X-MC-Source: \w+|HTTP/2)", says):
                name, _, value = want.partition(": ")
                assert re.search(rf"^{re.escape(name)}:? {value}" if value else r"^HTTP/2 200",
                                 got.stdout, re.M | re.I), (cmd, says, got.stdout)
        # a second start from the same directory, and one on a port in use
        second = demo_sh(env, base / "one", free_port(), free_port())
        out, err = second.communicate(timeout=60)
        assert second.returncode == 1 and err.count("\n") == 1, err
        assert err.startswith("demo: a demo is already running") and str(httpd) in err, err
        third = demo_sh(env, base / "two", http, free_port())
        out, err = third.communicate(timeout=60)
        assert third.returncode == 1 and err == (
            f"demo: port {http} on 127.0.0.1 is in use: stop what listens there, or choose other "
            "ports, e.g. MC_DEMO_HTTP_PORT=18080 MC_DEMO_HTTPS_PORT=18443 scripts/demo.sh\n"), err
        # Ctrl-C: the terminal signals the whole foreground group
        os.killpg(first.pid, signal.SIGINT)
        rest, _ = first.communicate(timeout=30)
        assert first.returncode == 0 and rest.rstrip().endswith("demo: stopped"), rest
        assert wait_gone(pids, timeout=10), f"left running: {pids}"
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
