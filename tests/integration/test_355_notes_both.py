# SPDX-License-Identifier: Apache-2.0
"""With DeflateFilterNote and BrotliFilterNote both set, each module's notes behave as that module's
did: mod_deflate's for gzip (and our deflate) responses only, mod_brotli's for br only;
MultiCompressNote for every coding. Formats as the old modules (ratio: whole percent of the input;
input and output: byte counts)."""
import re
import time

import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_drop_in import start_dropin, stop_checked, wait_access_line

NOTE_FORMAT = ('"%U %q gzr=%{gz_ratio}n gzi=%{gz_in}n gzo=%{gz_out}n '
               'brr=%{br_ratio}n bri=%{br_in}n bro=%{br_out}n '
               'mr=%{m_ratio}n me=%{m_enc}n shared=%{shared}n ce=%{Content-Encoding}o"')

SITE = r"""
# server-wide, as mod_deflate's and mod_brotli's notes are configured
DeflateFilterNote Ratio gz_ratio
DeflateFilterNote Input gz_in
DeflateFilterNote Output gz_out
BrotliFilterNote Ratio br_ratio
BrotliFilterNote Input br_in
BrotliFilterNote Output br_out
MultiCompressNote ratio m_ratio
MultiCompressNote encoding m_enc
LogFormat @NOTE_FORMAT@ notes
CustomLog "@GEN@/logs/notes_log" notes

Alias /multi "@HTDOCS@/static"
<Location /multi/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
</Location>
Alias /old "@HTDOCS@/static"
<Location /old/>
    AddOutputFilterByType DEFLATE;BROTLI_COMPRESS @TEXT_TYPES@
</Location>
# one name for both modules (a common LogFormat %{ratio}n setup): each fills it for its coding
Alias /shared "@HTDOCS@/static"
<Location /shared/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    DeflateFilterNote Ratio shared
    BrotliFilterNote shared
</Location>
""".replace("@NOTE_FORMAT@", NOTE_FORMAT)


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t355", SITE)
    yield s
    stop_checked(s)


_ids = iter(range(1, 1 << 30))


def note_line(srv, path: str, ae: str | None):
    tag = f"id={next(_ids)}-{time.monotonic_ns()}"
    r = request(srv.port, f"{path}?{tag}", ae)
    line = wait_access_line(srv, "notes_log", tag)
    return r, dict(re.findall(r"(\w+)=(\S+)", line.split(" ", 2)[2]))


def sizes(r, plain: bytes) -> tuple[str, str, str]:
    return (str(len(r.body) * 100 // len(plain)), str(len(plain)), str(len(r.body)))


@pytest.mark.parametrize("prefix", ["/multi/", "/old/"])
def test_mc_355_01_gzip_fills_deflate_notes_only(env, srv, prefix):
    page = static_file(env, "page.html")
    r, f = note_line(srv, f"{prefix}page.html", "gzip")
    assert_encoded(r, "gzip", page)
    assert (f["gzr"], f["gzi"], f["gzo"]) == sizes(r, page), f
    assert (f["brr"], f["bri"], f["bro"]) == ("-", "-", "-"), f
    assert (f["mr"], f["me"]) == (sizes(r, page)[0], "gzip"), f


@pytest.mark.parametrize("prefix", ["/multi/", "/old/"])
def test_mc_355_02_br_fills_brotli_notes_only(env, srv, prefix):
    page = static_file(env, "page.html")
    r, f = note_line(srv, f"{prefix}page.html", "br")
    assert_encoded(r, "br", page)
    assert (f["brr"], f["bri"], f["bro"]) == sizes(r, page), f
    assert (f["gzr"], f["gzi"], f["gzo"]) == ("-", "-", "-"), f
    assert (f["mr"], f["me"]) == (sizes(r, page)[0], "br"), f


def test_mc_355_03_zstd_fills_neither_old_module(env, srv):
    page = static_file(env, "page.html")
    r, f = note_line(srv, "/multi/page.html", "zstd")
    assert_encoded(r, "zstd", page)
    for k in ("gzr", "gzi", "gzo", "brr", "bri", "bro"):
        assert f[k] == "-", (k, f)
    assert (f["mr"], f["me"]) == (sizes(r, page)[0], "zstd"), f


def test_mc_355_04_deflate_coding_is_mod_deflates(env, srv):
    page = static_file(env, "page.html")
    r, f = note_line(srv, "/multi/page.html", "deflate")
    assert_encoded(r, "deflate", page)
    assert (f["gzr"], f["gzi"], f["gzo"]) == sizes(r, page), f
    assert f["brr"] == "-", f


def test_mc_355_05_identity_fills_nothing(srv):
    r, f = note_line(srv, "/multi/page.html", None)
    assert r.status == 200 and r.header("Content-Encoding") is None
    for k in ("gzr", "gzi", "gzo", "brr", "bri", "bro", "mr", "me"):
        assert f[k] == "-", (k, f)


@pytest.mark.parametrize("coding", ["gzip", "br"])
def test_mc_355_06_one_name_for_both(env, srv, coding):
    page = static_file(env, "page.html")
    r, f = note_line(srv, "/shared/page.html", coding)
    assert_encoded(r, coding, page)
    assert f["shared"] == sizes(r, page)[0], f
    r, f = note_line(srv, "/shared/page.html", "zstd")
    assert_encoded(r, "zstd", page)
    assert f["shared"] == "-", f
