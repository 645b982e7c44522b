# SPDX-License-Identifier: Apache-2.0
"""As a drop-in: mod_deflate's and mod_brotli's directives are accepted with the same meaning
(observable effects: sizes, gzip XFL, brotli WBITS, notes in the access log), together with our
MultiCompressNote. The values `apache2 -t` accepts and refuses: test_351_compat_values.py."""
import base64
import random
import re
import time
import pytest

from mc_bodies import mctest_body, static_file
from mc_client import assert_encoded, request
from mc_drop_in import CODINGS, start_dropin, stop_checked, wait_access_line

# A document whose only redundancy is a 1025-byte block repeated 60 times: a deflate window of
# 512 or 1024 bytes cannot reach the previous copy (about 46 KB compressed), 4 KiB and more
# can (1.3 KB at level 6, 4.5 KB at level 1).
_rng = random.Random(7)
REPEATED = (b"<html><body><pre>\n" + (base64.b64encode(_rng.randbytes(768)) + b"\n") * 60 +
            b"</pre></body></html>\n")

NOTE_FORMAT = ('"%U %q in=%{d_in}n out=%{d_out}n ratio=%{d_ratio}n bare=%{bare_ratio}n '
               'bin=%{b_in}n bout=%{b_out}n bratio=%{b_ratio}n brbare=%{brbare}n '
               'min=%{m_in}n mout=%{m_out}n mratio=%{m_ratio}n menc=%{m_enc}n '
               'ce=%{Content-Encoding}o"')

SITE = r"""
# as existing mod_deflate / mod_brotli configurations have them: server-wide
DeflateCompressionLevel 1
BrotliCompressionQuality 0
DeflateFilterNote Input d_in
DeflateFilterNote Output d_out
DeflateFilterNote Ratio d_ratio
LogFormat @NOTE_FORMAT@ notes
CustomLog "@GEN@/logs/notes_log" notes

Alias /lvl-server "@HTDOCS@/static"
<Location /lvl-server/>
    AddOutputFilterByType DEFLATE;BROTLI_COMPRESS @TEXT_TYPES@
</Location>
Alias /lvl-high "@HTDOCS@/static"
<Location /lvl-high/>
    AddOutputFilterByType DEFLATE;BROTLI_COMPRESS @TEXT_TYPES@
    DeflateCompressionLevel 9
    BrotliCompressionQuality 11
</Location>

Alias /win1 "@HTDOCS@/w"
<Location /win1/>
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 1
</Location>
<Location /win1-h/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 1
</Location>
Alias /win9 "@HTDOCS@/w"
<Location /win9/>
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 9
</Location>
<Location /win9-h/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 9
</Location>
Alias /win12 "@HTDOCS@/w"
<Location /win12/>
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 12
</Location>
<Location /win12-h/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 12
</Location>
Alias /win15 "@HTDOCS@/w"
<Location /win15/>
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 15
</Location>
<Location /win15-h/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateWindowSize 15
</Location>

Alias /mem1 "@HTDOCS@/static"
<Location /mem1/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
    DeflateCompressionLevel 6
    DeflateMemLevel 1
</Location>
<Location /mem1-h/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateCompressionLevel 6
    DeflateMemLevel 1
</Location>
Alias /mem9 "@HTDOCS@/static"
<Location /mem9/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
    DeflateCompressionLevel 6
    DeflateMemLevel 9
</Location>
<Location /mem9-h/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateCompressionLevel 6
    DeflateMemLevel 9
</Location>

<Location /buf1/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateBufferSize 1
</Location>
<Location /buf1k/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateBufferSize 1024
</Location>
<Location /buf256k/>
    SetHandler mctest-shapes
    AddOutputFilterByType DEFLATE text/html
    DeflateBufferSize 262144
</Location>

Alias /bw10 "@HTDOCS@/static"
<Location /bw10/>
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    BrotliCompressionWindow 10
    # (quality 0 and 1 use a window of at least 18 whatever lgwin says)
    BrotliCompressionQuality 5
</Location>
<Location /bw10-stream/>
    SetHandler mctest-shapes
    AddOutputFilterByType BROTLI_COMPRESS text/html
    BrotliCompressionWindow 10
    # (quality 0 and 1 use a window of at least 18 whatever lgwin says)
    BrotliCompressionQuality 5
</Location>
<Location /bw24-stream/>
    SetHandler mctest-shapes
    AddOutputFilterByType BROTLI_COMPRESS text/html
    BrotliCompressionWindow 24
    # (quality 0 and 1 use a window of at least 18 whatever lgwin says)
    BrotliCompressionQuality 5
</Location>
<Location /bw18-stream/>
    SetHandler mctest-shapes
    AddOutputFilterByType BROTLI_COMPRESS text/html
    BrotliCompressionWindow 18
    # (quality 0 and 1 use a window of at least 18 whatever lgwin says)
    BrotliCompressionQuality 5
</Location>
<Location /bblock16/>
    SetHandler mctest-shapes
    AddOutputFilterByType BROTLI_COMPRESS text/html
    BrotliCompressionMaxInputBlock 16
</Location>
<Location /bblock24/>
    SetHandler mctest-shapes
    AddOutputFilterByType BROTLI_COMPRESS text/html
    BrotliCompressionMaxInputBlock 24
</Location>

Alias /notes-deflate "@HTDOCS@/static"
<Location /notes-deflate/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
</Location>
Alias /notes-bare "@HTDOCS@/static"
<Location /notes-bare/>
    AddOutputFilterByType DEFLATE @TEXT_TYPES@
    DeflateFilterNote bare_ratio
</Location>
Alias /notes-brotli "@HTDOCS@/static"
<Location /notes-brotli/>
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    BrotliFilterNote Input b_in
    BrotliFilterNote Output b_out
    BrotliFilterNote Ratio b_ratio
</Location>
Alias /notes-brotli-bare "@HTDOCS@/static"
<Location /notes-brotli-bare/>
    AddOutputFilterByType BROTLI_COMPRESS @TEXT_TYPES@
    BrotliFilterNote brbare
</Location>
Alias /notes-mc "@HTDOCS@/static"
<Location /notes-mc/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressNote ratio m_ratio
    MultiCompressNote input m_in
    MultiCompressNote output m_out
    MultiCompressNote encoding m_enc
</Location>
<Location /notes-mc-stream/>
    SetHandler mctest-shapes
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressNote ratio m_ratio
    MultiCompressNote input m_in
    MultiCompressNote output m_out
    MultiCompressNote encoding m_enc
</Location>
""".replace("@NOTE_FORMAT@", NOTE_FORMAT)


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t350", SITE, files={"w/rep.html": REPEATED})
    yield s
    stop_checked(s)


