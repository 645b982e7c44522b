# SPDX-License-Identifier: Apache-2.0
"""Dictionaries that deploy themselves (RFC 9842).

- `MultiCompressUseAsDictionary auto`: a response whose file name carries a content hash
  (`app.3f9a1c2b.js`, `index-B_1x-9Z.js`) offers itself to its family (`match="/a/app.*.js"`,
  `id` the hash); names without a hash are left alone.
- Deltas made at deploy time: `multicompress-precompress` writes `FILE.dcz-<16 hex>` against the
  family's other versions; the module sends the one the request names, with the checks of every
  sidecar, even on a server that never held the dictionary, and never one whose dcz header names
  another dictionary.
- A site dictionary: `MultiCompressDictionary URL-PATH FILE match=...` serves FILE at URL-PATH,
  announces it with `Link` on what it covers, and answers static and dynamic responses with dcz
  against it. A missing, empty or unreadable file stops start-up naming the directive and file.
Every dcz body is decoded with python3-zstandard (raw content), as a browser would.
"""
from __future__ import annotations

import base64
import configparser
import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest
import zstandard

from mc_client import Response, request
from mc_server import HttpdServer
from mc_stores import SOURCE_LOG_CONF, get, log_lines_matching, pid_of_log_line, write_file

DCZ_MAGIC = bytes.fromhex("5e2a4d1820000000")
AE = "dcz, zstd, br, gzip"

SITE = SOURCE_LOG_CONF + """
MultiCompressEncodings dcz zstd br gzip
ScriptAlias /pages/cgi/ "@HTDOCS@/cgi-bin/"
MultiCompressDictionary /dict/site.dict "@SITE_DICT@" match=/pages/* dest=document id=site-v1
<Directory "@HTDOCS@/a">
    AddOutputFilterByType MULTICOMPRESS application/javascript text/javascript text/css
    MultiCompressUseAsDictionary auto dest=script
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/denied">
    AddOutputFilterByType MULTICOMPRESS application/javascript text/javascript
    MultiCompressUseAsDictionary auto
    MultiCompressStatic On
    <FilesMatch "\\.dcz-">
        Require all denied
    </FilesMatch>
</Directory>
<Directory "@HTDOCS@/pages">
    AddOutputFilterByType MULTICOMPRESS text/html
</Directory>
<Location /pages/cgi/>
    AddOutputFilterByType MULTICOMPRESS text/html
</Location>
<Location /metrics>
    SetHandler multicompress-metrics
</Location>
"""


