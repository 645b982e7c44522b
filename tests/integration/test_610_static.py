# SPDX-License-Identifier: Apache-2.0
"""MultiCompressStatic: precompressed sidecars FILE.zst / FILE.br / FILE.gz.

A fresh sidecar of the negotiated encoding is sent as it is on disk, with the original's
Content-Type, ETag (plus the coding's suffix) and Last-Modified, the sidecar's Content-Length and
Vary: Accept-Encoding; HEAD and 304 work; a stale, missing, unreadable or unsafe (zstd window
over 8 MiB) sidecar means live compression; Range means an identity 206. The source note
(`MultiCompressNote source`) and MULTICOMPRESS_SOURCE tell which path served each response.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mc_bodies import static_file, text_body
from mc_client import assert_vary_once, suffixed
from mc_decode import ZSTD_MAX_WINDOW, decode, zstd_window
from mc_server import HttpdServer
from mc_stores import (SOURCE_LOG_CONF, SUFFIX, Sourced, compress, copy_static, get,
                       log_lines_matching, reference, set_mtime, write_file, write_sidecar)

CODINGS = ("zstd", "br", "gzip")
TEXT_FILES = ("page.html", "style.css", "app.js", "data.json", "logo.svg", "license.txt")
BIG = 9 * 1024 * 1024  # over the 8 MiB zstd window that browsers accept

SITE = SOURCE_LOG_CONF + """
# sidecars on, every encoding enabled (deflate has no sidecar convention)
Alias /s "@HTDOCS@/side"
<Directory "@HTDOCS@/side">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
    MultiCompressEncodings zstd br gzip deflate
</Directory>
# same files and sidecars, MultiCompressStatic not set
Alias /off "@HTDOCS@/side-off"
<Directory "@HTDOCS@/side-off">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Directory>
# MultiCompressStatic On, but none of our filters on the response
Alias /nofilter "@HTDOCS@/side-nofilter"
<Directory "@HTDOCS@/side-nofilter">
    MultiCompressStatic On
</Directory>
# the BROTLI_COMPRESS filter only: a .zst or .gz sidecar is never sent
Alias /bronly "@HTDOCS@/side-bronly"
<Directory "@HTDOCS@/side-bronly">
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
"""
DIRS = {"/s": "side", "/off": "side-off", "/nofilter": "side-nofilter", "/bronly": "side-bronly"}


@pytest.fixture(scope="module")
def srv(env):
    """One server for the module; every test works on its own copies of the files."""
    s = HttpdServer(env, "static", site_template=None, extra_conf=SITE,
                    htdocs_copies=[(d, "static") for d in DIRS.values()])
    try:
        s.start()
        # sidecars, newer than the file: every text file in /s/, page.html elsewhere
        for d in DIRS.values():
            names = (*TEXT_FILES, "image.png", "tiny.html") if d == "side" else ("page.html",)
            for name in names:
                for c in CODINGS:
                    write_sidecar(s.htdocs / d / name, c, newer_by=60)
        yield s
    finally:
        s.stop()


def copy_of(srv: HttpdServer, name: str, prefix: str = "/s") -> tuple[str, Path]:
    return copy_static(srv, name, prefix, DIRS[prefix])


def assert_source(got: Sourced, source: str) -> None:
    assert got.note == source, f"source note {got.note!r}, expected {source!r}: {got.resp!r}"
    assert got.env == source, f"MULTICOMPRESS_SOURCE {got.env!r}, expected {source!r}"


def assert_sidecar(got: Sourced, ref: Sourced, coding: str, sidecar: bytes, original: bytes, *,
                   head: bool = False) -> None:
    """Every header of a sidecar response, and its body: the sidecar's bytes as they are."""
    r = got.resp
    assert r.status == 200, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert r.header_all("Content-Length") == [str(len(sidecar))], r
    assert r.header("Content-Type") == ref.resp.header("Content-Type"), r
    assert_vary_once(r)
    assert r.header_all("ETag") == [suffixed(ref.resp.header("ETag"), coding)], r
    assert r.header_all("Last-Modified") == [ref.resp.header("Last-Modified")], r
    for h in ("Content-Range", "Content-MD5", "Content-Digest", "Repr-Digest"):
        assert r.header(h) is None, r
    if head:
        assert r.body == b"", r
    else:
        assert r.body == sidecar, "not the sidecar's bytes"
        assert decode(r.body, coding) == original
    assert_source(got, "sidecar")


