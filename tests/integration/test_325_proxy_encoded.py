# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: a reverse proxy (mod_proxy_http) in front of a
backend that compresses with mod_multicompress. The front has our filter too; a response the backend
encoded must go out as it is (never compressed twice), and decode exactly once to the file."""
import pytest

from mc_bodies import mctest_body, static_file
from mc_client import assert_encoded, request
from mc_drop_in import CODINGS, start_dropin, stop_checked

BACKEND_SITE = r"""
Alias /mc "@HTDOCS@/static"
<Location /mc/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Location>
Alias /gzip-only "@HTDOCS@/static"
<Location /gzip-only/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
</Location>
Alias /plain "@HTDOCS@/static"
<Location /stream/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
</Location>
"""

FRONT_SITE = r"""
ProxyPass        /px/ http://127.0.0.1:{backend}/
ProxyPassReverse /px/ http://127.0.0.1:{backend}/
<Location /px/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressEncodings zstd br gzip deflate
</Location>
<Location /px-set/>
    ProxyPass http://127.0.0.1:{backend}/
    SetOutputFilter MULTICOMPRESS
</Location>
"""


@pytest.fixture(scope="module")
def servers(env):
    back = start_dropin(env, "t325-backend", BACKEND_SITE)
    try:
        front = start_dropin(env, "t325-front", FRONT_SITE.replace("{backend}", str(back.port)),
                             modules=["proxy", "proxy_http"])
    except Exception:
        stop_checked(back)
        raise
    yield front, back
    stop_checked(front)
    stop_checked(back)


def once(resp, coding: str, expected: bytes) -> None:
    """One coding on the response, the body decodes once to `expected`, and what it decodes to
    is not itself compressed data."""
    assert_encoded(resp, coding, expected)
    decoded = resp.decoded()
    assert not decoded.startswith((b"\x1f\x8b", b"\x28\xb5\x2f\xfd")), "decoded twice-encoded data"


@pytest.mark.parametrize("prefix", ["/px/", "/px-set/"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_325_01_backend_compressed_passed_through(env, servers, prefix, coding):
    front, _ = servers
    r = request(front.port, f"{prefix}mc/page.html", coding)
    once(r, coding, static_file(env, "page.html"))


@pytest.mark.parametrize("prefix", ["/px/", "/px-set/"])
def test_mc_325_02_backend_choice_kept(env, servers, prefix):
    """The backend may only gzip; the front (which prefers zstd) must not re-encode it."""
    front, _ = servers
    r = request(front.port, f"{prefix}gzip-only/page.html", "zstd, br, gzip")
    once(r, "gzip", static_file(env, "page.html"))


@pytest.mark.parametrize("prefix", ["/px/", "/px-set/"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_325_03_backend_identity_compressed_by_front(env, servers, prefix, coding):
    front, _ = servers
    r = request(front.port, f"{prefix}plain/style.css", coding)
    once(r, coding, static_file(env, "style.css"))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_325_04_streamed_backend(servers, coding):
    """A backend response streamed in flushed pieces (chunked through the proxy)."""
    front, _ = servers
    r = request(front.port, "/px/stream/x?shape=flush&parts=4&delay=50&size=60000", coding)
    once(r, coding, mctest_body(60000))


def test_mc_325_05_no_accept_encoding(env, servers):
    front, _ = servers
    r = request(front.port, "/px/mc/page.html", None)
    assert_encoded(r, None, static_file(env, "page.html"))


@pytest.mark.parametrize("backend", ["mc", "plain"],
                         ids=["backend-compresses", "front-compresses"])
@pytest.mark.parametrize("prefix", ["/px/", "/px-set/"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_325_06_conditional_through_proxy(servers, prefix, coding, backend):
    """The altered ETag of the 200 (altered by the backend that compressed, or by the front)
    validates through the proxy: 304 with the same ETag and Vary as that 200."""
    front, _ = servers
    path = f"{prefix}{backend}/page.html"
    get = request(front.port, path, coding)
    assert get.header_all("Content-Encoding") == [coding]
    etag = get.header("ETag")
    assert etag and etag.endswith(f'-{coding}"') and not etag.endswith(f'-{coding}-{coding}"'), get
    r = request(front.port, path, coding, headers=[("If-None-Match", etag)])
    assert r.status == 304, r
    assert r.header_all("ETag") == [etag], "304's ETag differs from the 200's"
    assert r.vary_tokens() == get.vary_tokens() == ["accept-encoding"]
