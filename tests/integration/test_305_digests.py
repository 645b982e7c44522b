# SPDX-License-Identifier: Apache-2.0
"""Integrity fields of compressed responses (RFC 9530, and the Unencoded-Digest draft).

- Where the whole compressed body is known before the headers go out (the one-call path for
  gzip and zstd, the held encoder output for br, sidecars, cache hits), the handler's
  Content-Digest and Repr-Digest are made again with the same algorithms for the bytes sent:
  checked here by hashing the body on the wire with hashlib, and decoding it. Members for other
  algorithms (md5) are left out.
- A digest that does not describe the body the handler sent is not made true: dropped, with one
  log line. A malformed one is dropped with one log line, never sent on as if made again.
- A streamed body (EOS not in the first brigade) drops them, as before.
- Unencoded-Digest describes the bytes before content coding: it passes untouched through every
  compressed response (a regression check: it passed before this change too).
"""
from __future__ import annotations

import base64
import hashlib
import time
from urllib.parse import quote

import pytest

from mc_bodies import mctest_body, static_file
from mc_client import assert_encoded, request
from mc_drop_in import start_dropin, stop_checked
from mc_stores import SUFFIX, set_mtime, write_sidecar

CODINGS = ("gzip", "br", "zstd")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def field(data: bytes, *algorithms: str) -> str:
    """A Content-Digest / Repr-Digest value for `data`."""
    make = {"sha-256": hashlib.sha256, "sha-512": hashlib.sha512, "md5": hashlib.md5}
    return ", ".join(f"{a}=:{b64(make[a](data).digest())}:" for a in algorithms)


SHAPES_SITE = r"""
<Location /shapes/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
</Location>
"""

PAGE = "page.html"

# The digests are set before the handler (mod_headers "early"), so the static handler and the
# filter see them as the handler's. Server-wide: every request of this server gets the digests
# of page.html, so any other file's are wrong.
STATIC_SITE = r"""
Header set Content-Digest "{cd}" early
Header set Repr-Digest "{rd}" early
Header set Unencoded-Digest "{ud}" early
Alias /live "@HTDOCS@/live"
<Directory "@HTDOCS@/live">
    AddOutputFilterByType MULTICOMPRESS text/html text/css
</Directory>
Alias /side "@HTDOCS@/side"
<Directory "@HTDOCS@/side">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressStatic On
</Directory>
Alias /cache "@HTDOCS@/cache"
<Directory "@HTDOCS@/cache">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressCache On
</Directory>
"""


# A file over 256 KiB, which the module copies rather than maps: its digests are checked from
# the copied pieces, from the bucket's start.
LARGE_DOC = "big/large.txt"
LARGE = mctest_body(700_001)


@pytest.fixture(scope="module")
def shapes(env):
    srv = start_dropin(env, "t305-shapes", SHAPES_SITE, files={LARGE_DOC: LARGE})
    yield srv
    stop_checked(srv)


@pytest.fixture(scope="module")
def static(env):
    page = static_file(env, PAGE)
    site = STATIC_SITE.format(cd=field(page, "sha-256"), rd=field(page, "sha-512", "md5"),
                              ud=field(page, "sha-256"))
    files = {f"{d}/{PAGE}": page for d in ("live", "side", "cache")}
    files["live/style.css"] = static_file(env, "style.css")
    srv = start_dropin(env, "t305-static", site, files=files, modules=["socache_shmcb"])
    # Files older than a second get a strong ETag (and the cache keys them by mtime).
    for d in ("live", "side", "cache"):
        set_mtime(srv.htdocs / d / PAGE, time.time() - 1000)
    for coding in CODINGS:
        write_sidecar(srv.htdocs / "side" / PAGE, coding, newer_by=1)
    yield srv
    stop_checked(srv)


def shapes_url(size: int, shape: str = "heap", **digests: str) -> str:
    q = "&".join(f"{k}={quote(v, safe='')}" for k, v in digests.items())
    return f"/shapes/x?shape={shape}&size={size}&{q}"