def assert_live(got: Sourced, coding: str, original: bytes, not_body: bytes | None = None) -> None:
    r = got.resp
    assert r.status == 200, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert decode(r.body, coding) == original
    cl = r.header_all("Content-Length")
    assert cl in ([], [str(len(r.body))]), r
    assert_vary_once(r)
    if not_body is not None:
        assert r.body != not_body, "the sidecar was sent"
    assert_source(got, "live")


def assert_identity(got: Sourced, original: bytes, source: str | None = "identity") -> None:
    r = got.resp
    assert r.status == 200, r
    assert not r.header_all("Content-Encoding"), r
    assert r.body == original
    if source is not None:
        assert_source(got, source)


# ---- each encoding, each text type

@pytest.mark.parametrize("name", TEXT_FILES)
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_01_sidecar_served(srv, name, coding):
    url = f"/s/{name}"
    original = static_file(srv.env, name)
    sidecar = (srv.htdocs / "side" / (name + SUFFIX[coding])).read_bytes()
    ref = reference(srv, url)
    got = get(srv, url, coding)
    assert_sidecar(got, ref, coding, sidecar, original)
    # the sidecar is a different file with its own mtime: Last-Modified is still the original's
    assert (srv.htdocs / "side" / (name + SUFFIX[coding])).stat().st_mtime > \
        (srv.htdocs / "side" / name).stat().st_mtime


@pytest.mark.parametrize("ae,coding", [
    ("zstd, br, gzip", "zstd"),           # server order
    ("gzip, br, zstd", "zstd"),
    ("br;q=1, zstd;q=0.5, gzip;q=0.1", "br"),
    ("gzip;q=0.9, br;q=0.8, zstd;q=0", "gzip"),
    ("x-gzip", "gzip"),
    ("*", "zstd"),
    ("*;q=0.5, br", "br"),
])
def test_mc_610_02_sidecar_of_negotiated_encoding(srv, ae, coding):
    url, path = "/s/page.html", srv.htdocs / "side" / "page.html"
    ref = reference(srv, url)
    got = get(srv, url, ae)
    assert_sidecar(got, ref, coding, Path(str(path) + SUFFIX[coding]).read_bytes(),
                   path.read_bytes())


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_03_head(srv, coding):
    url = "/s/style.css"
    sidecar = (srv.htdocs / "side" / ("style.css" + SUFFIX[coding])).read_bytes()
    ref = reference(srv, url)
    got = get(srv, url, coding, method="HEAD")
    assert_sidecar(got, ref, coding, sidecar, b"", head=True)
    # the same headers as the GET
    full = get(srv, url, coding)
    for h in ("Content-Encoding", "Content-Length", "Content-Type", "ETag", "Last-Modified",
              "Vary"):
        assert got.resp.header_all(h) == full.resp.header_all(h), h


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_04_not_modified(srv, coding, method):
    url = "/s/app.js"
    ref = reference(srv, url)
    etag = suffixed(ref.resp.header("ETag"), coding)
    for cond in ([("If-None-Match", etag)],
                 [("If-None-Match", f'"nope", {etag}')],
                 [("If-Modified-Since", ref.resp.header("Last-Modified"))]):
        got = get(srv, url, coding, cond, method=method)
        r = got.resp
        assert r.status == 304, (cond, r)
        assert r.body == b""
        assert r.header_all("ETag") == [etag], (cond, r)
        assert_vary_once(r)
        assert r.header("Content-Encoding") in (None, coding), r
    # an ETag that does not match: the sidecar itself
    got = get(srv, url, coding, [("If-None-Match", '"other"')], method=method)
    sidecar = (srv.htdocs / "side" / ("app.js" + SUFFIX[coding])).read_bytes()
    assert_sidecar(got, ref, coding, sidecar, static_file(srv.env, "app.js"),
                   head=method == "HEAD")


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_05_freshness(srv, coding):
    """At least as new as the file: served. Older (the file was touched): live compression."""
    url, path = copy_of(srv, "data.json")
    original = path.read_bytes()
    # times in the past: httpd caps Last-Modified at the time of the request
    t0 = time.time() - 1000
    set_mtime(path, t0)
    side = write_sidecar(path, coding, newer_by=0)  # same mtime: fresh
    sidecar = side.read_bytes()
    ref = reference(srv, url)
    assert_sidecar(get(srv, url, coding), ref, coding, sidecar, original)

    # touch the original: the sidecar is now stale
    set_mtime(path, t0 + 100)
    assert_live(get(srv, url, coding), coding, original, not_body=sidecar)
    # nor is a HEAD answered from the stale sidecar
    head = get(srv, url, coding, method="HEAD")
    assert head.resp.status == 200 and head.resp.header("Content-Encoding") == coding
    assert head.resp.header("Content-Length") != str(len(sidecar)), head.resp
    assert head.note != "sidecar"

    # the sidecar is made again (newer): served again, with the new Last-Modified
    set_mtime(side, t0 + 200)
    ref2 = reference(srv, url)
    assert ref2.resp.header("Last-Modified") != ref.resp.header("Last-Modified")
    assert_sidecar(get(srv, url, coding), ref2, coding, sidecar, original)


