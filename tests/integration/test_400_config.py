# SPDX-License-Identifier: Apache-2.0
"""Per-directory configuration: <Directory>, <Location>, <Files>, .htaccess; levels, windows,
MinLength. Sections inherit what they do not set."""

import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_decode import inflate_with_window, zstd_window

ALL = "zstd, br, gzip, deflate"


def size(main, path: str, coding: str, expected: bytes) -> int:
    resp = request(main.port, path, coding)
    assert_encoded(resp, coding, expected)
    return len(resp.body)


# ---- <Directory>

@pytest.mark.parametrize("path,ae,expected", [
    ("/dir/page.html", ALL, "br"),          # MultiCompressEncodings br gzip
    ("/dir/page.html", "zstd", None),
    ("/dir/page.html", "zstd, gzip", "gzip"),
    ("/dir/sub/page.html", ALL, "br"),      # inherited from /dir
    ("/dir/sub/page.html", "zstd", None),
    ("/dir/sub2/page.html", ALL, "gzip"),   # MultiCompressEncodings gzip
    ("/dir/sub2/page.html", "br", None),
])
def test_mc_400_01_directory_encodings(env, main, path, ae, expected):
    assert_encoded(request(main.port, path, ae), expected, static_file(env, "page.html"))


def test_mc_400_02_directory_levels_inherit_and_override(env, main):
    page = static_file(env, "page.html")
    # /dir: defaults (gzip 6, br 4); /dir/sub: gzip 1, br 0; /dir/sub2 + <Location>: gzip 9
    gz6 = size(main, "/dir/page.html", "gzip", page)
    gz1 = size(main, "/dir/sub/page.html", "gzip", page)
    gz9 = size(main, "/dir/sub2/page.html", "gzip", page)
    assert gz1 > gz6 > gz9, (gz1, gz6, gz9)
    br4 = size(main, "/dir/page.html", "br", page)
    br0 = size(main, "/dir/sub/page.html", "br", page)
    assert br0 > br4
    # level 6 in /dir is the default: same size as /mc/
    assert gz6 == size(main, "/mc/page.html", "gzip", page)


# ---- <Files>

@pytest.mark.parametrize("name,ae,expected", [
    ("style.css", ALL, "gzip"),     # <Files "*.css"> MultiCompressEncodings gzip
    ("style.css", "br, zstd", None),
    ("app.js", ALL, "br"),          # <Files "app.js"> MultiCompressEncodings br
    ("app.js", "gzip", None),
    ("page.html", ALL, "zstd"),     # the directory's defaults
    ("data.json", "gzip, br", "br"),
])
def test_mc_400_03_files_section(env, main, name, ae, expected):
    assert_encoded(request(main.port, f"/files/{name}", ae), expected, static_file(env, name))


def test_mc_400_04_files_section_level(env, main):
    js = static_file(env, "app.js")
    # <Files app.js> MultiCompressLevel br 0 vs the default 4 in /mc/
    assert size(main, "/files/app.js", "br", js) > size(main, "/mc/app.js", "br", js)


# ---- <Location>

@pytest.mark.parametrize("path,ae,expected", [
    ("/loc/page.html", ALL, "br"),
    ("/loc/page.html", "zstd", None),
    ("/loc/sub/page.html", ALL, "gzip"),
    ("/loc/sub/page.html", "br", None),
])
def test_mc_400_05_location_encodings(env, main, path, ae, expected):
    assert_encoded(request(main.port, path, ae), expected, static_file(env, "page.html"))


def test_mc_400_06_location_level(env, main):
    page = static_file(env, "page.html")
    assert size(main, "/loc/sub/page.html", "gzip", page) > size(main, "/loc/page.html", "gzip",
                                                                  page)


# ---- levels

@pytest.mark.parametrize("coding,low,high", [
    ("gzip", "/lvl-gzip1/", "/lvl-gzip9/"),
    ("br", "/lvl-br0/", "/lvl-br11/"),
    ("zstd", "/lvl-zstd1/", "/lvl-zstd19/"),
])
@pytest.mark.parametrize("name", ["page.html", "data.json"])
def test_mc_400_07_level_changes_size(env, main, coding, low, high, name):
    data = static_file(env, name)
    s_low = size(main, low + name, coding, data)
    s_default = size(main, "/mc/" + name, coding, data)
    s_high = size(main, high + name, coding, data)
    assert s_low > s_high, (s_low, s_default, s_high)
    assert s_low != s_default, "the low level gives the default's output"
    assert s_high != s_default, "the high level gives the default's output"