def assert_digests_of_wire(resp, content: tuple[str, ...], repr_: tuple[str, ...]) -> None:
    """Content-Digest and Repr-Digest hold exactly `content` / `repr_` algorithms, each the
    digest of the bytes on the wire."""
    assert resp.header("Content-Digest") == field(resp.body, *content), resp.headers
    assert resp.header("Repr-Digest") == field(resp.body, *repr_), resp.headers


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_305_01_whole_body_made_again(shapes, coding):
    """gzip and zstd: the one-call path; br: the encoder's output held until EOS."""
    body = mctest_body(20000)
    ud = field(body, "sha-256", "sha-512")
    url = shapes_url(20000, cd=field(body, "sha-256"), rd=field(body, "sha-512", "md5"), ud=ud)
    r = request(shapes.port, url, coding)
    assert_encoded(r, coding, body)
    assert r.header("Content-Length") == str(len(r.body))
    assert_digests_of_wire(r, ("sha-256",), ("sha-512",))
    assert r.header("Unencoded-Digest") == ud
    # A client that takes identity gets the handler's fields as they were.
    ident = request(shapes.port, url, None)
    assert ident.body == body and ident.content_encoding is None
    assert ident.header("Content-Digest") == field(body, "sha-256")
    assert ident.header("Repr-Digest") == field(body, "sha-512", "md5")


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_305_02_both_algorithms_and_err_headers(shapes, coding):
    """Several algorithms in one field keep their order; a field in err_headers_out counts."""
    body = mctest_body(9000)
    url = (shapes_url(9000, rd=field(body, "sha-512", "sha-256")) +
           f"&cderr={quote(field(body, 'sha-256'), safe='')}")
    r = request(shapes.port, url, coding)
    assert_encoded(r, coding, body)
    assert r.header_all("Content-Digest") == [field(r.body, "sha-256")]
    assert r.header("Repr-Digest") == field(r.body, "sha-512", "sha-256")


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_305_03_streamed_drops_them(shapes, coding):
    """EOS in a brigade of its own: the compressed length is not known before the headers. (A
    regression check: streamed bodies dropped them before too.)"""
    body = mctest_body(30000)
    ud = field(body, "sha-256")
    url = shapes_url(30000, "eosalone", cd=field(body, "sha-256"), rd=field(body, "sha-256"),
                     ud=ud) + "&chunk=7000"
    r = request(shapes.port, url, coding)
    assert_encoded(r, coding, body)
    assert r.header("Content-Digest") is None and r.header("Repr-Digest") is None, r.headers
    assert r.header("Unencoded-Digest") == ud


@pytest.mark.parametrize("bad", [
    "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",   # a token, not a byte sequence
    "sha-256=:AAAA:",                                         # a wrong length
    "sha-256=:" + b64(hashlib.sha256(b"x").digest()) + ":,",  # not a dictionary
    "SHA-256=" + b64(hashlib.sha256(b"x").digest()),          # RFC 3230's Digest syntax
])
@pytest.mark.log_allow(r"MC00300")
def test_mc_305_04_malformed_dropped_with_one_line(shapes, bad):
    body = mctest_body(20000)
    mark = shapes.log_size()
    r = request(shapes.port, shapes_url(20000, cd=bad, rd=field(body, "sha-256")), "gzip")
    assert_encoded(r, "gzip", body)
    assert r.header("Content-Digest") is None, r.headers
    assert r.header("Repr-Digest") == field(r.body, "sha-256"), "the good field is still made"
    lines = [l for l in shapes.log_lines(mark) if "MC00300" in l]
    assert len(lines) == 1 and "Content-Digest" in lines[0], lines


@pytest.mark.log_allow(r"MC00301")
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_305_05_wrong_digest_not_made_true(shapes, coding):
    body = mctest_body(20000)
    mark = shapes.log_size()
    url = shapes_url(20000, cd=field(body + b"!", "sha-256"), rd=field(body, "sha-512"))
    r = request(shapes.port, url, coding)
    assert_encoded(r, coding, body)
    assert r.header("Content-Digest") is None, r.headers
    assert r.header("Repr-Digest") == field(r.body, "sha-512")
    lines = [l for l in shapes.log_lines(mark) if "MC00301" in l]
    assert len(lines) == 1 and "Content-Digest" in lines[0], lines


