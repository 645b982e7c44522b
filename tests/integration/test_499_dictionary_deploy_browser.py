# SPDX-License-Identifier: Apache-2.0
"""Dictionaries that deploy themselves (RFC 9842), in Debian's Chromium: headless, driven by
playwright-core (tests/browser/deploy_check.mjs), one profile, HTTPS with HTTP/2 and a trusted
certificate, as test_495_dictionary_browser.py explains (an NSS database under a HOME of its own,
a freshness lifetime, the wait until Chromium offers a dictionary):

1. a site dictionary, `MultiCompressDictionary /dict/site.v1.dict FILE match=/pages/*
   dest=document id=site-v1`: the first page, /pages/a.html, carries
   `Link: </dict/site.v1.dict>; rel="compression-dictionary"`; Chromium fetches the dictionary
   by itself (Sec-Fetch-Dest empty) and then offers it to navigations under /pages/;
2. the next pages, a static file (/pages/b.html) and a CGI (/pages/cgi/page.py?n=7), each in a
   new tab: they go out naming the site dictionary, come back as dcz, and render;
3. hashed bundles, `MultiCompressUseAsDictionary auto dest=script` and `MultiCompressStatic On`
   under /assets/: release 1 (/app/index.html) loads app.<hash1>.js (its sidecars written by
   multicompress-precompress at the first deploy), Chromium keeps it; the deploy (run by the
   browser script between two visits) adds app.<hash2>.js, runs multicompress-precompress
   `--deltas 3`, which writes app.<hash2>.js.dcz-<16 hex of sha256(app.<hash1>.js)>, and
   switches /app/index.html; release 2 then gets its bundle as that delta, as it is on disk
   (MULTICOMPRESS_SOURCE=sidecar), a few hundred bytes instead of the file, and runs it.

What the server did is in its deploy_log (request line, status, %b, what the request offered and
named, the coding, its source, the dictionary headers, when it was received). Screenshots of every page go to
<build>/tests/integration/gen/browser-output/deploy/.
"""
from __future__ import annotations

import base64
import configparser
import hashlib
import random
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import zstandard

from mc_browser import check_ran, output_dir, require_browser, run_script, trust_store
from mc_server import LogCheck
from mc_stores import write_file
from mc_tls import TlsServer

DICT_URL = "/dict/site.v1.dict"
CONF = r"""
# ---- test_499: a site dictionary for /pages/, content-hashed bundles under /assets/
MultiCompressEncodings dcz zstd br gzip
MultiCompressDictionary @DICT_URL@ "@SITE_DICT@" match=/pages/* dest=document id=site-v1
ScriptAlias /pages/cgi/ "@HTDOCS@/pages-cgi/"
Alias /pages/ "@HTDOCS@/pages/"
Alias /app/ "@HTDOCS@/app/"
Alias /assets/ "@HTDOCS@/assets/"
LogFormat "\"%r\" %>s %b \"%{Accept-Encoding}i\" \"%{Content-Encoding}o\" \
\"%{Available-Dictionary}i\" \"%{Dictionary-ID}i\" \"%{Sec-Fetch-Dest}i\" \"%{Sec-Fetch-Mode}i\" \
\"%{MULTICOMPRESS_SOURCE}e\" \"%{Use-As-Dictionary}o\" \"%{Link}o\" \"%{usec}t\"" deploy
CustomLog "@GEN@/logs/deploy_log" deploy
<Directory "@HTDOCS@/app">
    # the release page changes at each deploy: revalidated every time
    Header set Cache-Control "no-cache"
</Directory>
<Directory "@HTDOCS@/assets">
    MultiCompressStatic On
    MultiCompressUseAsDictionary auto dest=script
    Header set Cache-Control "public, max-age=31536000, immutable"
</Directory>
"""
LOG_FIELDS = ("ae", "coding", "avail", "dict_id", "dest", "mode", "source", "uad", "link",
              "received")
LINK = f'<{DICT_URL}>; rel="compression-dictionary"'
# One child process: what it learned of the bundles is then the same for every request.
ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 32\nMaxRequestWorkers 32\n"
             "MinSpareThreads 8\nMaxSpareThreads 32\n")

