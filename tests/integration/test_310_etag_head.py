# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: ETag handling (MultiCompressAlterETag,
DeflateAlterETag, BrotliAlterETag), conditional GETs with the altered ETag (httpd bug 45023:
mod_deflate answers 200), the 304's Vary and ETag, and HEAD."""
from urllib.parse import quote

import pytest

from mc_bodies import mctest_body, static_file, text_body
from mc_client import assert_vary_once, request, suffixed
from mc_decode import decode
from mc_drop_in import CODINGS, start_dropin, stop_checked

SITE = r"""
Alias /s "@HTDOCS@/static"
<Location /s/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Location>
Alias /mc-nochange "@HTDOCS@/static"
<Location /mc-nochange/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressAlterETag NoChange
</Location>
Alias /mc-remove "@HTDOCS@/static"
<Location /mc-remove/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressAlterETag Remove
</Location>
Alias /d-add "@HTDOCS@/static"
<Location /d-add/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
    DeflateAlterETag AddSuffix
</Location>
Alias /d-nochange "@HTDOCS@/static"
<Location /d-nochange/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
    DeflateAlterETag NoChange
</Location>
Alias /d-remove "@HTDOCS@/static"
<Location /d-remove/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
    DeflateAlterETag Remove
</Location>
Alias /b-add "@HTDOCS@/static"
<Location /b-add/>
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    BrotliAlterETag AddSuffix
</Location>
Alias /b-nochange "@HTDOCS@/static"
<Location /b-nochange/>
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    BrotliAlterETag NoChange
</Location>
Alias /b-remove "@HTDOCS@/static"
<Location /b-remove/>
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    BrotliAlterETag Remove
</Location>
<Location /shapes/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
</Location>
<Location /shapes-set/>
    SetHandler mctest-shapes
    SetOutputFilter MULTICOMPRESS
</Location>
Alias /provider "@HTDOCS@/static"
<Location /provider/>
    FilterDeclare mccomp CONTENT_SET
    FilterProvider mccomp MULTICOMPRESS "%{CONTENT_TYPE} =~ m#^text/(html|css)#"
    FilterChain mccomp
</Location>
Alias /all "@HTDOCS@/static"
<Location /all/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
</Location>
<Location /shapes-nochange/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressAlterETag NoChange
</Location>
<Location /shapes-remove/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressAlterETag Remove
</Location>
ScriptAlias /cgi-bin/ "@HTDOCS@/cgi-bin/"
<Directory "@HTDOCS@/cgi-bin">
    Options +ExecCGI
    AddOutputFilterByType MULTICOMPRESS text/html
</Directory>
"""

# (location, filter's coding for the test, etag mode)
COMPAT_LOCATIONS = [
    ("/d-add/", "gzip", "add"), ("/d-nochange/", "gzip", "same"), ("/d-remove/", "gzip", "none"),
    ("/b-add/", "br", "add"), ("/b-nochange/", "br", "same"), ("/b-remove/", "br", "none"),
]


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t310", SITE)
    yield s
    stop_checked(s)


def identity_etag(srv, path: str) -> str:
    r = request(srv.port, path, None)
    assert r.status == 200 and r.header("Content-Encoding") is None
    etag = r.header("ETag")
    assert etag and etag.startswith('"'), f"no strong ETag on {path}: {r}"
    return etag


# ---- AddSuffix (the default)

@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_01_default_suffix_static(env, srv, coding):
    base = identity_etag(srv, "/s/page.html")
    r = request(srv.port, "/s/page.html", coding)
    assert r.header_all("Content-Encoding") == [coding]
    assert r.decoded() == static_file(env, "page.html")
    assert r.header_all("ETag") == [suffixed(base, coding)]