def test_mc_305_06_unknown_algorithms_left_out(shapes):
    """Members for algorithms not made again (md5, unixsum) go; a field with nothing else goes
    whole, without a warning."""
    body = mctest_body(20000)
    url = shapes_url(20000, cd=field(body, "md5", "sha-256"), rd="unixsum=30637")
    r = request(shapes.port, url, "br")
    assert_encoded(r, "br", body)
    assert r.header("Content-Digest") == field(r.body, "sha-256")
    assert r.header("Repr-Digest") is None


def check_static(srv, resp, coding: str, page: bytes) -> None:
    assert_encoded(resp, coding, page)
    assert_digests_of_wire(resp, ("sha-256",), ("sha-512",))
    assert resp.header("Unencoded-Digest") == field(page, "sha-256")


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_305_07_sidecar(env, static, coding):
    page = static_file(env, PAGE)
    r = request(static.port, f"/side/{PAGE}", coding)
    check_static(static, r, coding, page)
    assert r.body == (static.htdocs / "side" / (PAGE + SUFFIX[coding])).read_bytes()
    head = request(static.port, f"/side/{PAGE}", coding, method="HEAD")
    assert head.header("Content-Digest") == r.header("Content-Digest")
    assert head.header("Repr-Digest") == r.header("Repr-Digest")


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_305_08_cache_hit(env, static, coding):
    page = static_file(env, PAGE)
    first = request(static.port, f"/cache/{PAGE}", coding)  # a miss: live, stored
    check_static(static, first, coding, page)
    for _ in range(50):
        hit = request(static.port, f"/cache/{PAGE}", coding)
        check_static(static, hit, coding, page)
        if hit.body != first.body:  # the stronger copy the worker stored
            break
        time.sleep(0.1)


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_305_09_static_live(env, static, coding):
    page = static_file(env, PAGE)
    check_static(static, request(static.port, f"/live/{PAGE}", coding), coding, page)
    ident = request(static.port, f"/live/{PAGE}", None)
    assert ident.header("Content-Digest") == field(page, "sha-256")


@pytest.mark.log_allow(r"MC00301")
def test_mc_305_10_static_mismatch(env, static):
    """style.css gets page.html's digests (server-wide): they do not describe it."""
    mark = static.log_size()
    r = request(static.port, "/live/style.css", "gzip")
    assert_encoded(r, "gzip", static_file(env, "style.css"))
    assert r.header("Content-Digest") is None and r.header("Repr-Digest") is None
    assert r.header("Unencoded-Digest") == field(static_file(env, PAGE), "sha-256"), \
        "Unencoded-Digest is never touched, right or wrong"
    lines = [l for l in static.log_lines(mark) if "MC00301" in l]
    assert len(lines) == 2, lines  # one per field: Content-Digest, Repr-Digest


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("where", ["whole", "slice"])
def test_mc_305_11_large_file_checked_and_made_again(shapes, coding, where):
    """A file bucket over 256 KiB (the whole file, or 300 001 bytes from offset 4 097, which a
    read from the file's start would get wrong): the handler's digests are found to describe it,
    so they are made again for the compressed bytes."""
    body = LARGE if where == "whole" else LARGE[4097:4097 + 300_001]
    span = "" if where == "whole" else "&off=4097&len=300001"
    q = "&".join(f"{k}={quote(v, safe='')}" for k, v in
                 (("cd", field(body, "sha-256")), ("rd", field(body, "sha-512"))))
    r = request(shapes.port, f"/shapes/x?shape=file&file={LARGE_DOC}{span}&{q}", coding)
    assert_encoded(r, coding, body)
    assert_digests_of_wire(r, ("sha-256",), ("sha-512",))
