# SPDX-License-Identifier: Apache-2.0
"""Response headers: Vary, Content-Length, Content-MD5 / Digest, HEAD, 304."""
from urllib.parse import quote

import pytest

from mc_bodies import mctest_body, static_file, text_body
from mc_client import assert_encoded, assert_vary_once, request


def cgi_headers(*headers: str, size: int = 4096, ct: str = "text/html") -> str:
    q = "&".join("h=" + quote(h) for h in headers)
    return f"/cgi-bin/headers.py?size={size}&ct={quote(ct)}" + (f"&{q}" if q else "")


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_300_01_vary_on_compressed_and_identity(env, main, coding):
    resp = request(main.port, "/mc/style.css", coding)
    assert_encoded(resp, coding, static_file(env, "style.css"))
    assert resp.vary_tokens() == ["accept-encoding"]


def test_mc_300_02_vary_identity_when_not_acceptable(env, main):
    """A client that accepts nothing enabled still learns that the response varies."""
    resp = request(main.port, "/mc/page.html", "compress;q=1, gzip;q=0, br;q=0, zstd;q=0")
    assert_encoded(resp, None, static_file(env, "page.html"))


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_300_03_vary_merged_with_header_append(env, main, coding):
    """mod_headers `Header append Vary Origin`: both members, each once."""
    resp = request(main.port, "/vary-origin/page.html", coding)
    assert_encoded(resp, coding, static_file(env, "page.html"))
    assert sorted(resp.vary_tokens()) == ["accept-encoding", "origin"]


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_300_04_vary_already_has_accept_encoding(env, main, coding):
    """`Header set Vary "accept-encoding, Origin"`: Accept-Encoding is not added again."""
    resp = request(main.port, "/vary-ae/page.html", coding)
    assert_encoded(resp, coding, static_file(env, "page.html"))
    assert sorted(resp.vary_tokens()) == ["accept-encoding", "origin"]


@pytest.mark.parametrize("vary_lines", [
    ["Vary: Origin"],
    ["Vary: Origin, Accept-Encoding"],
    ["Vary: accept-encoding"],
    ["Vary: Origin", "Vary: ACCEPT-ENCODING"],
    ["Vary: Cookie", "Vary: Origin"],
], ids=["origin", "origin-ae", "ae-lower", "two-lines", "cookie-origin"])
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_300_05_vary_from_cgi(main, coding, vary_lines):
    """An application's own Vary (from a CGI) is merged, never duplicated."""
    resp = request(main.port, cgi_headers(*vary_lines), coding)
    assert_encoded(resp, coding, text_body(4096))
    want = {t.strip().lower() for line in vary_lines for t in line.split(":", 1)[1].split(",")}
    want.add("accept-encoding")
    assert sorted(resp.vary_tokens()) == sorted(want)


@pytest.mark.parametrize("query,want", [
    ("vary=Origin", ["accept-encoding", "origin"]),
    ("vary=Origin,%20Accept-Encoding", ["accept-encoding", "origin"]),
    ("vary=accept-encoding", ["accept-encoding"]),
    ("vary=Cookie&vary2=Origin", ["accept-encoding", "cookie", "origin"]),
    ("vary=User-Agent&vary2=ACCEPT-ENCODING", ["accept-encoding", "user-agent"]),
], ids=["origin", "origin-ae", "ae-lower", "two-lines", "two-lines-ae"])
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_300_06_vary_from_handler(main, coding, query, want):
    """A handler's Vary in r->headers_out, there before our filter runs: kept and merged."""
    resp = request(main.port, f"/mctest/x?size=5000&{query}", coding)
    assert_encoded(resp, coding, mctest_body(5000))
    assert sorted(resp.vary_tokens()) == want


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_300_07_content_length_static(env, main, coding):
    """A static file arrives whole: Content-Length is absent or the compressed length."""
    resp = request(main.port, "/mc/page.html", coding)
    assert_encoded(resp, coding, static_file(env, "page.html"))
    cl = resp.header("Content-Length")
    assert cl is None or int(cl) == len(resp.body)
    assert cl != str(len(static_file(env, "page.html")))


DIGESTS = ["Content-MD5: Q2hlY2sgSW50ZWdyaXR5IQ==",
           "Content-Digest: sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:",
           "Repr-Digest: sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:"]


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_300_08_digests_removed(main, coding):
    resp = request(main.port, cgi_headers(*DIGESTS), coding)
    assert_encoded(resp, coding, text_body(4096))
    for h in ("Content-MD5", "Content-Digest", "Repr-Digest"):
        assert resp.header(h) is None, f"{h} survived compression"
    # identity keeps them (and shows the CGI really sends them)
    ident = request(main.port, cgi_headers(*DIGESTS), None)
    for h in ("Content-MD5", "Content-Digest", "Repr-Digest"):
        assert ident.header(h) is not None, h


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_300_09_head_same_headers_as_get(main, coding):
    get = request(main.port, "/mc/page.html", coding)
    head = request(main.port, "/mc/page.html", coding, method="HEAD")
    assert head.status == 200 and head.body == b""
    for h in ("Content-Encoding", "ETag", "Content-Type"):
        assert head.header(h) == get.header(h), h
    assert_vary_once(head)
    assert head.vary_tokens() == get.vary_tokens()


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_300_10_not_modified_keeps_vary_and_etag(main, coding):
    get = request(main.port, "/mc/page.html", coding)
    etag = get.header("ETag")
    assert etag and etag.endswith(f'-{coding}"')
    resp = request(main.port, "/mc/page.html", coding, headers=[("If-None-Match", etag)])
    assert resp.status == 304, resp
    assert resp.header("ETag") == etag
    assert resp.body == b""
    assert_vary_once(resp)


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_300_11_range_request_is_identity(env, main, coding):
    resp = request(main.port, "/mc/page.html", coding, headers=[("Range", "bytes=100-199")])
    assert resp.status == 206, resp
    assert resp.header("Content-Encoding") is None
    assert resp.body == static_file(env, "page.html")[100:200]


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_300_12_already_encoded_untouched(main, coding):
    body = text_body(4096)
    resp = request(main.port, cgi_headers("Content-Encoding: x-custom"), coding)
    assert resp.status == 200
    assert resp.header_all("Content-Encoding") == ["x-custom"]
    assert resp.body == body
