# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: compressed exactly once. SSI pages whose includes
are compressible and themselves covered by the filter (subrequests), internal redirects
(DirectoryIndex, mod_rewrite [PT] and per-directory rewrites), ErrorDocument bodies, and several of
our filters on one response (MULTICOMPRESS + DEFLATE + ZSTD + BROTLI_COMPRESS, attached in different
ways)."""
import pytest

from mc_bodies import static_file, text_body
from mc_client import assert_encoded, request
from mc_drop_in import CODINGS, start_dropin, stop_checked

SITE = r"""
Alias /s "@HTDOCS@/static"
<Location /s/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Location>
ScriptAlias /cgi-bin/ "@HTDOCS@/cgi-bin/"
<Directory "@HTDOCS@/cgi-bin">
    Options +ExecCGI
    AddOutputFilterByType MULTICOMPRESS text/html
</Directory>

# SSI: the page and every included document are covered by our filter
<Directory "@HTDOCS@/ssi">
    Options +Includes
    AddType text/html .shtml
    AddOutputFilter INCLUDES .shtml
    AddOutputFilterByType MULTICOMPRESS text/html text/css
</Directory>
# SSI, mod_deflate's documented idiom: the filters in one AddOutputFilter line
<Directory "@HTDOCS@/ssi2">
    Options +Includes
    AddType text/html .shtml
    AddOutputFilter INCLUDES;DEFLATE .shtml
    AddOutputFilterByType ZSTD text/html
</Directory>

# internal redirects
<Directory "@HTDOCS@/idx">
    DirectoryIndex index.html
    AddOutputFilterByType MULTICOMPRESS text/html
</Directory>
RewriteEngine On
RewriteRule ^/rw/(.*)$ /s/$1 [PT]
<Directory "@HTDOCS@/rwdir">
    Options +FollowSymLinks
    RewriteEngine On
    RewriteBase /rwdir/
    RewriteRule ^(.+)$ /s/$1 [L]
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Directory>

# ErrorDocument: the error page's own location has the filter
<Location /e404-set/>
    ErrorDocument 404 /errors-set/404.html
    SetOutputFilter MULTICOMPRESS
</Location>
Alias /errors-set "@HTDOCS@/errors"
<Location /errors-set/>
    SetOutputFilter MULTICOMPRESS
</Location>
# ... or is attached by type, with mod_filter's filter-errordocs (mod_filter skips non-200
# responses otherwise, for mod_deflate too)
<Location /e404-type/>
    ErrorDocument 404 /errors-type/404.html
</Location>
Alias /errors-type "@HTDOCS@/errors"
<Location /errors-type/>
    SetEnv filter-errordocs 1
    AddOutputFilterByType MULTICOMPRESS text/html
</Location>

# several of our filters on one response
Alias /many-type "@HTDOCS@/static"
<Location /many-type/>
    AddOutputFilterByType MULTICOMPRESS text/html text/css
    AddOutputFilterByType DEFLATE text/html text/css
    AddOutputFilterByType ZSTD text/html text/css
    AddOutputFilterByType BROTLI_COMPRESS text/html text/css
</Location>
Alias /many-set "@HTDOCS@/static"
<Location /many-set/>
    SetOutputFilter MULTICOMPRESS;DEFLATE;ZSTD
</Location>
Alias /many-mixed "@HTDOCS@/static"
<Location /many-mixed/>
    SetOutputFilter ZSTD
    AddOutputFilter DEFLATE html css
    AddOutputFilterByType MULTICOMPRESS text/html text/css
    FilterDeclare mcbr CONTENT_SET
    FilterProvider mcbr BROTLI_COMPRESS "%{CONTENT_TYPE} =~ m#^text/#"
    FilterChain mcbr
