# SPDX-License-Identifier: Apache-2.0
"""Compression dictionary transport (RFC 9842) in a real browser: Debian's Chromium, headless,
driven by playwright-core (tests/browser/dictionary_check.mjs), in one profile:

1. loads /dict/v1.html over HTTPS with HTTP/2; its script /dict/app.v1.js comes with
   `Use-As-Dictionary: match="/dict/app.*.js", match-dest=("script")`
   (MultiCompressUseAsDictionary), and Chromium keeps it;
2. waits until Chromium offers it (a probe script URL the pattern matches goes out with
   `Available-Dictionary`);
3. loads /dict/v2.html: its script /dict/app.v2.js (v1 with a few edits) must go out with
   `Available-Dictionary: :base64(sha256(app.v1.js)):` and `dcz` in Accept-Encoding, come back
   as `Content-Encoding: dcz` (access log `%{Content-Encoding}o`, and as Chromium reports it),
   and run: the page shows v2's marker and checksum, the body Chromium decoded is app.v2.js.

The same over plain HTTP on http://localhost:PORT (a secure context for Chromium), same
profile, with scripts of its own (other bytes under the same URLs, mod_rewrite by Host); then
http://127.0.0.1:PORT, whose scripts are the HTTPS host's files (test_mc_495_04). Screenshots
of each v2 go to <build>/tests/integration/gen/browser-output/dictionary/.

Chromium keeps a dictionary only from a response with a freshness lifetime (Cache-Control here),
and only after the response is complete (it is there some 20 ms later; the probe waits up
to 15 s).

Chromium keeps no dictionary from a response whose certificate had an error, so it runs without
--ignore-certificate-errors: the test certificate is trusted in an NSS database
($HOME/.pki/nssdb, certutil from libnss3-tools) under a HOME of its own.
"""
from __future__ import annotations

import base64
import hashlib
import os
import random
import re
from pathlib import Path

import pytest

from mc_browser import check_ran, output_dir, require_browser, run_script, trust_store
from mc_server import LogCheck
from mc_tls import TlsServer

# The dictionary part of the configuration. The dict_log line per request: request line,
# status, Host, what the request offered, the coding sent, the dictionary the request named,
# its destination, and the Use-As-Dictionary the response carried.
DICT_CONF = r"""
# ---- test_495: /dict/ on both ports (the TLS host's DocumentRoot is the demo)
Alias /dict/ "@HTDOCS@/dict/"
# http://localhost gets scripts of its own (other bytes, so other dictionaries) under the same
# URLs; the HTTPS host and http://127.0.0.1 the same files. The URL, which <LocationMatch>
# sees, is unchanged.
RewriteEngine On
RewriteCond "%{HTTP_HOST}" "^localhost:"
RewriteRule "^/dict/(app\.v[0-9]+\.js)$" "@HTDOCS@/dict/localhost/$1"
LogFormat "\"%r\" %>s %b %{Host}i \"%{Accept-Encoding}i\" %{Content-Encoding}o \
\"%{Available-Dictionary}i\" \"%{Sec-Fetch-Dest}i\" \"%{Use-As-Dictionary}o\"" dict
CustomLog "@GEN@/logs/dict_log" dict
<Directory "@HTDOCS@/dict">
    MultiCompressEncodings @ENCODINGS@
    @DIR_EXTRA@
</Directory>
<LocationMatch "^/dict/app\.v[0-9]+\.js$">
    @DICTIONARY@
    # Chromium keeps a dictionary only for a response with a freshness lifetime: the scripts
    # are written at test time, so without this their heuristic one (from Last-Modified) is 0.
    Header set Cache-Control "max-age=3600"
</LocationMatch>
"""
DICTIONARY = 'MultiCompressUseAsDictionary "/dict/app.*.js" dest=script'

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu "
         "amber basalt cobalt dune ember fjord glacier harbor island jasper kelp lagoon mesa "
         "nebula onyx prairie quartz reef summit tundra umber valley willow zephyr").split()


