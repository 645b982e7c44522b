# SPDX-License-Identifier: Apache-2.0
"""Every encoding for every text type decodes to the file; images are left alone."""
import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_decode import ZSTD_MAX_WINDOW, zstd_window

TEXT_FILES = ["page.html", "small.html", "style.css", "app.js", "data.json", "logo.svg",
              "license.txt"]
IMAGES = ["image.png", "photo.jpg"]


@pytest.mark.parametrize("name", TEXT_FILES + IMAGES)
def test_mc_100_00_reference_without_filter(env, main, name):
    """/plain/ (no filter) serves htdocs as is: the reference the other tests compare with."""
    resp = request(main.port, f"/plain/{name}", "zstd, br, gzip")
    assert resp.status == 200
    assert resp.header("Content-Encoding") is None and resp.header("Vary") is None
    assert resp.body == static_file(env, name)


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
@pytest.mark.parametrize("name", TEXT_FILES)
def test_mc_100_01_each_encoding_each_type(env, main, name, coding):
    resp = request(main.port, f"/mc/{name}", coding)
    assert_encoded(resp, coding, static_file(env, name))
    assert len(resp.body) < len(static_file(env, name)), "compressed body is not smaller"


@pytest.mark.parametrize("name", ["page.html", "style.css", "app.js", "data.json"])
def test_mc_100_02_deflate_when_enabled(env, main, name):
    resp = request(main.port, f"/mc-deflate/{name}", "deflate")
    assert_encoded(resp, "deflate", static_file(env, name))


@pytest.mark.parametrize("name", TEXT_FILES + IMAGES)
def test_mc_100_03_no_accept_encoding_is_identity(env, main, name):
    resp = request(main.port, f"/mc/{name}", None)
    # Images have no filter (not in AddOutputFilterByType): no Vary is owed for them.
    assert_encoded(resp, None, static_file(env, name), vary=name not in IMAGES)


@pytest.mark.parametrize("prefix", ["/mc/", "/f-set/"])
@pytest.mark.parametrize("name", IMAGES)
def test_mc_100_04_images_untouched(env, main, prefix, name):
    """By type the filter is not attached; with SetOutputFilter the mod_deflate idiom
    (SetEnvIfNoCase Request_URI \\.png$ no-gzip) keeps images out."""
    data = static_file(env, name)
    resp = request(main.port, prefix + name, "zstd, br, gzip, deflate")
    assert resp.status == 200
    assert resp.header_all("Content-Encoding") == []
    assert resp.body == data
    assert resp.header("Content-Length") == str(len(data))


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_100_05_binary_bodies_survive(env, main, coding):
    """SetOutputFilter without exclusions compresses images too: not one byte may change."""
    for name in IMAGES:
        assert_encoded(request(main.port, f"/f-set-all/{name}", coding), coding,
                       static_file(env, name))


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_100_06_etag_suffix(main, coding):
    etag = request(main.port, "/plain/page.html").header("ETag")
    assert etag and etag.startswith('"') and etag.endswith('"'), etag
    resp = request(main.port, "/mc/page.html", coding)
    assert resp.header("ETag") == etag[:-1] + f'-{coding}"'
    # identity: the file's own ETag
    assert request(main.port, "/mc/page.html", None).header("ETag") == etag


def test_mc_100_07_zstd_window_at_most_8mib(main):
    for prefix in ("/mc/", "/lvl-zstd19/"):
        resp = request(main.port, prefix + "page.html", "zstd")
        assert resp.content_encoding == "zstd"
        assert zstd_window(resp.body) <= ZSTD_MAX_WINDOW


def test_mc_100_08_keepalive_mixed_encodings(env, main):
    """Several responses with different encodings on one connection."""
    import http.client
    from mc_client import Response, _send
    conn = http.client.HTTPConnection("127.0.0.1", main.port, timeout=30)
    try:
        for coding in ["gzip", "br", None, "zstd", "gzip"]:
            _send(conn, "GET", "/mc/style.css", coding, ())
            r = conn.getresponse()
            resp = Response(r.status, r.reason, list(r.getheaders()), r.read())
            assert_encoded(resp, coding, static_file(env, "style.css"))
    finally:
        conn.close()
