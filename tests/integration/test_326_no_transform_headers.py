# SPDX-License-Identifier: Apache-2.0
"""A `Cache-Control: no-transform` that mod_headers adds (`Header set`, `Header always set`, `Header
merge`, `Header always add`, in a <Location>) is honoured: the response goes out uncompressed,
whatever way our filter is attached (AddOutputFilterByType, SetOutputFilter, AddOutputFilter,
FilterProvider), for static files and CGI. mod_headers' FIXUP_HEADERS_OUT filter runs after ours
(same filter type, inserted later), so without looking ahead the header arrived after the decision.
(`Header ... early` in a <Location> is never applied by mod_headers: its post_read_request hook
reads the server's configuration; at server level it sets headers_out before the handler runs, which
was honoured already.) `MultiCompressNoTransform Ignore` keeps compressing."""
from urllib.parse import quote

import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_drop_in import CODINGS, start_dropin, stop_checked

ATTACH = {
    "bytype": "AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@",
    "setfilter": "SetOutputFilter MULTICOMPRESS",
    "addfilter": "AddOutputFilter MULTICOMPRESS .html .py",
    "provider": ("FilterDeclare mcsmart CONTENT_SET\n"
                 "    FilterProvider mcsmart MULTICOMPRESS \"%{CONTENT_TYPE} =~ m#^text/html#\"\n"
                 "    FilterChain mcsmart"),
    # two of our filters, by type (the first absorbs the other)
    "bytype2": "AddOutputFilterByType DEFLATE;BROTLI_COMPRESS;ZSTD @TEXT_TYPES@",
}
HEADER = {
    "set": "Header set Cache-Control no-transform",
    "always": "Header always set Cache-Control no-transform",
    # a handler's Cache-Control stays; no-transform joins it
    "merge": "Header merge Cache-Control no-transform",
    # the handler's max-age in headers_out, no-transform in err_headers_out
    "always-add": "Header always add Cache-Control no-transform",
}
SOURCES = ("static", "cgi")


def site() -> str:
    parts = [r"""
<Directory "@HTDOCS@/cgi-bin">
    Options +ExecCGI
</Directory>
"""]
    for a, attach in ATTACH.items():
        for h, header in HEADER.items():
            for src, prefix in (("static", "/st"), ("cgi", "/cg")):
                parts.append(f"<Location {prefix}/{a}/{h}/>\n    {attach}\n    {header}\n"
                             f"</Location>\n")
                # the same, and no Header line: compressed (the test's baseline)
                if h == "set":
                    parts.append(f"<Location {prefix}/{a}/none/>\n    {attach}\n</Location>\n")
                    parts.append(f"<Location {prefix}/{a}/ignore/>\n    {attach}\n    {header}\n"
                                 f"    MultiCompressNoTransform Ignore\n</Location>\n")
    # `<Location /st/A/H/>` must map to the static dir: one Alias per prefix
    aliases = []
    for a in ATTACH:
        aliases.append(f'AliasMatch "^/st/{a}/[^/]+/(.*)$" "@HTDOCS@/static/$1"')
        aliases.append(f'ScriptAliasMatch "^/cg/{a}/[^/]+/(.*)$" "@HTDOCS@/cgi-bin/$1"')
    return "\n".join(aliases) + "\n" + "".join(parts)


CGI_BODY_SIZE = 6000


def cgi_body() -> bytes:
    body = bytearray()
    n = 0
    while len(body) < CGI_BODY_SIZE:
        body += b"<p>line %06d: the quick brown fox jumps over the lazy dog</p>\n" % n
        n += 1
    return bytes(body[:CGI_BODY_SIZE])


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t326", site())
    yield s
    stop_checked(s)


def url(src: str, attach: str, header: str, cgi_headers: str = "") -> str:
    if src == "static":
        return f"/st/{attach}/{header}/page.html"
    q = f"size={CGI_BODY_SIZE}"
    if cgi_headers:
        q += "&h=" + quote(cgi_headers)
    return f"/cg/{attach}/{header}/headers.py?{q}"


def expected(env, src: str) -> bytes:
    return static_file(env, "page.html") if src == "static" else cgi_body()


def cache_control_tokens(r) -> list[str]:
    return [t.strip().lower() for v in r.header_all("Cache-Control") for t in v.split(",")]


@pytest.mark.parametrize("src", SOURCES)
@pytest.mark.parametrize("attach", ATTACH)
def test_mc_326_01_baseline_compressed(env, srv, src, attach):
    r = request(srv.port, url(src, attach, "none"), "gzip")
    assert_encoded(r, "gzip", expected(env, src))


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("src", SOURCES)
@pytest.mark.parametrize("header", HEADER)
@pytest.mark.parametrize("attach", ATTACH)
def test_mc_326_02_mod_headers_no_transform_honoured(env, srv, attach, header, src, coding):
    # a handler Cache-Control for the merge/add cases
    extra = "Cache-Control: max-age=60" if header in ("merge", "always-add") else ""
    if src == "static" and extra:
        pytest.skip("the default handler sets no Cache-Control")
    r = request(srv.port, url(src, attach, header, extra), coding)
    assert r.status == 200, r
    assert "no-transform" in cache_control_tokens(r), r.headers
    assert r.header("Content-Encoding") is None, (r.headers, attach, header, src)
    assert r.body == expected(env, src)
    if extra:
        assert "max-age=60" in cache_control_tokens(r), r.headers


@pytest.mark.parametrize("src", SOURCES)
@pytest.mark.parametrize("attach", ["bytype", "setfilter"])
def test_mc_326_03_ignore_keeps_compressing(env, srv, attach, src):
    r = request(srv.port, url(src, attach, "ignore"), "br")
    assert "no-transform" in cache_control_tokens(r), r.headers
    assert_encoded(r, "br", expected(env, src))


@pytest.mark.parametrize("attach", ["bytype", "setfilter"])
def test_mc_326_04_handler_no_transform_still_honoured(env, srv, attach):
    r = request(srv.port, url("cgi", attach, "none", "Cache-Control: no-transform"), "gzip")
    assert r.header("Content-Encoding") is None and r.body == cgi_body(), r.headers


@pytest.mark.parametrize("src", SOURCES)
def test_mc_326_05_head_as_get(env, srv, src):
    """HEAD gets the headers GET gets: no Content-Encoding with a late no-transform."""
    r = request(srv.port, url(src, "bytype", "set"), "gzip", method="HEAD")
    assert r.status == 200 and r.header("Content-Encoding") is None, r.headers