def test_mc_610_06_missing_sidecar_for_negotiated_encoding(srv):
    """Only FILE.gz exists: zstd and br clients get live compression, never the gzip file."""
    url, path = copy_of(srv, "logo.svg")
    original = path.read_bytes()
    gz = write_sidecar(path, "gzip", newer_by=1).read_bytes()
    ref = reference(srv, url)
    assert_live(get(srv, url, "zstd, br, gzip"), "zstd", original)
    assert_live(get(srv, url, "br"), "br", original)
    assert_sidecar(get(srv, url, "gzip"), ref, "gzip", gz, original)
    assert_sidecar(get(srv, url, "zstd;q=0, br;q=0, gzip"), ref, "gzip", gz, original)


@pytest.mark.parametrize("ae,headers", [
    (None, []),
    ("identity", []),
    ("compress", []),
    ("zstd;q=0, br;q=0, gzip;q=0", []),
    ("zstd, br, gzip", [("Cache-Control", "no-transform")]),
], ids=["no-ae", "identity", "unknown", "all-q0", "no-transform"])
def test_mc_610_07_not_accepted_identity(srv, ae, headers):
    """Sidecars are never sent to a client that did not accept their encoding."""
    got = get(srv, "/s/page.html", ae, headers)
    assert_identity(got, static_file(srv.env, "page.html"))
    assert_vary_once(got.resp)


@pytest.mark.parametrize("rng,start,end", [("bytes=0-99", 0, 99), ("bytes=1000-", 1000, None),
                                           ("bytes=-500", None, None)])
@pytest.mark.parametrize("ae", ["zstd", "br", "gzip", "zstd, br, gzip"])
def test_mc_610_08_range_is_identity(srv, ae, rng, start, end):
    """Range: the identity 206 of the original, not a slice of a sidecar."""
    original = static_file(srv.env, "page.html")
    got = get(srv, "/s/page.html", ae, [("Range", rng)])
    r = got.resp
    assert r.status == 206, r
    assert not r.header_all("Content-Encoding"), r
    if start is None:
        start, end = len(original) - 500, len(original) - 1
    elif end is None:
        end = len(original) - 1
    assert r.body == original[start:end + 1]
    assert r.header("Content-Range") == f"bytes {start}-{end}/{len(original)}", r
    assert got.note != "sidecar" and got.env != "sidecar", got


