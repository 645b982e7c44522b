# SPDX-License-Identifier: Apache-2.0
"""Accept-Encoding negotiation end to end (RFC 9110 §12.5.3, docs/contract.md "Negotiation").

/mc/ has the defaults: zstd br gzip enabled, in that order; deflate not enabled."""
import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request

# (Accept-Encoding, expected Content-Encoding or None for identity)
CASES_DEFAULT = [
    # single codings
    ("gzip", "gzip"),
    ("br", "br"),
    ("zstd", "zstd"),
    ("deflate", None),                 # offered only when listed in MultiCompressEncodings
    ("compress, sdch", None),          # codings we do not implement
    ("", None),                        # present but empty: nothing acceptable
    ("identity", None),
    # q-values
    ("gzip;q=0", None),
    ("gzip;q=0.", None),
    ("gzip;q=0.000", None),
    ("gzip;q=0.0000", None),           # invalid (4 decimals): the member is ignored
    ("br, gzip;q=0.0000", "br"),
    ("gzip;q=1.000", "gzip"),
    ("gzip;q=1.0001, br;q=0.1", "br"),  # invalid q drops gzip
    ("gzip;q=1.5, br;q=0.1", "br"),
    ("gzip;q=0.001", "gzip"),
    ("zstd;q=0.001, gzip;q=0.002", "gzip"),
    ("gzip;q=1.0, br;q=0.5", "gzip"),
    ("gzip;q=0.5, br;q=0.9, zstd;q=0.1", "br"),
    ("zstd;q=0, br;q=0, gzip;q=0", None),
    # "*"
    ("*", "zstd"),
    ("*;q=0", None),
    ("*;q=0, gzip", "gzip"),
    ("*, zstd;q=0", "br"),
    ("*, zstd;q=0, br;q=0", "gzip"),
    ("gzip;q=0.5, *;q=0.6", "zstd"),
    ("*;q=0.1, gzip", "gzip"),
    # identity
    ("identity;q=0", None),            # nothing acceptable: unchanged (docs/contract.md)
    ("identity;q=0, gzip", "gzip"),
    ("identity;q=0, *", "zstd"),
    ("identity, gzip;q=0.5", None),    # identity explicitly preferred
    ("gzip, identity;q=0.5", "gzip"),
    # x-gzip is gzip
    ("x-gzip", "gzip"),
    ("x-gzip;q=0.8, br;q=0.7", "gzip"),
    # duplicates: the lowest weight wins
    ("gzip, gzip;q=0", None),
    ("gzip;q=0, gzip", None),
    ("br;q=0.2, br;q=0.9, gzip;q=0.5", "gzip"),
    ("x-gzip;q=0, gzip", None),
    # case
    ("GZIP", "gzip"),
    ("Br", "br"),
    ("ZSTD;Q=0.5, gzip;q=0.4", "zstd"),
    ("X-GZip", "gzip"),
    # whitespace
    ("  gzip ;  q=0.5 ,br ; q=0.6  ", "br"),
    ("gzip\t;\tq=1", "gzip"),
    (" , ,br, ,", "br"),
    # ties: server order (zstd br gzip)
    ("gzip, br, zstd", "zstd"),
    ("gzip, br", "br"),
    ("gzip;q=0.5, br;q=0.5", "br"),
    # garbage never fails the request
    ("gzip;q=abc, br", "br"),
    ("@@@, gzip", "gzip"),
    (";;;,,,", None),
    ("gzip;q=", None),
    ("gzip;q=0.5;q=", None),
    ("\"gzip\", br", "br"),
    ("br;level=5", "br"),              # unknown parameters are ignored
    ("zstd;q=0.5;foo=bar, gzip;q=0.4", "zstd"),
    ("gz ip, b r", None),
]


@pytest.mark.parametrize("ae,expected", CASES_DEFAULT, ids=[repr(c[0]) for c in CASES_DEFAULT])
def test_mc_200_01_default_order(env, main, ae, expected):
    resp = request(main.port, "/mc/page.html", ae)
    assert_encoded(resp, expected, static_file(env, "page.html"))


def test_mc_200_02_no_header_is_identity_with_vary(env, main):
    resp = request(main.port, "/mc/page.html", None)
    assert_encoded(resp, None, static_file(env, "page.html"))


@pytest.mark.parametrize("lines,expected", [
    (["gzip;q=0.5", "br;q=0.9"], "br"),
    (["br", "gzip;q=0.5", "br;q=0"], "gzip"),   # joined: duplicate br, lowest weight wins
    (["*;q=0", "gzip"], "gzip"),
    (["identity", "zstd"], "zstd"),
    (["gzip", ""], "gzip"),
])
def test_mc_200_03_repeated_header_lines(env, main, lines, expected):
    resp = request(main.port, "/mc/page.html", lines)
    assert_encoded(resp, expected, static_file(env, "page.html"))


@pytest.mark.parametrize("ae,expected", [
    ("zstd, br, gzip", "gzip"),
    ("*", "gzip"),
    ("br, zstd", "br"),
    ("zstd;q=0.9, br;q=0.9, gzip;q=0.8", "br"),
    ("zstd", "zstd"),
])
def test_mc_200_04_ties_follow_configured_order(env, main, ae, expected):
    """/mc-order/: MultiCompressEncodings gzip br zstd."""
    resp = request(main.port, "/mc-order/page.html", ae)
    assert_encoded(resp, expected, static_file(env, "page.html"))


@pytest.mark.parametrize("ae,expected", [
    ("zstd", None),
    ("zstd, gzip;q=0.1", "gzip"),
    ("*", "br"),
    ("zstd, br;q=0.5, gzip;q=0.5", "br"),
])
def test_mc_200_05_only_enabled_encodings(env, main, ae, expected):
    """/mc-br-gzip/: MultiCompressEncodings br gzip."""
    resp = request(main.port, "/mc-br-gzip/page.html", ae)
    assert_encoded(resp, expected, static_file(env, "page.html"))


@pytest.mark.parametrize("ae,expected", [
    ("deflate", "deflate"),
    ("deflate, gzip", "gzip"),          # order zstd br gzip deflate
    ("deflate;q=1, gzip;q=0.9", "deflate"),
    ("*", "zstd"),
    ("*, zstd;q=0, br;q=0, gzip;q=0", "deflate"),
])
def test_mc_200_06_deflate_listed(env, main, ae, expected):
    """/mc-deflate/: MultiCompressEncodings zstd br gzip deflate."""
    resp = request(main.port, "/mc-deflate/page.html", ae)
    assert_encoded(resp, expected, static_file(env, "page.html"))


def test_mc_200_07_huge_header(env, main):
    """A long, odd header is parsed (or ignored) without failing the request."""
    ae = ", ".join(f"enc{i};q=0.{i % 10}" for i in range(500)) + ", br;q=0.1"
    assert len(ae) > 6000
    resp = request(main.port, "/mc/page.html", ae)
    assert_encoded(resp, "br", static_file(env, "page.html"))