def app_rows(version: int, variant: str = "") -> list[tuple[int, str, int]]:
    rng = random.Random(f"495{variant}")
    rows = [(i, "-".join(rng.choice(WORDS) for _ in range(3)), rng.randrange(1000))
            for i in range(450)]
    if version >= 2:  # a small edit: one row changed, one added
        i, name, _ = rows[300]
        rows[300] = (i, name, 7)
        rows.append((450, "release-notes-v2", 495))
    return rows


def app_script(version: int, variant: str = "") -> bytes:
    """/dict/app.vN.js: a deterministic ~38 KB script; v2 is v1 with a few edits; another
    `variant` has other bytes throughout. It sets body[data-app] to its version and
    body[data-sum] to the sum of its table's weights."""
    rng = random.Random(f"4950{variant}")
    rows = app_rows(version, variant)
    out = [f"// app.v{version}.js: test_495_dictionary_browser.py, generated\n",
           "(function () {\n  \"use strict\";\n",
           f"  var VERSION = \"v{version}\";\n",
           "  var TABLE = [\n"]
    for i, name, weight in rows:
        out.append(f"    {{ id: {i}, name: \"{name}\", weight: {weight}, "
                   f"tag: \"{rng.choice(WORDS)}\" }},\n")
    out.append("  ];\n")
    nfuncs = 41 if version >= 2 else 40
    for k in range(nfuncs):
        a, b = rng.randrange(2, 97), rng.randrange(101, 997)
        out.append(f"  function format{k}(row) {{\n"
                   f"    return row.name.toUpperCase() + \":\" + ((row.weight * {a}) % {b});\n"
                   f"  }}\n")
    out.append("  var FORMATS = [" + ", ".join(f"format{k}" for k in range(nfuncs)) + "];\n")
    out.append("  var sum = TABLE.reduce(function (acc, row) { return acc + row.weight; }, 0);\n"
               "  var sample = FORMATS[sum % FORMATS.length](TABLE[0]);\n"
               "  document.body.dataset.app = VERSION;\n"
               "  document.body.dataset.sum = String(sum);\n"
               "  document.getElementById(\"version\").textContent =\n"
               "      \"app \" + VERSION + \", checksum \" + sum + \", \" + sample;\n"
               "  var me = performance.getEntriesByType(\"resource\").filter(function (r) {\n"
               "    return /\\/app\\.v[0-9]+\\.js$/.test(r.name);\n"
               "  })[0];\n"
               "  document.getElementById(\"coding\").textContent = \"delivered as \" +\n"
               "      ((me && me.contentEncoding) || \"?\") + \", \" +\n"
               "      (me ? me.encodedBodySize + \" of \" + me.decodedBodySize + \" bytes\"\n"
               "          : \"\");\n"
               "})();\n")
    return "".join(out).encode()


def app_sum(version: int, variant: str = "") -> int:
    return sum(w for _, _, w in app_rows(version, variant))


def sf_hash(data: bytes) -> str:
    """The RFC 8941 byte sequence of SHA-256(data), as in Available-Dictionary."""
    return ":" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


# One child process: what a child knows of a dictionary (mc_dictionary.cc keeps it per child)
# is then the same for every request, which test_mc_495_04 needs to be deterministic.
ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 32\nMaxRequestWorkers 32\n"
             "MinSpareThreads 8\nMaxSpareThreads 32\n")


def dict_server(env, name: str, *, encodings: str = "dcz zstd br gzip",
                dictionary: str = DICTIONARY, dir_extra: str = "") -> TlsServer:
    conf = (DICT_CONF.replace("@ENCODINGS@", encodings).replace("@DICTIONARY@", dictionary)
            .replace("@DIR_EXTRA@", dir_extra))
    return TlsServer(env, name, extra_conf=conf, extra_modules=["headers", "rewrite"],
                     mpm_conf=ONE_CHILD)


# The origins the browser visits, in this order: label -> (request line's protocol, Host name,
# the script variant served there, the directory it is in).
ORIGINS = {
    "https": ("HTTP/2.0", "127.0.0.1", "", "dict"),
    "http": ("HTTP/1.1", "localhost", "localhost", "dict/localhost"),
    "http-same-bytes": ("HTTP/1.1", "127.0.0.1", "", "dict"),
}


