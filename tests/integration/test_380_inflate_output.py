# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: the INFLATE output filter. gzip, br and zstd
responses (files with AddEncoding, or a handler's own Content-Encoding) arrive decoded without
Content-Encoding; mod_substitute after INFLATE sees (and edits) the plain text; our compressor after
INFLATE encodes once; a bomb response is stopped by the ratio limit with bounded memory."""
import time

import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_drop_in import (CODINGS, assert_no_crash, bomb, children_rss_kib, encode, start_dropin,
                        stop_checked, wait_for_log)

EXT = {"gzip": "gz", "br": "br", "zstd": "zst"}
ENC = r"""
    RemoveType .gz .br .zst
    AddEncoding gzip .gz
    AddEncoding br .br
    AddEncoding zstd .zst
"""

SITE = rf"""
<Directory "@HTDOCS@/enc">{ENC}
    SetOutputFilter INFLATE
</Directory>
<Directory "@HTDOCS@/enc-add">{ENC}
    AddOutputFilter INFLATE gz br zst
</Directory>
<Directory "@HTDOCS@/enc-sub">{ENC}
    SetOutputFilter INFLATE
    AddOutputFilterByType SUBSTITUTE text/html
    Substitute "s/apr_table/APR-TABLE/n"
</Directory>
<Directory "@HTDOCS@/enc-re">{ENC}
    SetOutputFilter INFLATE;MULTICOMPRESS
</Directory>
<Directory "@HTDOCS@/enc-bomb">{ENC}
    SetOutputFilter INFLATE
</Directory>
<Location /inflate-handler/>
    SetHandler mctest-shapes
    SetOutputFilter INFLATE
</Location>
<Location /inflate-handler-re/>
    SetHandler mctest-shapes
    SetOutputFilter INFLATE;MULTICOMPRESS
</Location>
<Location /inflate-handler-sub/>
    SetHandler mctest-shapes
    SetOutputFilter INFLATE
    AddOutputFilterByType SUBSTITUTE text/html
    Substitute "s/apr_table/APR-TABLE/n"
</Location>
"""

LOG_ALLOW = r"MC0002[0-9]|AH00133|AH01579"


@pytest.fixture(scope="module")
def srv(env):
    page = static_file(env, "page.html")
    files = {}
    for coding, ext in EXT.items():
        for d in ("enc", "enc-add", "enc-sub", "enc-re"):
            files[f"{d}/page.html.{ext}"] = encode(page, coding)
        files[f"enc-bomb/zeros.html.{ext}"] = bomb(coding)
    s = start_dropin(env, "t380", SITE, files=files, modules=["substitute"])
    yield s
    stop_checked(s)


def assert_plain(r, expected: bytes) -> None:
    assert r.status == 200, r
    assert r.header("Content-Encoding") is None, r
    assert r.body == expected, f"{len(r.body)} bytes, want {len(expected)}"
    cl = r.header("Content-Length")
    assert cl is None or int(cl) == len(expected), cl


@pytest.mark.parametrize("d", ["enc", "enc-add"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_380_01_addencoding_file_inflated(env, srv, coding, d):
    """A .gz/.br/.zst document (AddEncoding: the coding is in r->content_encoding, which
    ap_http_header_filter turns into the header only later) through INFLATE. mod_deflate's
    INFLATE looks there too (check_gzip)."""
    r = request(srv.port, f"/{d}/page.html.{EXT[coding]}", "gzip, br, zstd")
    assert_plain(r, static_file(env, "page.html"))


@pytest.mark.parametrize("where", ["ce", "ceerr"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_380_02_handler_encoding_inflated(env, srv, coding, where):
    """A handler's own Content-Encoding (headers_out or err_headers_out) through INFLATE."""
    r = request(srv.port, f"/inflate-handler/x?shape=file&file=enc/page.html.{EXT[coding]}"
                          f"&{where}={coding}", "gzip")
    assert_plain(r, static_file(env, "page.html"))


@pytest.mark.parametrize("shape", ["file", "mmap"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_380_03_substitute_after_inflate(env, srv, coding, shape):
    page = static_file(env, "page.html")
    want = page.replace(b"apr_table", b"APR-TABLE")
    assert want != page
    r = request(srv.port, f"/inflate-handler-sub/x?shape={shape}&file=enc/page.html."
                          f"{EXT[coding]}&ce={coding}", None)
    assert_plain(r, want)


@pytest.mark.parametrize("ae", ["zstd", "br", "gzip"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_380_04_inflate_then_compress(env, srv, coding, ae):
    """INFLATE then MULTICOMPRESS: decoded, then encoded once in what the client prefers."""
    r = request(srv.port, f"/inflate-handler-re/x?shape=file&file=enc/page.html.{EXT[coding]}"
                          f"&ce={coding}", ae)
    assert_encoded(r, ae, static_file(env, "page.html"))


def test_mc_380_05_plain_response_untouched(env, srv):
    r = request(srv.port, "/inflate-handler/x?shape=file&file=static/page.html", None)
    assert_plain(r, static_file(env, "page.html"))


@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_380_06_bomb_response_stopped(srv, coding):
    """1 GiB of zeros served compressed through INFLATE: the ratio limit stops it after a
    bounded output; the client never gets the gigabyte, memory stays bounded, MC00020."""
    mark = srv.log_size()
    rss0 = children_rss_kib(srv)
    t0 = time.monotonic()
    got = -1
    try:
        r = request(srv.port, f"/inflate-handler/x?shape=file&file=enc-bomb/zeros.html."
                              f"{EXT[coding]}&ce={coding}", None, timeout=30)
        got = len(r.body)
        assert r.status != 200 or got < 64 << 20, r
    except (ConnectionError, OSError, Exception) as e:  # a response cut short is fine
        if isinstance(e, AssertionError):
            raise
    elapsed = time.monotonic() - t0
    assert elapsed < 10, f"took {elapsed:.1f}s: the bomb was inflated"
    log = wait_for_log(srv, mark, "MC00020")
    assert "MC00020: response:" in log and "ratio" in log, log
    grown = (children_rss_kib(srv) - rss0) // 1024
    assert grown < 64, f"server RSS grew by {grown} MiB"
    assert_no_crash(srv, mark)


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_380_07_addencoding_file_substitute_and_recompress(env, srv, coding):
    """The setups INFLATE exists for, with a .gz/.br/.zst document (AddEncoding): mod_substitute
    edits the plain text; our compressor re-encodes once for the client."""
    page = static_file(env, "page.html")
    sub = request(srv.port, f"/enc-sub/page.html.{EXT[coding]}", None)
    assert_plain(sub, page.replace(b"apr_table", b"APR-TABLE"))
    other = {"gzip": "zstd", "br": "gzip", "zstd": "br"}[coding]
    re_ = request(srv.port, f"/enc-re/page.html.{EXT[coding]}", other)
    assert_encoded(re_, other, page)


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_380_08_head_like_get(srv, coding):
    """HEAD through INFLATE gets the headers GET gets: no Content-Encoding, and no
    Content-Length of the compressed body."""
    path = f"/inflate-handler/x?shape=file&file=enc/page.html.{EXT[coding]}&ce={coding}&cl=1"
    get = request(srv.port, path, None)
    head = request(srv.port, path, None, method="HEAD")
    assert get.status == head.status == 200 and head.body == b""
    assert get.header("Content-Encoding") is None
    assert head.header_all("Content-Encoding") == get.header_all("Content-Encoding"), head
    hcl = head.header("Content-Length")
    assert hcl is None or int(hcl) == len(get.body), (hcl, len(get.body))
