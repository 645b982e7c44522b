# SPDX-License-Identifier: Apache-2.0
"""A real browser: Debian's Chromium, headless, driven by playwright-core (tests/browser),
loads the demo pages over HTTPS with HTTP/2 from a test server with mod_multicompress.

The page must render (the DOM marker app.js sets, a computed style from style.css), the HTML,
CSS and JS must reach Chromium as zstd by default, br in br-only/ and gzip in gzip-only/ (as
Chromium reports them and as the server logged them), an event stream read with fetch() must
deliver its first event seconds before its end, and a page sent in parts must be painted
before its last part arrives. Screenshots and the report go to
<build>/tests/integration/gen/browser-output/pages/.

The browser runs once (module fixture); the tests check its JSON report.
Needs: chromium (Debian package), node + npm; `npm ci` runs in tests/browser when its
node_modules is missing (mc_browser.py). MC_CHROMIUM overrides /usr/bin/chromium.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from mc_browser import check_ran, output_dir, require_browser, run_script
from mc_server import LogCheck
from mc_tls import TlsServer

PAGES = {"/": "zstd", "/br-only/": "br", "/gzip-only/": "gzip"}
ACCENT = "rgb(0, 102, 204)"  # style.css: --accent, the h1's color
STREAM = "/cgi-bin/stream"            # conf/demo: 10 events, 0.5 s apart
PROGRESSIVE = "/cgi-bin/progressive"  # conf/demo: 3 parts, 1.5 s apart


@pytest.fixture(scope="module")
def run(env, tmp_path_factory):
    require_browser(env)
    out = output_dir(env, "pages")
    profile = tmp_path_factory.mktemp("chromium") / "profile"
    srv = TlsServer(env, "browser")
    try:
        srv.start()
        report = run_script(env, "browser_check.mjs",
                            ["--base", srv.https_url("/"), "--pages", ",".join(PAGES),
                             "--stream", STREAM, "--progressive", PROGRESSIVE],
                            out, profile)
    finally:
        srv.stop()
    print(f"\nbrowser screenshots and report: {out}")
    # The whole run happened in this fixture, outside the per-test error_log checks.
    report["_log_problems"] = LogCheck.of(srv).problems(srv.log_lines())
    report["_access_log"] = srv.access_lines()
    report["_out"] = str(out)
    srv.checked_upto = srv.log_size()
    return report


def page_report(run: dict, path: str) -> dict:
    for p in run["pages"]:
        if p["path"] == path:
            return p
    raise AssertionError(f"no report for {path}: {run.get('error')}")


def test_mc_460_01_browser_ran(run):
    check_ran(run)


@pytest.mark.parametrize("path", PAGES)
def test_mc_460_02_page_rendered(run, path):
    page = page_report(run, path)
    assert "error" not in page, page["error"]
    assert page["status"] == 200
    assert page["ready"] == "yes", "app.js did not run"          # the JS ran
    assert page["h1Color"] == ACCENT, page["h1Color"]            # the CSS applied
    assert page["protocol"] == "h2", page["protocol"]
    assert page["decodedBodySize"] > page["encodedBodySize"] > 0, page
    shot = Path(page["screenshot"])
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot


@pytest.mark.parametrize("path,coding", PAGES.items())
def test_mc_460_03_content_encoding_seen_by_chromium(run, path, coding):
    """Chromium offers zstd over HTTPS; the directory's MultiCompressEncodings decides."""
    page = page_report(run, path)
    wanted = {path: "document", path + "style.css": "stylesheet", path + "app.js": "script"}
    seen = {r["path"]: r for r in page["responses"]}
    for rpath, rtype in wanted.items():
        assert rpath in seen, f"Chromium did not load {rpath}: {sorted(seen)}"
        r = seen[rpath]
        assert r["status"] == 200 and r["type"] == rtype, r
        offered = [t.strip() for t in (r["acceptEncoding"] or "").split(",")]
        assert "zstd" in offered and "br" in offered, f"Chromium offered {offered}"
        assert r["contentEncoding"] == coding, f"{rpath}: {r}"
        assert "accept-encoding" in (r["vary"] or "").lower(), f"{rpath}: {r}"
    # Resource Timing says the same, and that it came over h2, compressed
    for res in page["resources"]:
        if res["path"] in wanted:
            assert res["protocol"] == "h2", res
            assert res["decodedBodySize"] > res["encodedBodySize"] > 0, res
            if res.get("contentEncoding"):  # Chromium >= 135 reports it
                assert res["contentEncoding"] == coding, res


@pytest.mark.parametrize("path,coding", PAGES.items())
def test_mc_460_04_content_encoding_in_access_log(run, path, coding):
    """What the server logged for the browser's requests: HTTP/2, `%{Content-Encoding}o`."""
    for rel in ("", "style.css", "app.js"):
        url = path + rel
        pat = re.compile(rf'"GET {re.escape(url)} HTTP/2\.0" 200 \d+ "([^"]*)" (\S+) ')
        hits = [m for m in map(pat.search, run["_access_log"]) if m]
        assert hits, f"no HTTP/2 request for {url} in the access log"
        for m in hits:
            assert "zstd" in m.group(1), m.group(0)
            assert m.group(2) == coding, m.group(0)


def test_mc_460_05_event_stream_arrives_while_produced(run):
    """fetch() + reader in the page: the first event is readable seconds before the end."""
    s = run["stream"]
    assert "error" not in s, s["error"]
    assert s["status"] == 200 and s["protocol"] == "h2"
    assert s["contentEncoding"] == "zstd" and "accept-encoding" in s["vary"].lower(), s
    chunks = s["chunks"]
    text = "".join(c["text"] for c in chunks)
    events = re.findall(r"data: event (\d+) of 10", text)
    assert events == [str(i) for i in range(1, 11)], text
    assert "data: event 1 of 10" in chunks[0]["text"], chunks[0]
    assert s["tEnd"] >= 4000, f"stream ended after {s['tEnd']:.0f} ms: proves nothing"
    assert chunks[0]["t"] < 1500 and chunks[0]["t"] < s["tEnd"] - 3000, \
        f"first event read at {chunks[0]['t']:.0f} ms, end at {s['tEnd']:.0f} ms"
    # the events came in separately, as produced (10, give or take a few merged under load)
    assert len(chunks) >= 5, [round(c["t"]) for c in chunks]


def test_mc_460_06_progressive_page_painted_before_its_end(run):
    p = run["progressive"]
    assert "error" not in p, p["error"]
    assert p["status"] == 200 and p["protocol"] == "h2"
    assert p["contentEncoding"] in (None, "zstd"), p
    assert [r["contentEncoding"] for r in p["responses"] if r["type"] == "document"] == ["zstd"]
    assert p["firstText"].startswith("Part 1 of 3")
    assert not p["lastPresentAtFirst"], "part 1 appeared only with the end of the page"
    assert not p["lastPresentAtPartialShot"], "the partial screenshot came too late"
    assert p["tLast"] - p["tFirst"] >= 1500, p
    assert p["firstContentfulPaint"] is not None and \
        p["firstContentfulPaint"] < p["responseEnd"] - 1500, \
        f"first paint at {p['firstContentfulPaint']} ms, response end at {p['responseEnd']} ms"
    for key in ("screenshotPartial", "screenshot"):
        assert Path(p[key]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", p[key]