# ---- the site: what its pages share (a trained dictionary would hold it), and its pages
SHARED = b"".join(b'<li><a href="/pages/topic-%d.html">Topic %d: %s</a></li>\n'
                  % (i, i, hashlib.sha256(b"499-%d" % i).hexdigest()[:24].encode())
                  for i in range(150))
HEAD = b'<!doctype html>\n<html><head><meta charset="utf-8"><title>@TITLE@</title></head>\n<body>\n'
SITE_DICT = HEAD.replace(b"@TITLE@", b"Site") + b"<nav><ul>\n" + SHARED + b"</ul></nav>\n"


def page(title: str, marker: str) -> bytes:
    return (HEAD.replace(b"@TITLE@", title.encode())
            + b'<main><h1>%s</h1><p id="marker">%s</p></main>\n' % (title.encode(), marker.encode())
            + b"<nav><ul>\n" + SHARED + b"</ul></nav>\n</body></html>\n")


PAGES = {"/pages/a.html": page("Page A", "page A, static"),
         "/pages/b.html": page("Page B", "page B, static")}
CGI_PATH, CGI_N = "/pages/cgi/page.py?n=7", "7"
CGI_PAGE = page("Page @N@ (CGI)", "page @N@, made by a CGI")


def cgi_script() -> str:
    return ("#!/usr/bin/python3\nimport os, sys\n"
            "n = os.environ.get('QUERY_STRING', '').partition('n=')[2]\n"
            "n = n if n.isdigit() else '0'\n"
            f"page = {CGI_PAGE!r}.replace(b'@N@', n.encode())\n"
            "sys.stdout.buffer.write(b'Content-Type: text/html\\r\\n\\r\\n' + page)\n")


EXPECTED = {**PAGES, CGI_PATH: CGI_PAGE.replace(b"@N@", CGI_N.encode())}
NEXT = ["/pages/b.html", CGI_PATH]

# ---- the bundles: ~40 KB of generated script; release 2 is release 1 with a few edits
WORDS = ("amber basalt cobalt dune ember fjord glacier harbor island jasper kelp lagoon mesa "
         "nebula onyx prairie quartz reef summit tundra umber valley willow zephyr").split()


def bundle_rows(release: int) -> list[tuple[str, int]]:
    rng = random.Random(499)
    rows = [("-".join(rng.choice(WORDS) for _ in range(3)), rng.randrange(1000))
            for _ in range(600)]
    if release >= 2:
        rows[321] = (rows[321][0], 7)
        rows.append(("release-notes-2", 499))
    return rows


def bundle(release: int) -> bytes:
    rows = bundle_rows(release)
    rng = random.Random(4990)
    out = [f"// release {release}: test_499_dictionary_deploy_browser.py, generated\n"
           "(function () {\n  \"use strict\";\n  var TABLE = [\n"]
    out += [f"    {{ id: {i}, name: \"{n}\", weight: {w}, tag: \"{rng.choice(WORDS)}\" }},\n"
            for i, (n, w) in enumerate(rows)]
    out.append("  ];\n  var sum = TABLE.reduce(function (a, r) { return a + r.weight; }, 0);\n"
               f"  document.body.dataset.app = \"v{release}\";\n"
               "  document.body.dataset.sum = String(sum);\n"
               f"  document.getElementById(\"version\").textContent = \"bundle v{release}, "
               "checksum \" + sum;\n})();\n")
    return "".join(out).encode()


def bundle_sum(release: int) -> int:
    return sum(w for _, w in bundle_rows(release))


def bundle_name(release: int) -> str:
    return f"app.{hashlib.sha256(bundle(release)).hexdigest()[:8]}.js"


def release_page(release: int) -> bytes:
    return (HEAD.replace(b"@TITLE@", b"Release %d" % release)
            + b'<script src="/assets/%s" defer></script>\n' % bundle_name(release).encode()
            + b'<h1>Release %d</h1><p id="version">loading</p>\n</body></html>\n' % release)


def sf_hash(data: bytes) -> str:
    """The RFC 8941 byte sequence of SHA-256(data), as in Available-Dictionary."""
    return ":" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