def test_mc_610_09_range_resumes_identity_download(srv):
    """A client resuming with If-Range (the ETag of the identity 200) gets its 206."""
    original = static_file(srv.env, "license.txt")
    ref = reference(srv, "/s/license.txt")
    got = get(srv, "/s/license.txt", "zstd, br, gzip",
              [("Range", "bytes=100-"), ("If-Range", ref.resp.header("ETag"))])
    assert got.resp.status == 206, got.resp
    assert not got.resp.header_all("Content-Encoding")
    assert got.resp.body == original[100:]


@pytest.fixture(scope="module")
def big(srv):
    """A 9 MiB text file (shared by the window tests; it is only read)."""
    data = text_body(BIG)
    path = write_file(srv.htdocs / "side" / "big.txt", data, time.time() - 1000)
    return "/s/big.txt", path, data


@pytest.mark.parametrize("variant", ["single-segment", "window-descriptor"])
def test_mc_610_10_zstd_window_over_8mib_not_served(srv, big, log_allow, variant):
    """A zstd sidecar whose frame needs more than 8 MiB (RFC 9659) falls back to live zstd."""
    log_allow.append(r"MC00031")
    url, path, data = big
    kw = ({"zstd_window_log": 24} if variant == "single-segment"
          else {"zstd_window_log": 24, "zstd_content_size": False})
    side = write_sidecar(path, "zstd", level=3, newer_by=1, **kw).read_bytes()
    assert zstd_window(side) > ZSTD_MAX_WINDOW  # the sidecar is really unsafe
    mark = srv.log_size()
    got = get(srv, url, "zstd")
    assert_live(got, "zstd", data, not_body=side)
    assert zstd_window(got.resp.body) <= ZSTD_MAX_WINDOW
    warn = log_lines_matching(srv, r"MC00031", mark)
    assert warn and "big.txt.zst" in warn[0], srv.log_lines(mark)
    # other encodings are not affected: br has no sidecar here, gzip neither
    head = get(srv, url, "zstd", method="HEAD")
    assert head.resp.status == 200 and head.note != "sidecar"


def test_mc_610_11_zstd_window_8mib_served(srv, big):
    """The control: the same 9 MiB file with an 8 MiB window (2^23) is served as it is."""
    url, path, data = big
    side = write_sidecar(path, "zstd", level=3, newer_by=1, zstd_window_log=23).read_bytes()
    assert zstd_window(side) <= ZSTD_MAX_WINDOW
    ref = reference(srv, url)
    assert_sidecar(get(srv, url, "zstd"), ref, "zstd", side, data)


def test_mc_610_12_unreadable_sidecar(srv, log_allow):
    """A sidecar httpd's children cannot open: live compression and a warning, never an error."""
    log_allow.append(r"MC00030")
    if os.geteuid() != 0:
        pytest.skip("needs root: the children must run as another user than the file's owner")
    url, path = copy_of(srv, "style.css")
    original = path.read_bytes()
    side = write_sidecar(path, "br", newer_by=1)
    os.chmod(side, 0o000)
    mark = srv.log_size()
    assert_live(get(srv, url, "br"), "br", original)
    assert log_lines_matching(srv, r"MC00030", mark), srv.log_lines(mark)


def test_mc_610_13_sidecar_not_a_regular_file(srv):
    url, path = copy_of(srv, "app.js")
    original = path.read_bytes()
    Path(str(path) + ".zst").mkdir()
    assert_live(get(srv, url, "zstd"), "zstd", original)
    os.symlink("/dev/null", str(path) + ".br")
    assert_live(get(srv, url, "br"), "br", original)