def gzip_xfl(body: bytes) -> int:
    assert body[:3] == b"\x1f\x8b\x08", body[:10]
    return body[8]


def brotli_wbits(body: bytes) -> int:
    """The window (log2) a brotli stream declares in its first bits (RFC 7932 §9.1)."""
    x = body[0] | (body[1] << 8)
    if x & 1 == 0:
        return 16
    n = (x >> 1) & 7
    if n:
        return 17 + n
    m = (x >> 4) & 7
    assert m != 1, "large-window brotli"
    return 8 + m if m else 17


# ---- levels

def test_mc_350_01_deflate_compression_level(env, srv):
    page = static_file(env, "page.html")
    low = request(srv.port, "/lvl-server/page.html", "gzip")
    high = request(srv.port, "/lvl-high/page.html", "gzip")
    assert_encoded(low, "gzip", page)
    assert_encoded(high, "gzip", page)
    assert len(high.body) < len(low.body), (len(low.body), len(high.body))
    # zlib records the level class in the gzip header: XFL 4 = fastest, 2 = best
    assert gzip_xfl(low.body) == 4
    assert gzip_xfl(high.body) == 2


def test_mc_350_02_brotli_compression_quality(env, srv):
    page = static_file(env, "page.html")
    low = request(srv.port, "/lvl-server/page.html", "br")
    high = request(srv.port, "/lvl-high/page.html", "br")
    assert_encoded(low, "br", page)
    assert_encoded(high, "br", page)
    assert len(high.body) < len(low.body) * 0.8, (len(low.body), len(high.body))


# ---- windows, memory level, buffer size, input block

# How the body reaches the filter: whole (a static file: body and EOS in the first brigade)
# or streamed (a handler passes a file bucket, then EOS alone).
PATHS = {"whole": "{loc}/{doc}", "streamed": "{loc}-h/x?shape=file&file={dir}/{doc}&eos=alone"}


def via(path: str, loc: str, dir_: str, doc: str) -> str:
    return PATHS[path].format(loc=loc, dir=dir_, doc=doc)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("loc,small", [("/win1", False), ("/win9", False), ("/win12", True),
                                       ("/win15", True)])
def test_mc_350_03_deflate_window_size(srv, loc, small, path):
    """DeflateWindowSize 1..15 (log2): with 9 (and 1, which zlib raises to 9) the repeated
    1025-byte block is out of reach, however the body arrives."""
    r = request(srv.port, via(path, loc, "w", "rep.html"), "gzip")
    assert_encoded(r, "gzip", REPEATED)
    if small:
        assert len(r.body) < 8000, len(r.body)  # (level 1, inherited from the server)
    else:
        assert len(r.body) > 30000, f"{len(r.body)} bytes: a window over 1 KiB was used"


