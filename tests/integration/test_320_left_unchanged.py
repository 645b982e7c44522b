# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: responses that go out unchanged. 204, 304, a
handler's 206 with Content-Range, a request with Range (an uncompressed 206 with the right bytes),
Cache-Control: no-transform in the request or the response (and MultiCompressNoTransform Ignore),
and bodies that already have a Content-Encoding (headers_out, err_headers_out, AddEncoding)."""
from urllib.parse import quote

import pytest

from mc_bodies import mctest_body, static_file, text_body
from mc_client import assert_encoded, request
from mc_drop_in import CODINGS, encode, start_dropin, stop_checked

ALL_AE = "zstd, br, gzip, deflate"

SITE = r"""
Alias /s "@HTDOCS@/static"
<Location /s/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Location>
Alias /nt-ignore "@HTDOCS@/static"
<Location /nt-ignore/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressNoTransform Ignore
</Location>
<Location /shapes/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressEncodings zstd br gzip deflate
</Location>
<Location /shapes-set/>
    SetHandler mctest-shapes
    SetOutputFilter MULTICOMPRESS
</Location>
<Location /shapes-nt-ignore/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressNoTransform Ignore
</Location>
ScriptAlias /cgi-bin/ "@HTDOCS@/cgi-bin/"
<Directory "@HTDOCS@/cgi-bin">
    Options +ExecCGI
    AddOutputFilterByType MULTICOMPRESS text/html
</Directory>
<Directory "@HTDOCS@/enc">
    # mime.types gives .gz/.zst a type of their own; the admin removes it, so the type is
    # that of the inner extension (text/html), which our filter is attached to.
    RemoveType .gz .br .zst
    AddEncoding gzip .gz
    AddEncoding br .br
    AddEncoding zstd .zst
    AddOutputFilterByType MULTICOMPRESS text/html
</Directory>
<Directory "@HTDOCS@/enc-set">
    RemoveType .gz .br .zst
    AddEncoding gzip .gz
    AddEncoding br .br
    AddEncoding zstd .zst
    SetOutputFilter MULTICOMPRESS