def write_scripts(srv: TlsServer) -> dict[str, dict[int, bytes]]:
    """{variant: {version: bytes}}, written where ORIGINS says."""
    scripts: dict[str, dict[int, bytes]] = {}
    for _, _, variant, rel in ORIGINS.values():
        d = srv.htdocs / rel
        d.mkdir(exist_ok=True)
        os.chmod(d, 0o755)
        scripts[variant] = {v: app_script(v, variant) for v in (1, 2)}
        for v, data in scripts[variant].items():
            (d / f"app.v{v}.js").write_bytes(data)
            os.chmod(d / f"app.v{v}.js", 0o644)
    return scripts


def browse(env, tmp: Path, name: str, **server_kw) -> dict:
    """Starts the server, runs the browser over HTTPS and http://localhost, stops everything;
    the report plus the server's dict_log and error_log problems."""
    require_browser(env)
    out = output_dir(env, name)
    srv = dict_server(env, name, **server_kw)
    try:
        srv.start()
        scripts = write_scripts(srv)
        home = tmp / "home"
        trust_store(home, srv.gen / "tls" / "cert.pem")
        bases = {label: (srv.https_url("/") if label == "https"
                         else f"http://{host}:{srv.port}/")
                 for label, (_, host, _, _) in ORIGINS.items()}
        report = run_script(env, "dictionary_check.mjs",
                            ["--base", ",".join(f"{k}={v}" for k, v in bases.items()),
                             "--home", str(home)],
                            out, tmp / "profile")
        # httpd logs a request after its response: the browser may be done first
        n = len(ORIGINS)
        srv.wait_access([rf'(?s)(/dict/app\.v2\.js .*){{{n}}}'])
    finally:
        srv.stop()
    print(f"\nbrowser screenshots and report: {out}")
    report["_log_problems"] = LogCheck.of(srv).problems(srv.log_lines())
    report["_dict_log"] = (srv.gen / "logs" / "dict_log").read_text(errors="replace").splitlines()
    report["_scripts"] = scripts
    report["_out"] = str(out)
    srv.checked_upto = srv.log_size()
    return report


@pytest.fixture(scope="module")
def run(env, tmp_path_factory):
    return browse(env, tmp_path_factory.mktemp("dictionary"), "dictionary")


# The origins where the flow must work: every origin with scripts of its own.
OWN = ["https", "http"]


def origin(run: dict, label: str) -> dict:
    for o in run["origins"]:
        if o["label"] == label:
            assert "error" not in o, o["error"]
            return o
    raise AssertionError(f"no report for {label}: {run.get('error')}")


def scripts(run: dict, label: str) -> dict[int, bytes]:
    return run["_scripts"][ORIGINS[label][2]]


def response(step: dict, path: str) -> dict:
    hits = [r for r in step["responses"] if r["path"] == path]
    assert len(hits) == 1, \
        f"{path}: {len(hits)} responses in {[r['path'] for r in step['responses']]}"
    return hits[0]