# ---- windows and buffer size

@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_mc_400_08_small_windows(env, main, coding):
    """MultiCompressWindow at each minimum, with MultiCompressBufferSize 1024."""
    for name in ("page.html", "data.json"):
        data = static_file(env, name)
        resp = request(main.port, f"/win-small/{name}", coding)
        assert_encoded(resp, coding, data)
        if coding == "zstd":
            assert zstd_window(resp.body) <= 1 << 10
        if coding in ("gzip", "deflate"):
            # No back-reference beyond 512 bytes; for deflate the zlib header too
            # (CINFO = log2(window) - 8).
            assert inflate_with_window(resp.body, 9, gzip=coding == "gzip") == data


# ---- MinLength

@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_400_09_min_length_default(env, main, coding):
    tiny = static_file(env, "tiny.html")
    assert len(tiny) < 256
    assert_encoded(request(main.port, "/mc/tiny.html", coding), None, tiny)
    # MultiCompressMinLength 0: the same file is compressed
    assert_encoded(request(main.port, "/minlen0/tiny.html", coding), coding, tiny)


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_400_10_min_length_configured(env, main, coding):
    page = static_file(env, "page.html")
    assert len(page) < 100000
    # MultiCompressMinLength 100000: identity, Vary still there
    assert_encoded(request(main.port, "/minlen-big/page.html", coding), None, page)


# ---- .htaccess

def test_mc_400_11_htaccess_encodings_and_level(env, main):
    page = static_file(env, "page.html")
    # no .htaccess yet: /ht/ has the server's defaults
    assert_encoded(request(main.port, "/ht/page.html", ALL), "zstd", page)
    gz6 = size(main, "/ht/page.html", "gzip", page)

    main.write_htaccess("ht", "MultiCompressEncodings gzip br\nMultiCompressLevel gzip 1\n")
    assert_encoded(request(main.port, "/ht/page.html", ALL), "gzip", page)
    assert_encoded(request(main.port, "/ht/page.html", "zstd"), None, page)
    assert size(main, "/ht/page.html", "gzip", page) > gz6
    # a subdirectory inherits the .htaccess of its parent
    assert_encoded(request(main.port, "/ht/sub/page.html", ALL), "gzip", page)
    main.write_htaccess("ht/sub", "MultiCompressEncodings br\n")
    assert_encoded(request(main.port, "/ht/sub/page.html", ALL), "br", page)
    assert_encoded(request(main.port, "/ht/page.html", ALL), "gzip", page)


def test_mc_400_12_htaccess_attaches_filter(env, main):
    page = static_file(env, "page.html")
    assert_encoded(request(main.port, "/ht2/page.html", ALL), None, page, vary=False)
    main.write_htaccess("ht2", "AddOutputFilterByType MULTICOMPRESS text/html\n"
                               "MultiCompressEncodings br zstd\n"
                               "MultiCompressMinLength 1000000\n")
    assert_encoded(request(main.port, "/ht2/page.html", ALL), None, page)
    main.write_htaccess("ht2", "AddOutputFilterByType ZSTD text/html\n"
                               "MultiCompressLevel zstd 19\n")
    z19 = request(main.port, "/ht2/page.html", ALL)
    assert_encoded(z19, "zstd", page)
    assert len(z19.body) < len(request(main.port, "/mc/page.html", "zstd").body)


def test_mc_400_13_htaccess_invalid_value_is_500(env, main, log_allow):
    """A bad value in .htaccess: httpd answers 500 and logs the directive and the file."""
    log_allow.append(r"\[core:alert\].*\.htaccess: MultiCompressLevel")
    mark = main.log_size()
    main.write_htaccess("ht3", "MultiCompressLevel gzip 42\n")
    resp = request(main.port, "/ht3/page.html", "gzip")
    assert resp.status == 500
    log = main.read_log(mark)
    assert "MultiCompressLevel" in log and "ht3/.htaccess" in log, log


def test_mc_400_14_htaccess_needs_allowoverride(env, main, log_allow):
    """AllowOverride None: the .htaccess is not read at all."""
    main.write_htaccess("ht-none", "MultiCompressEncodings gzip\n")
    assert_encoded(request(main.port, "/ht-none/page.html", ALL), "zstd",
                   static_file(env, "page.html"))