@pytest.mark.parametrize("etag,want", [
    ('"abc"', '"abc-{c}"'),
    ('W/"abc"', 'W/"abc-{c}"'),
    ('"with space and - dash"', '"with space and - dash-{c}"'),
], ids=["strong", "weak", "odd-chars"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_02_suffix_handler_etag(srv, coding, etag, want):
    """An ETag set by a handler (mod_mctest_dropin), strong and weak."""
    path = f"/shapes/x?size=5000&etag={quote(etag)}"
    r = request(srv.port, path, coding)
    assert r.header_all("Content-Encoding") == [coding]
    assert r.decoded() == mctest_body(5000)
    assert r.header_all("ETag") == [want.format(c=coding)]
    ident = request(srv.port, path, None)
    assert ident.header_all("ETag") == [etag], "identity response must keep the ETag as it is"


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_03_suffix_cgi_weak_etag(srv, coding):
    """A CGI's weak ETag (the common case behind mod_deflate: W/ from the application)."""
    path = "/cgi-bin/headers.py?size=6000&h=" + quote('ETag: W/"cgi-1"')
    r = request(srv.port, path, coding)
    assert r.header_all("Content-Encoding") == [coding]
    assert r.decoded() == text_body(6000)
    assert r.header_all("ETag") == [f'W/"cgi-1-{coding}"']


# ---- NoChange and Remove

@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_04_nochange(env, srv, coding):
    base = identity_etag(srv, "/mc-nochange/page.html")
    r = request(srv.port, "/mc-nochange/page.html", coding)
    assert r.header_all("Content-Encoding") == [coding]
    assert r.decoded() == static_file(env, "page.html")
    assert r.header_all("ETag") == [base]
    h = request(srv.port, "/shapes-nochange/x?etag=" + quote('W/"abc"'), coding)
    assert h.header_all("Content-Encoding") == [coding]
    assert h.header_all("ETag") == ['W/"abc"']


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_05_remove(env, srv, coding):
    r = request(srv.port, "/mc-remove/page.html", coding)
    assert r.header_all("Content-Encoding") == [coding]
    assert r.decoded() == static_file(env, "page.html")
    assert r.header("ETag") is None, r
    # only a compressed response loses it
    assert request(srv.port, "/mc-remove/page.html", None).header("ETag") is not None
    h = request(srv.port, "/shapes-remove/x?etag=" + quote('"abc"'), coding)
    assert h.header_all("Content-Encoding") == [coding]
    assert h.header("ETag") is None, h


@pytest.mark.parametrize("loc,coding,mode", COMPAT_LOCATIONS,
                         ids=[l.strip("/") for l, _, _ in COMPAT_LOCATIONS])
def test_mc_310_06_compat_alter_etag(env, srv, loc, coding, mode):
    """DeflateAlterETag / BrotliAlterETag AddSuffix|NoChange|Remove, as in mod_deflate and
    mod_brotli."""
    base = identity_etag(srv, loc + "style.css")
    r = request(srv.port, loc + "style.css", coding)
    assert r.header_all("Content-Encoding") == [coding]
    assert r.decoded() == static_file(env, "style.css")
    want = {"add": [suffixed(base, coding)], "same": [base], "none": []}[mode]
    assert r.header_all("ETag") == want


# ---- conditional GET with the altered ETag: 304 (httpd bug 45023), same Vary and ETag

def inm_forms(etag: str) -> dict[str, str]:
    return {
        "exact": etag,
        "in-list": f'"nope-1", {etag}, "nope-2"',
        "list-no-space": f'"nope-1",{etag}',
        "weak": "W/" + etag,
    }


@pytest.mark.parametrize("form", ["exact", "in-list", "list-no-space", "weak"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_07_conditional_get_altered_etag(srv, coding, form):
    get = request(srv.port, "/s/page.html", coding)
    etag = get.header("ETag")
    assert etag and etag.endswith(f'-{coding}"'), get
    r = request(srv.port, "/s/page.html", coding,
                headers=[("If-None-Match", inm_forms(etag)[form])])
    assert r.status == 304, f"If-None-Match {inm_forms(etag)[form]} -> {r}"
    assert r.body == b""
    assert r.header_all("ETag") == [etag]
    assert r.vary_tokens() == get.vary_tokens() == ["accept-encoding"]
    assert r.header("Content-Encoding") is None or r.header("Content-Encoding") == coding


@pytest.mark.parametrize("loc,coding", [("/d-add/", "gzip"), ("/b-add/", "br"),
                                        ("/mc-nochange/", "zstd"), ("/d-nochange/", "gzip")])
def test_mc_310_08_conditional_get_compat_locations(srv, loc, coding):
    """The ETag a compressed 200 carried (altered or not) validates a conditional GET."""
    get = request(srv.port, loc + "page.html", coding)
    assert get.header_all("Content-Encoding") == [coding]
    etag = get.header("ETag")
    r = request(srv.port, loc + "page.html", coding, headers=[("If-None-Match", etag)])
    assert r.status == 304, r
    assert r.header_all("ETag") == [etag]
    assert r.vary_tokens() == get.vary_tokens()


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_09_other_etag_still_200(env, srv, coding):
    """Stripping the suffix must not make any ETag match: another entity's altered ETag, a
    suffix of another coding on a different base, and a bare suffix get the full 200."""
    for inm in ('"deadbeef-zstd"', '"-gzip"', 'W/"x-br"', '"14d75-gzip-gzip"'):
        r = request(srv.port, "/s/page.html", coding, headers=[("If-None-Match", inm)])
        assert r.status == 200, (inm, r)
        assert r.header_all("Content-Encoding") == [coding]
        assert r.decoded() == static_file(env, "page.html")


def test_mc_310_10_identity_304_unchanged(srv):
    """A client without Accept-Encoding revalidates with the plain ETag and gets it back."""
    base = identity_etag(srv, "/s/page.html")
    r = request(srv.port, "/s/page.html", None, headers=[("If-None-Match", base)])
    assert r.status == 304
    assert r.header_all("ETag") == [base]
    assert_vary_once(r)


# ---- HEAD

HEAD_PATHS = ["/s/page.html", "/s/style.css", "/shapes/x?size=50000&etag=%22h%22",
              "/shapes/x?size=50000&cl=1", "/shapes/x?shape=bytes1&size=3000&pass=100",
              "/shapes/x?shape=eosalone&size=40000&chunk=1000",
              "/shapes/x?shape=file&file=static/page.html",
              "/cgi-bin/headers.py?size=9000&h=" + quote('ETag: W/"cgi-h"')]


@pytest.mark.parametrize("coding", [*CODINGS, None], ids=[*CODINGS, "identity"])
@pytest.mark.parametrize("path", HEAD_PATHS)
def test_mc_310_11_head_like_get(srv, path, coding):
    get = request(srv.port, path, coding)
    head = request(srv.port, path, coding, method="HEAD")
    assert get.status == head.status == 200
    assert head.body == b""
    for h in ("Content-Encoding", "ETag", "Content-Type"):
        assert head.header_all(h) == get.header_all(h), (h, head, get)
    assert head.vary_tokens() == get.vary_tokens() == ["accept-encoding"]
    cl = head.header_all("Content-Length")
    assert len(cl) <= 1, cl
    if cl:
        assert int(cl[0]) == len(get.body), \
            f"HEAD Content-Length {cl[0]} but GET sends {len(get.body)} bytes ({coding})"


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_11b_head_of_stream_states_no_length(srv, coding):
    """A CGI body comes from a pipe: a GET's compressed size depends on where the script
    stalls, so a compressed HEAD states no Content-Length rather than a wrong one (RFC 9110
    8.6); the headers are still the GET's."""
    path = "/cgi-bin/headers.py?size=9000&h=" + quote('ETag: W/"cgi-s"')
    head = request(srv.port, path, coding, method="HEAD")
    assert head.status == 200 and head.body == b""
    assert head.header("Content-Encoding") == coding
    assert head.header_all("Content-Length") == [], head
    get = request(srv.port, path, coding)
    assert get.header("ETag") == head.header("ETag")
    assert decode(get.body, coding) == text_body(9000)


# ---- more conditional forms

@pytest.mark.parametrize("etag", ['"hc"', 'W/"hc"'], ids=["strong", "weak"])
@pytest.mark.parametrize("form", ["exact", "in-list", "weak"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_12_handler_conditional_altered_etag(srv, coding, form, etag):
    """A handler that evaluates validators itself (ap_meets_conditions, as the default
    handler): the altered ETag, strong or weak, in every If-None-Match form, gets its 304."""
    path = "/shapes-set/x?cond=1&size=9000&etag=" + quote(etag)
    get = request(srv.port, path, coding)
    assert get.status == 200 and get.header_all("Content-Encoding") == [coding]
    altered = get.header("ETag")
    assert altered == etag[:-1] + f'-{coding}"'
    inm = inm_forms(altered)[form] if not altered.startswith("W/") or form != "weak" else altered
    r = request(srv.port, path, coding, headers=[("If-None-Match", inm)])
    assert r.status == 304, (inm, r)
    assert r.header_all("ETag") == [altered]
    assert r.vary_tokens() == ["accept-encoding"]


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_13_provider_304_vary_etag(srv, coding):
    """mod_filter's FilterProvider (the harness passes a 304 by): the 304 still gets the
    200's Vary and ETag."""
    get = request(srv.port, "/provider/page.html", coding)
    assert get.header_all("Content-Encoding") == [coding]
    etag = get.header("ETag")
    r = request(srv.port, "/provider/page.html", coding, headers=[("If-None-Match", etag)])
    assert r.status == 304, r
    assert r.header_all("ETag") == [etag]
    assert r.vary_tokens() == get.vary_tokens() == ["accept-encoding"]


def test_mc_310_14_deflate_coding_suffix(env, srv):
    """The deflate coding gets its own suffix and validates like the others."""
    base = identity_etag(srv, "/all/page.html")
    r = request(srv.port, "/all/page.html", "deflate")
    assert r.header_all("Content-Encoding") == ["deflate"]
    assert r.decoded() == static_file(env, "page.html")
    assert r.header_all("ETag") == [suffixed(base, "deflate")]
    c = request(srv.port, "/all/page.html", "deflate",
                headers=[("If-None-Match", r.header("ETag"))])
    assert c.status == 304 and c.header_all("ETag") == r.header_all("ETag")


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_310_15_head_conditional(srv, coding):
    get = request(srv.port, "/s/page.html", coding)
    r = request(srv.port, "/s/page.html", coding, method="HEAD",
                headers=[("If-None-Match", get.header("ETag"))])
    assert r.status == 304 and r.header_all("ETag") == get.header_all("ETag")
    assert r.vary_tokens() == ["accept-encoding"]