def test_mc_610_15_deflate_has_no_sidecar(srv):
    """deflate is enabled in /s/, but there is no sidecar convention for it: live."""
    assert_live(get(srv, "/s/page.html", "deflate"), "deflate", static_file(srv.env, "page.html"))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_16_types_we_do_not_compress(srv, coding):
    """image.png has sidecars, but no filter would compress a PNG: the PNG as it is."""
    got = get(srv, "/s/image.png", coding)
    assert_identity(got, static_file(srv.env, "image.png"), source=None)
    assert got.note in ("-", "identity")


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_17_shorter_than_min_length(srv, coding):
    """tiny.html (105 bytes) is below MultiCompressMinLength: identity, not its sidecar."""
    got = get(srv, "/s/tiny.html", coding)
    assert_identity(got, static_file(srv.env, "tiny.html"))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_18_static_off(srv, coding):
    """Without MultiCompressStatic On, fresh sidecars are ignored."""
    name = "page.html"
    sidecar = (srv.htdocs / "side-off" / (name + SUFFIX[coding])).read_bytes()
    assert_live(get(srv, f"/off/{name}", coding), coding, static_file(srv.env, name),
                not_body=sidecar)


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_19_static_without_our_filter(srv, coding):
    """MultiCompressStatic On alone (no compressing filter on the type): the plain file."""
    got = get(srv, "/nofilter/page.html", coding)
    assert_identity(got, static_file(srv.env, "page.html"), source=None)
    assert got.note == "-" and got.env == "-", got


def test_mc_610_20_only_the_filters_encodings(srv):
    """/bronly has BROTLI_COMPRESS: its .br is served; a zstd/gzip-only client gets identity."""
    url, path = "/bronly/page.html", srv.htdocs / "side-bronly" / "page.html"
    original = path.read_bytes()
    ref = reference(srv, url)
    br = Path(str(path) + ".br").read_bytes()
    assert_sidecar(get(srv, url, "zstd, br, gzip"), ref, "br", br, original)
    assert_identity(get(srv, url, "zstd, gzip"), original)


def test_mc_610_21_sidecar_content_is_not_checked_but_length_is_its_own(srv):
    """A sidecar is sent as it is: its Content-Length is the sidecar's, whatever the file's."""
    url, path = copy_of(srv, "license.txt")
    original = path.read_bytes()
    # a much smaller sidecar made at a low level and a bigger one made at the lowest gzip level:
    # both are sent byte for byte with their own lengths
    ref = reference(srv, url)
    for level in (1, 9):
        side = write_sidecar(path, "gzip", newer_by=level, level=level).read_bytes()
        assert_sidecar(get(srv, url, "gzip"), ref, "gzip", side, original)


def test_mc_610_22_not_for_a_subdirectory_index_or_missing_file(srv):
    """A request that the default handler would not serve as a file gets no sidecar."""
    # a missing file whose sidecar exists
    path = srv.htdocs / "side" / "ghost.html"
    write_file(Path(str(path) + ".gz"), compress(b"<p>ghost</p>" * 100, "gzip"))
    got = get(srv, "/s/ghost.html", "gzip")
    assert got.resp.status == 404, got.resp
    assert got.resp.header("Content-Encoding") is None


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_610_23_sidecar_gone_after_it_was_sent(srv, coding):
    """A child does not look a sidecar it has sent up again with its own lstat (the access
    subrequest's stat is the check): one removed, or made stale, while FILE stays as it is means
    live compression from the next request on, in every child; one written again is sent."""
    url, path = copy_of(srv, "app.js")
    original = path.read_bytes()
    side = write_sidecar(path, coding, newer_by=60)
    sidecar = side.read_bytes()
    ref = reference(srv, url)
    rounds = 8  # new connections: every child has sent it
    for _ in range(rounds):
        assert_sidecar(get(srv, url, coding), ref, coding, sidecar, original)
    side.unlink()
    for _ in range(rounds):
        assert_live(get(srv, url, coding), coding, original)
    side = write_sidecar(path, coding, newer_by=60)
    for _ in range(rounds):
        assert_sidecar(get(srv, url, coding), ref, coding, sidecar, original)
    set_mtime(side, path.stat().st_mtime - 100)  # older than FILE, which is unchanged
    for _ in range(rounds):
        assert_live(get(srv, url, coding), coding, original, not_body=sidecar)
    assert reference(srv, url).resp.header("ETag") == ref.resp.header("ETag")