def b64sha(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


def log_line(run: dict, label: str, path: str) -> re.Match:
    """The one dict_log line of `path` requested from the origin `label`."""
    proto, host = ORIGINS[label][:2]
    pat = re.compile(rf'^"GET {re.escape(path)} {re.escape(proto)}" (\d+) \S+ '
                     rf'{re.escape(host)}:\d+ "([^"]*)" (\S+) "([^"]*)" "([^"]*)" "(.*)"$')
    hits = [m for m in map(pat.match, run["_dict_log"]) if m]
    assert len(hits) == 1, "\n".join(run["_dict_log"])
    return hits[0]


def test_mc_495_01_browser_ran(run):
    check_ran(run)
    assert [o["label"] for o in run["origins"]] == list(ORIGINS), run["origins"]
    # the origins' scripts differ where they should
    assert run["_scripts"][""][1] != run["_scripts"]["localhost"][1]


@pytest.mark.parametrize("label", ORIGINS)
def test_mc_495_02_v1_offered_as_dictionary(run, label):
    """v1 ran; its script came with Use-As-Dictionary, and Chromium kept it: the next
    request its pattern matches (a script) names it, a fetch() (destination "") does not."""
    o = origin(run, label)
    own = scripts(run, label)
    variant = ORIGINS[label][2]
    v1 = o["v1"]
    assert v1["status"] == 200 and v1["isSecureContext"], v1
    assert (v1["app"], v1["sum"]) == ("v1", str(app_sum(1, variant))), v1
    js = response(v1, "/dict/app.v1.js")
    assert js["status"] == 200 and js["type"] == "script", js
    assert js["useAsDictionary"] == 'match="/dict/app.*.js", match-dest=("script")', js
    assert js["availableDictionary"] is None, js  # nothing learned on this origin yet
    assert js["bodySha256"] == b64sha(own[1]), js
    probes = o["probes"]
    assert probes and probes[-1]["availableDictionary"] == sf_hash(own[1]), \
        f"Chromium never offered the dictionary: {probes}"
    assert {"dcb", "dcz"} <= {t.strip() for t in probes[-1]["acceptEncoding"].split(",")}
    fp = o["fetchProbe"]
    assert fp["secFetchDest"] == "empty" and fp["availableDictionary"] is None, \
        f"match-dest=(\"script\") not honoured: {fp}"


def check_v2_as_dcz(run: dict, label: str) -> None:
    o = origin(run, label)
    own = scripts(run, label)
    variant = ORIGINS[label][2]
    v2 = o["v2"]
    js = response(v2, "/dict/app.v2.js")
    assert js["availableDictionary"] == sf_hash(own[1]), js
    assert "dcz" in [t.strip() for t in js["acceptEncoding"].split(",")], js
    assert js["status"] == 200 and js["contentEncoding"] == "dcz", js
    vary = [t.strip().lower() for t in (js["vary"] or "").split(",")]
    assert "accept-encoding" in vary and "available-dictionary" in vary, js
    tag = hashlib.sha256(own[1]).hexdigest()[:8]
    assert (js["etag"] or "").endswith(f'-dcz-{tag}"'), js
    # what Chromium decoded is app.v2.js, and the page ran it
    assert js["bodySha256"] == b64sha(own[2]) and js["bodyLength"] == len(own[2]), js
    assert v2.get("markerError") is None, v2["markerError"]
    assert (v2["app"], v2["sum"]) == ("v2", str(app_sum(2, variant))), v2
    assert v2["text"].startswith(f"app v2, checksum {app_sum(2, variant)}"), v2["text"]
    res = [r for r in v2["resources"] if r["path"] == "/dict/app.v2.js"]
    assert len(res) == 1, v2["resources"]
    r = res[0]
    assert r["protocol"] == ("h2" if label == "https" else "http/1.1"), r
    if r["contentEncoding"]:  # Chromium >= 135 reports it
        assert r["contentEncoding"] == "dcz", r
    # the edit, not the whole script, went over the wire (zstd alone: ~7.8 KB)
    assert r["decodedBodySize"] == len(own[2]) and 0 < r["encodedBodySize"] < 1000, r
    shot = Path(v2["screenshot"])
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot
    # what the server logged: v1's script sent with Use-As-Dictionary (not as dcz: nothing
    # to refer to yet), v2's as dcz for the dictionary the request named
    m = log_line(run, label, "/dict/app.v1.js")
    status, ae, coding, avail, dest, uad = m.groups()
    assert (status, coding, avail, dest) == ("200", "zstd", "-", "script"), m.group(0)
    assert uad == r'match=\"/dict/app.*.js\", match-dest=(\"script\")', m.group(0)
    m = log_line(run, label, "/dict/app.v2.js")
    status, ae, coding, avail, dest, uad = m.groups()
    assert "dcz" in [t.strip() for t in ae.split(",")], m.group(0)
    assert avail == sf_hash(own[1]), m.group(0)
    assert (status, coding, dest) == ("200", "dcz", "script"), m.group(0)


@pytest.mark.parametrize("label", OWN)
def test_mc_495_03_v2_script_came_as_dcz_and_ran(run, label):
    """HTTPS with HTTP/2, and http://localhost (a secure context): each its own scripts."""
    check_v2_as_dcz(run, label)


def test_mc_495_04_same_script_on_a_second_origin(run):
    """http://127.0.0.1:PORT after https://127.0.0.1:TLS_PORT, same files: the server offered
    app.v1.js as a dictionary on this origin too, so Chromium names it there and the server
    must use it there."""
    check_v2_as_dcz(run, "http-same-bytes")