@pytest.mark.parametrize("path", list(PATHS))
def test_mc_350_04_deflate_mem_level(env, srv, path):
    page = static_file(env, "page.html")
    m1 = request(srv.port, via(path, "/mem1", "static", "page.html"), "gzip")
    m9 = request(srv.port, via(path, "/mem9", "static", "page.html"), "gzip")
    assert_encoded(m1, "gzip", page)
    assert_encoded(m9, "gzip", page)
    # memLevel 1: 128-symbol blocks, each with its own Huffman header (zlib: ~10.7 KB vs ~9.5 KB)
    assert len(m1.body) > len(m9.body) * 1.05, (len(m1.body), len(m9.body))


@pytest.mark.parametrize("loc", ["/buf1/", "/buf1k/", "/buf256k/"])
@pytest.mark.parametrize("query,size", [("shape=heap&size=100000", 100000),
                                        ("shape=big&mb=2", 2 << 20),
                                        ("shape=bytes1&size=5000&pass=50", 5000)])
def test_mc_350_05_deflate_buffer_size(srv, loc, query, size):
    r = request(srv.port, f"{loc}x?{query}", "gzip")
    assert_encoded(r, "gzip", mctest_body(size))


def test_mc_350_06_brotli_window(env, srv):
    page = static_file(env, "page.html")
    r = request(srv.port, "/bw10/page.html", "br")
    assert_encoded(r, "br", page)
    assert brotli_wbits(r.body) == 10
    for loc, want in (("/bw10-stream/", 10), ("/bw18-stream/", 18), ("/bw24-stream/", 24)):
        # a streamed body of unknown length: the configured window, not one sized to the body
        s = request(srv.port, f"{loc}x?shape=big&mb=2", "br")
        assert_encoded(s, "br", mctest_body(2 << 20))
        assert brotli_wbits(s.body) == want, loc


@pytest.mark.parametrize("loc", ["/bblock16/", "/bblock24/"])
def test_mc_350_07_brotli_max_input_block(srv, loc):
    r = request(srv.port, f"{loc}x?shape=big&mb=2", "br")
    assert_encoded(r, "br", mctest_body(2 << 20))


# ---- notes

_ids = iter(range(1, 1 << 30))


def note_line(srv, path: str, ae: str | None):
    tag = f"id={next(_ids)}-{time.monotonic_ns()}"
    sep = "&" if "?" in path else "?"
    r = request(srv.port, f"{path}{sep}{tag}", ae)
    line = wait_access_line(srv, "notes_log", tag)
    fields = dict(re.findall(r"(\w+)=(\S+)", line.split(" ", 2)[2]))
    return r, fields


def test_mc_350_08_deflate_filter_note(env, srv):
    page = static_file(env, "page.html")
    r, f = note_line(srv, "/notes-deflate/page.html", "gzip")
    assert_encoded(r, "gzip", page)
    assert f["in"] == str(len(page))
    assert f["out"] == str(len(r.body))
    assert f["ratio"] == str(len(r.body) * 100 // len(page))
    assert f["ce"] == "gzip"


def test_mc_350_09_deflate_filter_note_bare_name(env, srv):
    """`DeflateFilterNote NAME` is the ratio note."""
    r, f = note_line(srv, "/notes-bare/style.css", "gzip")
    css = static_file(env, "style.css")
    assert_encoded(r, "gzip", css)
    assert f["bare"] == str(len(r.body) * 100 // len(css))
    assert f["in"] == str(len(css))  # Input/Output still inherited from the server


def test_mc_350_10_brotli_filter_note(env, srv):
    page = static_file(env, "page.html")
    r, f = note_line(srv, "/notes-brotli/page.html", "br")
    assert_encoded(r, "br", page)
    assert (f["bin"], f["bout"]) == (str(len(page)), str(len(r.body)))
    assert f["bratio"] == str(len(r.body) * 100 // len(page))
    r2, f2 = note_line(srv, "/notes-brotli-bare/page.html", "br")
    assert_encoded(r2, "br", page)
    assert f2["brbare"] == str(len(r2.body) * 100 // len(page))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_350_11_multicompress_note(env, srv, coding):
    page = static_file(env, "page.html")
    r, f = note_line(srv, "/notes-mc/page.html", coding)
    assert_encoded(r, coding, page)
    assert (f["min"], f["mout"], f["menc"]) == (str(len(page)), str(len(r.body)), coding)
    assert f["mratio"] == str(len(r.body) * 100 // len(page))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_350_12_multicompress_note_streamed(srv, coding):
    size = 1 << 20
    r, f = note_line(srv, "/notes-mc-stream/x?shape=big&mb=1", coding)
    assert_encoded(r, coding, mctest_body(size))
    assert (f["min"], f["mout"], f["menc"]) == (str(size), str(len(r.body)), coding)


def test_mc_350_13_notes_absent_when_not_compressed(srv):
    r, f = note_line(srv, "/notes-mc/page.html", None)
    assert r.status == 200 and r.header("Content-Encoding") is None
    for k in ("min", "mout", "mratio"):
        assert f[k] == "-", (k, f)
