# SPDX-License-Identifier: Apache-2.0
"""Filter names and the ways to attach them; several filters on one response."""
import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request

ALL = "zstd, br, gzip, deflate"


@pytest.mark.parametrize("prefix,offers", [
    ("/f-deflate/", {"gzip"}),
    ("/f-deflate-all/", {"gzip", "deflate"}),   # deflate listed in MultiCompressEncodings
    ("/f-brotli/", {"br"}),
    ("/f-zstd/", {"zstd"}),
    ("/mc/", {"zstd", "br", "gzip"}),
    ("/mc-deflate/", {"zstd", "br", "gzip", "deflate"}),
])
def test_mc_500_01_filter_offers_only_its_encodings(env, main, prefix, offers):
    data = static_file(env, "style.css")
    for coding in ("gzip", "br", "zstd", "deflate"):
        resp = request(main.port, prefix + "style.css", coding)
        assert_encoded(resp, coding if coding in offers else None, data)
    # everything acceptable: the filter's best by server order (zstd br gzip deflate)
    best = next(c for c in ("zstd", "br", "gzip", "deflate") if c in offers)
    assert_encoded(request(main.port, prefix + "style.css", ALL), best, data)


@pytest.mark.parametrize("prefix,ae,expected", [
    # DEFLATE + ZSTD on text/html: union {gzip, zstd}
    ("/f-two/", "gzip, zstd", "zstd"),
    ("/f-two/", "gzip", "gzip"),
    ("/f-two/", "zstd", "zstd"),
    ("/f-two/", "br", None),
    ("/f-two/", "br, gzip", "gzip"),
    ("/f-two/", "zstd;q=0.5, gzip", "gzip"),
    ("/f-two/", None, None),
    # MULTICOMPRESS + DEFLATE + ZSTD: union = all enabled
    ("/f-three/", "gzip, zstd", "zstd"),
    ("/f-three/", "br", "br"),
    ("/f-three/", "gzip", "gzip"),
    ("/f-three/", ALL, "zstd"),
    ("/f-three/", None, None),
    # BROTLI_COMPRESS + DEFLATE
    ("/f-br-gzip/", "zstd", None),
    ("/f-br-gzip/", "zstd, gzip", "gzip"),
    ("/f-br-gzip/", ALL, "br"),
])
def test_mc_500_02_several_filters_compress_once(env, main, prefix, ae, expected):
    """Decoding once must give the file (twice-compressed bodies would not), with one
    Content-Encoding token and one Vary member."""
    resp = request(main.port, prefix + "page.html", ae)
    assert_encoded(resp, expected, static_file(env, "page.html"))


@pytest.mark.parametrize("name", ["page.html", "style.css"])
def test_mc_500_03_several_filters_same_bytes_as_one(env, main, name):
    """Exactly once: /f-three/ sends what /mc/ sends for the same coding."""
    for coding in ("gzip", "br", "zstd"):
        one = request(main.port, "/mc/" + name, coding)
        three = request(main.port, "/f-three/" + name, coding)
        assert_encoded(three, coding, static_file(env, name))
        assert three.body == one.body


@pytest.mark.parametrize("prefix", ["/f-set/", "/f-add/", "/f-provider/"])
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_500_04_attachment_styles(env, main, prefix, coding):
    """SetOutputFilter, AddOutputFilter (by extension) and mod_filter's FilterProvider."""
    for name in ("page.html", "style.css"):
        assert_encoded(request(main.port, prefix + name, coding), coding,
                       static_file(env, name))


def test_mc_500_05_attachment_scope(env, main):
    """AddOutputFilter html css and FilterProvider text/(html|css) leave .js alone."""
    for prefix in ("/f-add/", "/f-provider/"):
        resp = request(main.port, prefix + "app.js", ALL)
        assert_encoded(resp, None, static_file(env, "app.js"), vary=False)
        assert "accept-encoding" not in resp.vary_tokens()


def test_mc_500_06_filter_provider_zstd(env, main):
    data = static_file(env, "page.html")
    assert_encoded(request(main.port, "/f-provider-zstd/page.html", ALL), "zstd", data)
    assert_encoded(request(main.port, "/f-provider-zstd/page.html", "br, gzip"), None, data)


@pytest.mark.parametrize("prefix,ae,expected", [
    ("/env-nogzip/", ALL, None),          # no-gzip: no compression at all
    ("/env-nogzip/", "br", None),
    ("/env-nobrotli/", "br, gzip", "gzip"),
    ("/env-nobrotli/", "br", None),
    ("/env-nobrotli/", ALL, "zstd"),
    ("/env-nozstd/", ALL, "br"),
    ("/env-nozstd/", "zstd", None),
])
def test_mc_500_07_environment_opt_outs(env, main, prefix, ae, expected):
    resp = request(main.port, prefix + "page.html", ae)
    assert_encoded(resp, expected, static_file(env, "page.html"), vary=expected is not None)