</Directory>
"""

EXT = {"gzip": "gz", "br": "br", "zstd": "zst"}


@pytest.fixture(scope="module")
def srv(env):
    page = static_file(env, "page.html")
    files = {}
    for d in ("enc", "enc-set"):
        for coding, ext in EXT.items():
            files[f"{d}/page.html.{ext}"] = encode(page, coding)
    s = start_dropin(env, "t320", SITE, files=files)
    yield s
    stop_checked(s)


def assert_identity(resp, expected: bytes, status: int = 200) -> None:
    assert resp.status == status, resp
    assert resp.header("Content-Encoding") is None, resp
    assert resp.body == expected


# ---- statuses

@pytest.mark.parametrize("ae", [ALL_AE, "gzip", "br", "zstd"])
def test_mc_320_01_204(srv, ae):
    for loc in ("/shapes/", "/shapes-set/"):
        r = request(srv.port, loc + "x?status=204", ae)
        assert_identity(r, b"", 204)


NOT_MODIFIED_SOURCES = {
    "handler-bytype": "/shapes/x?status=304&etag=%22h304%22",
    "handler-setoutputfilter": "/shapes-set/x?status=304&etag=%22h304%22",
    "cgi-bytype": "/cgi-bin/headers.py?h=" + quote("Status: 304 Not Modified") + "&h=" +
                  quote('ETag: "h304"'),
}


@pytest.mark.parametrize("ae,coding", [(ALL_AE, "zstd"), ("gzip", "gzip")])
@pytest.mark.parametrize("source", list(NOT_MODIFIED_SOURCES))
def test_mc_320_02_handler_304(srv, source, ae, coding):
    """A 304 made by a handler or CGI (its own conditional logic): no body, no
    Content-Encoding, and, like every 304, the Vary and ETag that its 200 carries (docs/contract.md), so a
    cache can match it to the stored compressed response."""
    path = NOT_MODIFIED_SOURCES[source]
    ok = request(srv.port, path.replace("status=304", "status=200")
                 .replace(quote("Status: 304 Not Modified"), quote("X-Status: 200")), ae)
    assert ok.status == 200 and ok.header_all("Content-Encoding") == [coding], ok
    assert ok.header_all("ETag") == [f'"h304-{coding}"'], ok
    r = request(srv.port, path, ae)
    assert_identity(r, b"", 304)
    assert r.vary_tokens() == ok.vary_tokens() == ["accept-encoding"], r
    assert r.header_all("ETag") == ok.header_all("ETag"), r


@pytest.mark.parametrize("ae", [ALL_AE, "gzip", "br", "zstd"])
def test_mc_320_03_handler_206_content_range(srv, ae):
    for loc in ("/shapes/", "/shapes-set/"):
        r = request(srv.port, loc + "x?shape=range&size=30000", ae)
        assert_identity(r, mctest_body(30000), 206)
        assert r.header("Content-Range") == "bytes 0-29999/60000"


# ---- Range requests: the uncompressed 206

@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("rng,start,end", [("bytes=100-199", 100, 200), ("bytes=0-0", 0, 1),
                                           ("bytes=-500", None, None),
                                           ("bytes=85000-", 85000, None)],
                         ids=["middle", "first-byte", "suffix", "open-end"])
def test_mc_320_04_range_static(env, srv, coding, rng, start, end):
    page = static_file(env, "page.html")
    r = request(srv.port, "/s/page.html", coding, headers=[("Range", rng)])
    want = page[-500:] if start is None else page[start:end]
    assert_identity(r, want, 206)
    # identity bytes keep the identity ETag (If-Range on resume compares against it)
    assert r.header_all("ETag") == request(srv.port, "/s/page.html", None).header_all("ETag")
    first = len(page) - len(want) if start is None else start
    last = len(page) - 1 if end is None else end - 1
    assert r.header("Content-Range") == f"bytes {first}-{last}/{len(page)}"


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_320_05_multi_range_static(env, srv, coding):
    """Two ranges: multipart/byteranges, each part the right uncompressed bytes."""
    page = static_file(env, "page.html")
    r = request(srv.port, "/s/page.html", coding, headers=[("Range", "bytes=0-9,1000-1099")])
    assert r.status == 206 and r.header("Content-Encoding") is None, r
    ctype = r.header("Content-Type")
    assert ctype.startswith("multipart/byteranges; boundary="), ctype
    boundary = ctype.split("boundary=", 1)[1].encode()
    parts = [p for p in r.body.split(b"--" + boundary) if p.strip() not in (b"", b"--")]
    bodies = [p.split(b"\r\n\r\n", 1)[1].rstrip(b"\r\n") for p in parts]
    assert bodies == [page[0:10], page[1000:1100]]


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("query", ["shape=file&file=static/style.css", "shape=heap&size=33676",
                                   "shape=mmap&file=static/style.css"])
def test_mc_320_06_range_handler(env, srv, coding, query):
    """A handler's whole body with EOS, cut by httpd's byterange filter after ours."""
    body = static_file(env, "style.css") if "file=" in query else mctest_body(33676)
    r = request(srv.port, "/shapes/x?" + query, coding, headers=[("Range", "bytes=2000-2999")])
    assert_identity(r, body[2000:3000], 206)


# ---- Cache-Control: no-transform

@pytest.mark.parametrize("cc", ["no-transform", "max-age=60, no-transform", "No-Transform",
                                'no-cache="x", no-transform'])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_320_07_no_transform_request(env, srv, coding, cc):
    r = request(srv.port, "/s/page.html", coding, headers=[("Cache-Control", cc)])
    assert_identity(r, static_file(env, "page.html"))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_320_08_no_transform_response(srv, coding):
    cgi = request(srv.port, "/cgi-bin/headers.py?size=8000&h=" +
                  quote("Cache-Control: public, no-transform"), coding)
    assert_identity(cgi, text_body(8000))
    h = request(srv.port, "/shapes/x?size=8000&cc=" + quote("no-transform"), coding)
    assert_identity(h, mctest_body(8000))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_320_09_no_transform_ignore(env, srv, coding):
    r = request(srv.port, "/nt-ignore/page.html", coding,
                headers=[("Cache-Control", "no-transform")])
    assert_encoded(r, coding, static_file(env, "page.html"))
    h = request(srv.port, "/shapes-nt-ignore/x?size=8000&cc=no-transform", coding)
    assert_encoded(h, coding, mctest_body(8000))


def test_mc_320_10_no_transform_only_where_said(env, srv):
    """Sanity for the tests above: without no-transform the same URLs are compressed."""
    assert_encoded(request(srv.port, "/s/page.html", "gzip"), "gzip", static_file(env, "page.html"))
    assert_encoded(request(srv.port, "/shapes/x?size=8000", "br"), "br", mctest_body(8000))
    assert_encoded(request(srv.port, "/cgi-bin/headers.py?size=8000", "zstd"), "zstd",
                   text_body(8000))


# ---- already encoded

@pytest.mark.parametrize("ae", [ALL_AE, "zstd", "br", "gzip", None])
@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("d", ["enc", "enc-set"])
def test_mc_320_11_addencoding_file(env, srv, d, coding, ae):
    """page.html.gz/.br/.zst with AddEncoding: sent as they are, encoded once."""
    ext = EXT[coding]
    r = request(srv.port, f"/{d}/page.html.{ext}", ae)
    assert r.status == 200
    assert r.header_all("Content-Encoding") == [coding], r
    assert r.header("Content-Type") == "text/html"
    assert r.body == (srv.htdocs / d / f"page.html.{ext}").read_bytes()
    assert r.decoded() == static_file(env, "page.html")


@pytest.mark.parametrize("where", ["ce", "ceerr"])
@pytest.mark.parametrize("ae", [ALL_AE, "zstd", "gzip"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_320_12_handler_content_encoding(env, srv, coding, ae, where):
    """A handler that sets Content-Encoding itself (headers_out or err_headers_out)."""
    ext = EXT[coding]
    for loc in ("/shapes/", "/shapes-set/"):
        r = request(srv.port, f"{loc}x?shape=file&file=enc/page.html.{ext}&{where}={coding}", ae)
        assert r.status == 200
        assert r.header_all("Content-Encoding") == [coding], r
        assert r.decoded() == static_file(env, "page.html")


@pytest.mark.parametrize("ce", ["x-custom", "compress", "GZIP"])
def test_mc_320_13_unknown_content_encoding(srv, ce):
    r = request(srv.port, f"/shapes/x?size=8000&ce={ce}", ALL_AE)
    assert r.status == 200
    assert r.header_all("Content-Encoding") == [ce]
    assert r.body == mctest_body(8000)


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_320_14_identity_content_encoding_is_compressed(srv, coding):
    """`Content-Encoding: identity` is no coding (docs/contract.md: "other than identity"): compressed,
    and the response names one coding only."""
    r = request(srv.port, "/shapes/x?size=8000&ce=identity", coding)
    assert r.status == 200
    assert r.header_all("Content-Encoding") == [coding], r
    assert r.decoded() == mctest_body(8000)


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("query", ["shape=eosalone&size=33676&chunk=5000",
                                   "shape=flush&size=33676&parts=3&delay=10"])
def test_mc_320_15_range_streamed_handler(srv, coding, query):
    """Range on a body that arrives in several brigades: httpd's byterange filter may give up
    (200 with the whole body) or cut the range; either way uncompressed and exact."""
    body = mctest_body(33676)
    r = request(srv.port, "/shapes/x?" + query, coding, headers=[("Range", "bytes=2000-2999")])
    assert r.header("Content-Encoding") is None, r
    if r.status == 206:
        assert r.body == body[2000:3000]
    else:
        assert r.status == 200 and r.body == body