</Location>
"""

PART1 = "<p>" + "first included part, plain compressible words. " * 40 + "</p>\n"
PART2 = "<div>" + "second part with other words to include twice. " * 30 + "</div>\n"
ERROR_PAGE = "<html><body><h1>Not here</h1>" + "<p>this page does not exist.</p>\n" * 40 + \
             "</body></html>\n"
INDEX = "<html><body>" + "<p>directory index page</p>\n" * 60 + "</body></html>\n"


def ssi_page(d: str) -> str:
    return (f"<html><body>\n<!--#include virtual=\"/{d}/part1.html\" -->\n<hr>\n"
            f"<!--#include virtual=\"/{d}/part2.html\" -->\n<hr>\n"
            "<!--#include virtual=\"/s/page.html\" -->\n"
            "<!--#include virtual=\"/cgi-bin/headers.py?size=3000\" -->\n"
            f"<!--#include virtual=\"/{d}/part2.html\" -->\n</body></html>\n")


@pytest.fixture(scope="module")
def srv(env):
    files = {"errors/404.html": ERROR_PAGE, "idx/index.html": INDEX, "rwdir/.keep": ""}
    for d in ("ssi", "ssi2"):
        files[f"{d}/page.shtml"] = ssi_page(d)
        files[f"{d}/part1.html"] = PART1
        files[f"{d}/part2.html"] = PART2
    s = start_dropin(env, "t330", SITE, files=files, modules=["rewrite"])
    yield s
    stop_checked(s)


def expected_ssi(env, d: str) -> bytes:
    page = ssi_page(d).encode()
    for name, body in ((f"/{d}/part1.html", PART1.encode()), (f"/{d}/part2.html", PART2.encode()),
                       ("/s/page.html", static_file(env, "page.html")),
                       ("/cgi-bin/headers.py?size=3000", text_body(3000))):
        page = page.replace(f'<!--#include virtual="{name}" -->'.encode(), body)
    assert b"<!--#" not in page
    return page


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_330_01_ssi_includes(env, srv, coding):
    r = request(srv.port, "/ssi/page.shtml", coding)
    assert b"error occurred" not in r.decoded()
    assert_encoded(r, coding, expected_ssi(env, "ssi"))


@pytest.mark.parametrize("ae,coding", [("gzip", "gzip"), ("zstd", "zstd"), ("br, zstd", "zstd"),
                                       ("zstd, gzip", "zstd"), ("gzip, zstd;q=0.5", "gzip")])
def test_mc_330_02_ssi_deflate_idiom(env, srv, ae, coding):
    """`AddOutputFilter INCLUDES;DEFLATE .shtml` plus ZSTD by type: DEFLATE and ZSTD negotiate
    together (ties go to the default order zstd br gzip) and compress once."""
    r = request(srv.port, "/ssi2/page.shtml", ae)
    assert_encoded(r, coding, expected_ssi(env, "ssi2"))


def test_mc_330_03_ssi_identity(env, srv):
    assert_encoded(request(srv.port, "/ssi/page.shtml", None), None, expected_ssi(env, "ssi"))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_330_04_directory_index(srv, coding):
    r = request(srv.port, "/idx/", coding)
    assert_encoded(r, coding, INDEX.encode())


@pytest.mark.parametrize("path", ["/rw/page.html", "/rwdir/page.html"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_330_05_rewrite_internal_redirect(env, srv, coding, path):
    r = request(srv.port, path, coding)
    assert_encoded(r, coding, static_file(env, "page.html"))


@pytest.mark.parametrize("loc", ["/e404-set/", "/e404-type/"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_330_06_error_document(srv, coding, loc):
    r = request(srv.port, loc + "missing.html", coding)
    assert r.status == 404, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert r.decoded() == ERROR_PAGE.encode()
    assert r.vary_tokens() == ["accept-encoding"]


def test_mc_330_07_error_document_identity(srv):
    r = request(srv.port, "/e404-set/missing.html", None)
    assert r.status == 404 and r.header("Content-Encoding") is None
    assert r.body == ERROR_PAGE.encode()


@pytest.mark.parametrize("loc", ["/many-type/", "/many-set/", "/many-mixed/"])
@pytest.mark.parametrize("ae,coding", [("zstd", "zstd"), ("br", "br"), ("gzip", "gzip"),
                                       ("zstd, br, gzip", "zstd"), ("gzip, br;q=0.5", "gzip")])
@pytest.mark.parametrize("doc", ["page.html", "style.css"])
def test_mc_330_08_several_filters_one_layer(env, srv, loc, ae, coding, doc):
    r = request(srv.port, loc + doc, ae)
    assert_encoded(r, coding, static_file(env, doc))