def b64sha(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


def delta_name(release: int, against: int) -> str:
    return f"{bundle_name(release)}.dcz-{hashlib.sha256(bundle(against)).hexdigest()[:16]}"


def precompress(env) -> list[str]:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(env.ini_path)
    return [cp["global"]["precompress_path"], "--no-progress", "--deltas", "3",
            "--levels", "dcz=19"]


def write_site(env, srv: TlsServer, tmp: Path) -> Path:
    """The pages, the CGI and release 1 (its sidecars written as a deploy would); the deploy
    script of release 2, for the browser script to run between its visits."""
    h = srv.htdocs
    for path, data in PAGES.items():
        write_file(h / path.lstrip("/"), data)
    write_file(h / "pages-cgi" / "page.py", cgi_script().encode()).chmod(0o755)
    write_file(h / "assets" / bundle_name(1), bundle(1))
    subprocess.run([*precompress(env), str(h / "assets")], check=True, capture_output=True,
                   timeout=120)
    write_file(h / "app" / "index.html", release_page(1))
    stage = tmp / "stage"
    write_file(stage / bundle_name(2), bundle(2))
    write_file(stage / "index.html", release_page(2))
    q = shlex.quote
    assets, app = q(str(h / "assets")), q(str(h / "app"))
    script = tmp / "deploy.sh"
    script.write_text(
        "set -e\n"
        f"cp {q(str(stage / bundle_name(2)))} {assets}/\nchmod 644 {assets}/{bundle_name(2)}\n"
        f"{' '.join(map(q, precompress(env)))} {assets}\n"
        f"cp {q(str(stage / 'index.html'))} {app}/.index.new\nchmod 644 {app}/.index.new\n"
        f"mv {app}/.index.new {app}/index.html\nls {assets}\n")
    return script


def parse_log(lines: list[str]) -> list[dict]:
    """deploy_log lines as {method, path, status, bytes, and LOG_FIELDS}; "-" and "" are None.
    In the order the requests were received (%{usec}t): httpd writes a line when its response
    is done, so a short response fetched because of a longer one may be logged before it."""
    out = []
    for line in lines:
        m = re.match(r'^"(\S+) (\S+) (\S+)" (\d+) (\S+) (.*)$', line)
        assert m, line
        vals = [re.sub(r"\\(.)", r"\1", v) for v in re.findall(r'"((?:[^"\\]|\\.)*)"', m[6])]
        assert len(vals) == len(LOG_FIELDS), line
        rec = {k: (None if v in ("-", "") else v) for k, v in zip(LOG_FIELDS, vals)}
        rec.update(method=m[1], path=m[2], proto=m[3], status=int(m[4]),
                   bytes=0 if m[5] == "-" else int(m[5]), line=line)
        rec["received"] = int(rec["received"])
        out.append(rec)
    return sorted(out, key=lambda rec: rec["received"])


@pytest.fixture(scope="module")
def run(env, tmp_path_factory):
    require_browser(env)
    tmp = tmp_path_factory.mktemp("deploy")
    out = output_dir(env, "deploy")
    site_dict = tmp / "site.dict"
    site_dict.write_bytes(SITE_DICT)
    conf = CONF.replace("@DICT_URL@", DICT_URL).replace("@SITE_DICT@", str(site_dict))
    srv = TlsServer(env, "deploy", extra_conf=conf, extra_modules=["headers"],
                    mpm_conf=ONE_CHILD)
    try:
        srv.start()
        deploy = write_site(env, srv, tmp)
        home = tmp / "home"
        trust_store(home, srv.gen / "tls" / "cert.pem")
        report = run_script(env, "deploy_check.mjs",
                            ["--base", srv.https_url("/"), "--home", str(home),
                             "--deploy", str(deploy), "--dict", DICT_URL,
                             "--next", ",".join(NEXT)], out, tmp / "profile")
        # httpd logs a request after its response: the browser may be done first
        srv.wait_access([re.escape(bundle_name(2))])
    finally:
        srv.stop()
    print(f"\nbrowser screenshots and report: {out}")
    report["_log_problems"] = LogCheck.of(srv).problems(srv.log_lines())
    report["_log"] = parse_log((srv.gen / "logs" / "deploy_log").read_text().splitlines())
    report["_assets"] = {p.name: p.read_bytes() for p in (srv.htdocs / "assets").iterdir()}
    srv.checked_upto = srv.log_size()
    return report


def visit(run: dict, step: str) -> dict:
    hits = [v for v in run["visits"] if v["step"] == step]
    assert len(hits) == 1, f"{step}: {run.get('error')} {[v['step'] for v in run['visits']]}"
    assert "error" not in hits[0], hits[0]["error"]
    return hits[0]


def response(run: dict, path: str, step: str | None = None) -> dict:
    hits = [r for r in run["responses"] if r["path"] == path and step in (None, r["step"])]
    assert len(hits) == 1, f"{path} ({step}): {[(r['step'], r['path']) for r in run['responses']]}"
    return hits[0]


def logged(run: dict, path: str) -> list[dict]:
    return [r for r in run["_log"] if r["path"] == path]


def tokens(value: str | None) -> list[str]:
    return [t.strip().lower() for t in (value or "").split(",")]


def check_screenshot(v: dict) -> None:
    assert Path(v["screenshot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", v["screenshot"]


def test_mc_499_01_browser_ran(run):
    check_ran(run)
    assert [v["step"] for v in run["visits"]] == \
        ["first", "next-1", "next-2", "release-1", "release-2"], run["visits"]
    assert run["deploy"]["ok"], run["deploy"]["output"]


def test_mc_499_02_link_makes_chromium_fetch_and_offer_the_site_dictionary(run):
    """Page A carries the Link; Chromium fetches the dictionary by itself (no page asks for
    it: Sec-Fetch-Dest empty, mode cors), keeps it, and offers it to the next navigation."""
    a = visit(run, "first")
    assert a["status"] == 200 and a["isSecureContext"] and a["marker"] == "page A, static", a
    check_screenshot(a)
    doc = response(run, "/pages/a.html")
    assert doc["link"] == LINK and doc["availableDictionary"] is None, doc
    assert doc["bodySha256"] == b64sha(PAGES["/pages/a.html"]), doc
    fetched = [r for r in run["_log"] if r["path"] == DICT_URL]
    assert fetched, "Chromium never fetched the site dictionary:\n" + \
        "\n".join(r["line"] for r in run["_log"])
    # once over the network: the next pages' Link finds it in Chromium's cache (max-age)
    assert len(fetched) == 1, [r["line"] for r in fetched]
    first = fetched[0]
    assert (first["status"], first["dest"], first["mode"]) == (200, "empty", "cors"), first
    assert first["uad"] == 'match="/pages/*", match-dest=("document"), id="site-v1"', first
    # fetched because of page A: before any other page (the probes carry the Link too)
    assert run["dictionaryFetched"] == {"step": "first"}, run["dictionaryFetched"]
    paths = [r["path"] for r in run["_log"]]
    assert paths.index("/pages/a.html") < paths.index(DICT_URL) < \
        paths.index(run["siteProbes"][0]["path"]), paths
    seen = [r for r in run["responses"] if r["path"] == DICT_URL]
    assert seen and seen[0]["step"] == "first", seen
    assert seen[0]["status"] == 200 and "max-age=31536000" in seen[0]["cacheControl"], seen
    probes = run["siteProbes"]
    assert probes and probes[-1]["availableDictionary"] == sf_hash(SITE_DICT), \
        f"Chromium never offered the site dictionary: {probes}"
    assert probes[-1]["dictionaryId"] == '"site-v1"', probes[-1]
    assert "dcz" in tokens(probes[-1]["acceptEncoding"]), probes[-1]


@pytest.mark.parametrize("step,path", [("next-1", NEXT[0]), ("next-2", NEXT[1])],
                         ids=["static", "cgi"])
def test_mc_499_03_next_page_comes_as_dcz_and_renders(run, step, path):
    """A later navigation to another page of the site names the dictionary, gets dcz (a static
    file, and a CGI's response), and Chromium renders what it decoded."""
    v = visit(run, step)
    expected = EXPECTED[path]
    assert v["status"] == 200 and v.get("selectorError") is None, v
    marker = re.search(rb'<p id="marker">([^<]*)</p>', expected)[1].decode()
    assert v["marker"] == marker, v
    assert v["title"] == re.search(rb"<title>([^<]*)</title>", expected)[1].decode(), v
    check_screenshot(v)
    doc = response(run, path, step)
    assert doc["availableDictionary"] == sf_hash(SITE_DICT), doc
    assert doc["dictionaryId"] == '"site-v1"' and "dcz" in tokens(doc["acceptEncoding"]), doc
    assert doc["status"] == 200 and doc["contentEncoding"] == "dcz", doc
    assert "available-dictionary" in tokens(doc["vary"]) and doc["link"] == LINK, doc
    assert doc["bodySha256"] == b64sha(expected) and doc["bodyLength"] == len(expected), doc
    nav = v["navigation"]
    assert nav["protocol"] == "h2" and nav["decodedBodySize"] == len(expected), nav
    (line,) = logged(run, path)
    assert (line["status"], line["coding"], line["avail"], line["dest"]) == \
        (200, "dcz", sf_hash(SITE_DICT), "document"), line
    # what the page has of its own went over the wire, not what it shares with the dictionary
    plain = len(zstandard.ZstdCompressor(level=3).compress(expected))
    assert 0 < line["bytes"] < plain / 2 and nav["encodedBodySize"] == line["bytes"], \
        (line["bytes"], plain, nav)


def test_mc_499_04_hashed_bundle_offers_itself(run):
    """Release 1's bundle, sent from its zstd sidecar (the first deploy's), offers itself to its
    family; Chromium keeps it and offers it to the next member of the family."""
    v = visit(run, "release-1")
    assert (v["app"], v["sum"]) == ("v1", str(bundle_sum(1))), v
    check_screenshot(v)
    name = bundle_name(1)
    js = response(run, f"/assets/{name}")
    uad = f'match="/assets/app.*.js", match-dest=("script"), id="{name[4:12]}"'
    assert js["status"] == 200 and js["useAsDictionary"] == uad, js
    assert js["availableDictionary"] is None and js["bodySha256"] == b64sha(bundle(1)), js
    (line,) = logged(run, f"/assets/{name}")
    assert (line["coding"], line["source"], line["dest"]) == ("zstd", "sidecar", "script"), line
    probes = run["scriptProbes"]
    assert probes and probes[-1]["availableDictionary"] == sf_hash(bundle(1)), \
        f"Chromium never offered release 1's bundle: {probes}"


def test_mc_499_05_next_release_gets_the_deploy_time_delta(run):
    """After the deploy, release 2's bundle goes out naming release 1's, and comes back as the
    delta multicompress-precompress wrote, as it is on disk: a few hundred bytes, decoded by
    Chromium to the new bundle, which runs."""
    v1, v2 = bundle(1), bundle(2)
    delta = run["_assets"].get(delta_name(2, 1))
    assert delta is not None, f"no delta written: {sorted(run['_assets'])}\n{run['deploy']}"
    plain = len(zstandard.ZstdCompressor(level=19).compress(v2))
    assert len(delta) < 1000 < plain, (len(delta), plain)  # what makes the sizes below telling
    v = visit(run, "release-2")
    assert v.get("selectorError") is None, v
    assert (v["app"], v["sum"]) == ("v2", str(bundle_sum(2))), v
    assert v["version"] == f"bundle v2, checksum {bundle_sum(2)}", v
    check_screenshot(v)
    path = f"/assets/{bundle_name(2)}"
    js = response(run, path)
    assert js["step"] == "release-2" and js["availableDictionary"] == sf_hash(v1), js
    assert "dcz" in tokens(js["acceptEncoding"]), js
    assert js["status"] == 200 and js["contentEncoding"] == "dcz", js
    assert js["bodySha256"] == b64sha(v2) and js["bodyLength"] == len(v2), js
    (res,) = [r for r in v["resources"] if r["path"] == path]
    assert res["encodedBodySize"] == len(delta) and res["decodedBodySize"] == len(v2), res
    assert res["protocol"] == "h2" and 0 < res["transferSize"] < 1000, res
    (line,) = logged(run, path)
    assert (line["status"], line["coding"], line["avail"], line["dest"]) == \
        (200, "dcz", sf_hash(v1), "script"), line
    assert line["source"] == "sidecar" and line["bytes"] == len(delta), line