def bundle(version: int, size: int = 40000) -> bytes:
    lines = [f"function f{i}(a){{return a*{i * 7919 % 10007}+{i % 13}; /* v{version if i % 97 == 0 else 1} */}}"
             for i in range(size // 60)]
    return ("\n".join(lines) + f'\ndocument.body.dataset.v = "{version}";\n').encode()


# What the site's pages share (navigation, footer, a list of links), as a trained dictionary
# would hold it.
SHARED = b"".join(b'<li><a href="/pages/topic-%d.html">Topic %d: %s</a></li>\n'
                  % (i, i, hashlib.sha256(b"%d" % i).hexdigest()[:24].encode()) for i in range(150))
SITE_DICT = b"<html><head><title>Site</title></head><body><nav><ul>\n" + SHARED + b"</ul></nav>\n"


def page(n: int) -> bytes:
    return (b"<html><head><title>Page %d</title></head><body><nav><ul>\n" % n + SHARED
            + b"</ul></nav>\n<p>page %d's own words</p></body></html>\n" % n)


def precompress_path(env) -> Path:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(env.ini_path)
    return Path(cp["global"]["precompress_path"])


def available(data: bytes) -> str:
    return ":" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


def dcz_decode(body: bytes, dictionary: bytes) -> bytes:
    assert body[:8] == DCZ_MAGIC and body[8:40] == hashlib.sha256(dictionary).digest(), body[:40]
    d = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    return zstandard.ZstdDecompressor(dict_data=d, max_window_size=8 << 20) \
        .decompressobj().decompress(body[40:])


@pytest.fixture(scope="module")
def site_dict(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("site-dict") / "site.dict"
    p.write_bytes(SITE_DICT)
    return p


def site_conf(site_dict: Path) -> str:
    return SITE.replace("@SITE_DICT@", str(site_dict))


@pytest.fixture(scope="module")
def srv(env, site_dict):
    s = HttpdServer(env, "dict-deploy", site_template=None, extra_conf=site_conf(site_dict),
                    extra_modules=["socache_shmcb"])
    files = {}
    for d in ("a", "denied"):
        for v, h in ((1, "3f9a1c2b"), (2, "7e41d09c"), (3, "b27e04aa")):
            files[f"{d}/app.{h}.js"] = bundle(v)
        files[f"{d}/plain.js"] = bundle(9)
    for n in (1, 2):
        files[f"pages/p{n}.html"] = page(n)
    try:
        s.start()
        now = time.time()
        for i, (rel, data) in enumerate(sorted(files.items())):
            write_file(s.htdocs / rel, data, now - 1000 + i)
        s.files = files
        yield s
    finally:
        s.stop()


def dcz_get(srv, path: str, dictionary: bytes, headers=()) -> Response:
    return request(srv.port, path, AE,
                   headers=[("Available-Dictionary", available(dictionary)), *headers])


def test_mc_498_01_auto_offers_hashed_names(srv):
    r = request(srv.port, "/a/app.3f9a1c2b.js", "gzip")
    assert r.status == 200
    assert r.header("Use-As-Dictionary") == \
        'match="/a/app.*.js", match-dest=("script"), id="3f9a1c2b"', r
    assert "available-dictionary" in r.vary_tokens()
    plain = request(srv.port, "/a/plain.js", "gzip")
    assert plain.header("Use-As-Dictionary") is None
    assert "available-dictionary" not in plain.vary_tokens()
    # the next version of the family, naming the first: dcz
    got = dcz_get(srv, "/a/app.7e41d09c.js", srv.files["a/app.3f9a1c2b.js"])
    assert got.content_encoding == "dcz", got
    assert dcz_decode(got.body, srv.files["a/app.3f9a1c2b.js"]) == srv.files["a/app.7e41d09c.js"]


def test_mc_498_02_auto_refuses_an_id(env):
    s = HttpdServer(env, "dict-auto-id", extra_conf="MultiCompressUseAsDictionary auto id=x\n")
    p = s.check_config()
    assert p.returncode != 0 and "id from its file name" in p.stdout + p.stderr


def run_precompress(env, directory: Path, *args: str) -> str:
    p = subprocess.run([str(precompress_path(env)), "--no-progress", *args, str(directory)],
                       capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_mc_498_03_delta_sidecar_on_a_server_that_never_held_it(env, srv, site_dict,
                                                                 make_server):
    run_precompress(env, srv.htdocs / "a", "--levels", "dcz=19")
    v2, v3 = srv.files["a/app.7e41d09c.js"], srv.files["a/app.b27e04aa.js"]
    hexname = hashlib.sha256(v2).hexdigest()[:16]
    delta = srv.htdocs / "a" / f"app.b27e04aa.js.dcz-{hexname}"
    assert delta.exists(), sorted(p.name for p in (srv.htdocs / "a").iterdir())
    # a second server on the same files, which never served v2
    fresh = make_server("dict-deploy-fresh", site_template=None,
                        extra_conf=f'Alias /a "{srv.htdocs}/a"\n<Directory "{srv.htdocs}">\n'
                        f"    Require all granted\n</Directory>\n" +
                        site_conf(site_dict).replace("@HTDOCS@", str(srv.htdocs)),
                        extra_modules=["socache_shmcb"])
    fresh.start()
    got = get(fresh, "/a/app.b27e04aa.js", AE, headers=[("Available-Dictionary", available(v2))])
    assert got.resp.content_encoding == "dcz" and got.source == "sidecar", got.resp
    assert got.resp.body == delta.read_bytes()
    assert dcz_decode(got.resp.body, v2) == v3
    assert got.resp.header("Content-Length") == str(len(got.resp.body))
    assert "available-dictionary" in got.resp.vary_tokens()
    etag = got.resp.header("ETag")
    assert etag and etag.endswith(f'-dcz-{hexname[:8]}"'), etag
    nm = get(fresh, "/a/app.b27e04aa.js", AE,
             headers=[("Available-Dictionary", available(v2)), ("If-None-Match", etag)])
    assert nm.resp.status == 304 and nm.resp.header("ETag") == etag


@pytest.mark.log_allow(r"MC00031")
def test_mc_498_04_delta_for_another_dictionary_is_never_sent(env, srv):
    v1, v3 = srv.files["a/app.3f9a1c2b.js"], srv.files["a/app.b27e04aa.js"]
    target = srv.htdocs / "a" / "app.b27e04aa.js"
    right = Path(f"{target}.dcz-{hashlib.sha256(v1).hexdigest()[:16]}")
    other = Path(f"{target}.dcz-{hashlib.sha256(srv.files['a/app.7e41d09c.js']).hexdigest()[:16]}")
    assert right.exists() and other.exists()
    # the file of v1's name holds the delta made against v2 (a bad deploy, a collision)
    right.write_bytes(other.read_bytes())
    os.utime(right, (time.time(), time.time()))
    mark = srv.log_size()
    # v1 is held (learned in test 01): the fallback is live dcz against it, never the file
    got = get(srv, "/a/app.b27e04aa.js", AE, headers=[("Available-Dictionary", available(v1))])
    assert got.resp.content_encoding != "dcz" or dcz_decode(got.resp.body, v1) == v3
    assert got.resp.body != right.read_bytes()
    assert len(log_lines_matching(srv, r"MC00031.*another dictionary", mark)) == 1
    for _ in range(6):
        again = get(srv, "/a/app.b27e04aa.js", AE, headers=[("Available-Dictionary", available(v1))])
        assert again.resp.body != right.read_bytes()
    # once per version of the file in each child process, not once per request
    pids = [pid_of_log_line(line) for line in log_lines_matching(srv, r"MC00031", mark)]
    assert len(pids) == len(set(pids)), pids


def test_mc_498_05_delta_obeys_access_rules(env, srv):
    run_precompress(env, srv.htdocs / "denied", "--levels", "dcz=19")
    v2 = srv.files["denied/app.7e41d09c.js"]
    delta = Path(f"{srv.htdocs}/denied/app.b27e04aa.js.dcz-{hashlib.sha256(v2).hexdigest()[:16]}")
    assert delta.exists()
    direct = request(srv.port, f"/denied/{delta.name}")
    assert direct.status == 403
    got = get(srv, "/denied/app.b27e04aa.js", AE, headers=[("Available-Dictionary", available(v2))])
    assert got.resp.status == 200 and got.source != "sidecar", got.source
    assert got.resp.body != delta.read_bytes()


pytestmark = pytest.mark.log_allow(r"AH01630")  # the direct requests' own refusals


def test_mc_498_06_site_dictionary_served_and_announced(srv):
    r = request(srv.port, "/dict/site.dict", None)
    assert r.status == 200 and r.body == SITE_DICT
    assert r.header("Use-As-Dictionary") == \
        'match="/pages/*", match-dest=("document"), id="site-v1"'
    assert "max-age=31536000" in r.header("Cache-Control")
    etag = r.header("ETag")
    assert request(srv.port, "/dict/site.dict", None,
                   headers=[("If-None-Match", etag)]).status == 304
    p = request(srv.port, "/pages/p1.html", "gzip")
    assert p.header("Link") == '</dict/site.dict>; rel="compression-dictionary"', p
    assert "available-dictionary" in p.vary_tokens()
    assert request(srv.port, "/a/plain.js", "gzip").header("Link") is None


def test_mc_498_07_site_dictionary_answers_static_and_dynamic(srv):
    for n in (1, 2):
        got = dcz_get(srv, f"/pages/p{n}.html", SITE_DICT)
        assert got.content_encoding == "dcz", got
        body = dcz_decode(got.body, SITE_DICT)
        assert body == page(n)
        plain = request(srv.port, f"/pages/p{n}.html", "zstd")
        assert len(got.body) < len(plain.body) * 0.5, (len(got.body), len(plain.body))
        assert plain.content_encoding == "zstd"
    cgi = dcz_get(srv, "/pages/cgi/echo_token.py?t=1234", SITE_DICT)
    assert cgi.content_encoding == "dcz" and b"PIN: 1234" in dcz_decode(cgi.body, SITE_DICT)
    metrics = request(srv.port, "/metrics", None).body.decode()
    held = [l for l in metrics.splitlines() if l.startswith("multicompress_dictionary_memory_bytes")]
    assert held and int(held[0].split()[1]) >= len(SITE_DICT), held


@pytest.mark.parametrize("case", ["missing", "empty", "directory", "no-match"])
def test_mc_498_08_bad_site_dictionary_stops_startup(env, tmp_path, case):
    f = tmp_path / "site.dict"
    arg = "match=/*"
    if case == "empty":
        f.write_bytes(b"")
    elif case == "directory":
        f.mkdir()
    elif case == "no-match":
        f.write_bytes(SITE_DICT)
        arg = "id=x"
    s = HttpdServer(env, "dict-bad-site",
                    extra_conf=f'MultiCompressDictionary /d.dict "{f}" {arg}\n')
    p = s.check_config()
    out = p.stdout + p.stderr
    assert p.returncode != 0 and "MultiCompressDictionary" in out, out
    assert str(f) in out or case == "no-match", out


def test_mc_498_09_quoted_values_as_in_the_header(env, tmp_path, make_server):
    """`match="/*"` as an administrator copies it from the header: httpd keeps the quotes
    inside the word; the module takes the value between them."""
    f = tmp_path / "site.dict"
    f.write_bytes(SITE_DICT)
    s = make_server(
        "dict-quoted", site_template=None,
        extra_conf=f'MultiCompressDictionary /q.dict "{f}" match="/static/*" dest="document" '
                   'id="q-1"\n<Directory "@HTDOCS@/static">\n    Require all granted\n'
                   '    MultiCompressUseAsDictionary "/static/*" dest="document" id="page-1"\n'
                   '    Header set Cache-Control public\n</Directory>\n',
        extra_modules=["socache_shmcb"]).start()
    d = request(s.port, "/q.dict", "identity")
    assert d.status == 200 and d.body == SITE_DICT
    assert d.header("Use-As-Dictionary") == 'match="/static/*", match-dest=("document"), id="q-1"'
    page = request(s.port, "/static/page.html", "identity")
    assert page.status == 200
    assert page.header("Link") == '</q.dict>; rel="compression-dictionary"', page
    assert page.header("Use-As-Dictionary") == \
        'match="/static/*", match-dest=("document"), id="page-1"', page


@pytest.mark.log_allow(r"MC00031")
def test_mc_498_10_delta_for_a_hash_that_shares_the_file_name(srv):
    """The file name holds 64 bits of the dictionary's hash: a request naming another hash with
    the same first 64 bits never gets the delta, also after the same child has checked the
    file's header for the right one."""
    v2, v3 = srv.files["a/app.7e41d09c.js"], srv.files["a/app.b27e04aa.js"]
    right = hashlib.sha256(v2).digest()
    forged = right[:8] + bytes(32 - 8)
    delta = (srv.htdocs / "a" / f"app.b27e04aa.js.dcz-{right[:8].hex()}").read_bytes()
    for _ in range(6):
        got = get(srv, "/a/app.b27e04aa.js", AE,
                  headers=[("Available-Dictionary", available(v2))])
        assert got.source == "sidecar" and got.resp.body == delta, got.resp
        assert dcz_decode(got.resp.body, v2) == v3
        bad = get(srv, "/a/app.b27e04aa.js", AE,
                  headers=[("Available-Dictionary", f":{base64.b64encode(forged).decode()}:")])
        assert bad.resp.status == 200 and bad.resp.content_encoding != "dcz", bad.resp
        assert bad.resp.body != delta


def test_mc_498_11_delta_gone_after_it_was_sent(srv):
    """A child that has sent a delta does not lstat it again (the access subrequest's stat is
    the check): removed while the file stays as it is, the next responses fall back (live dcz
    against the dictionary this server holds), in every child; written again, it is sent."""
    v2, v3 = srv.files["a/app.7e41d09c.js"], srv.files["a/app.b27e04aa.js"]
    path = srv.htdocs / "a" / f"app.b27e04aa.js.dcz-{hashlib.sha256(v2).hexdigest()[:16]}"
    delta = path.read_bytes()
    ask = [("Available-Dictionary", available(v2))]
    for _ in range(8):
        got = get(srv, "/a/app.b27e04aa.js", AE, headers=ask)
        assert got.source == "sidecar" and got.resp.body == delta, got.resp
    mtime = path.stat().st_mtime
    path.unlink()
    for _ in range(8):
        got = get(srv, "/a/app.b27e04aa.js", AE, headers=ask)
        assert got.resp.status == 200 and got.source == "live", (got.source, got.resp)
        assert got.resp.content_encoding == "dcz" and dcz_decode(got.resp.body, v2) == v3
    write_file(path, delta, mtime)
    for _ in range(8):
        got = get(srv, "/a/app.b27e04aa.js", AE, headers=ask)
        assert got.source == "sidecar" and got.resp.body == delta, got.resp
