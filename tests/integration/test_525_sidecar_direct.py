# SPDX-License-Identifier: Apache-2.0
"""A sidecar goes out only if the direct request for it would: `GET /x/page.html.br` by the same
client must get those very bytes with a 200.

The attacks: rules that read the URL or the file name and refuse the sidecar's own URL
(a server-context `RewriteRule ... [F]`, `Require expr` on REQUEST_URI in the same <Directory>
as the page, so the subrequest's merged per-dir config is the page's own object), and an
`AliasMatch` that maps only `*.html` (the sidecar's URL maps nowhere). Each sidecar holds bytes
that differ from the page, so a sidecar sent where it must not be shows in the decoded body.
mod_userdir shows the other side: a URL that only translate_name maps still gets its sidecar.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mc_client import request
from mc_server import HttpdServer
from mc_stores import SOURCE_LOG_CONF, compress, get, write_file

SITE = SOURCE_LOG_CONF + """
RewriteEngine On
RewriteRule "^/rw/.*\\.br$" - [F]
AliasMatch "^/am/(.*\\.html)$" "@HTDOCS@/amdir/$1"
UserDir "@GEN@/home/*/www"
<Directory "@HTDOCS@/rw">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/expr">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressStatic On
    Require expr "%{REQUEST_URI} !~ /\\.br$/"
</Directory>
<Directory "@HTDOCS@/fname">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressStatic On
    Require expr "%{REQUEST_FILENAME} !~ /\\.zst$/"
</Directory>
<Directory "@HTDOCS@/amdir">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressStatic On
</Directory>
<Directory "@GEN@/home">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressStatic On
</Directory>
"""
PAGE = b"<html><body>\n" + b"<p>the page itself, as the file holds it</p>\n" * 60 + b"</body></html>\n"
SIDECAR_TEXT = PAGE.replace(b"the page itself", b"SIDECAR-ONLY...")
SUFFIX = {"br": ".br", "zstd": ".zst", "gzip": ".gz"}


@pytest.fixture(scope="module")
def srv(env):
    s = HttpdServer(env, "sidecar-direct", site_template=None, extra_conf=SITE,
                    extra_modules=["rewrite", "userdir", "authz_host"])
    try:
        s.start()
        for d in ("rw", "expr", "fname", "amdir"):
            (s.htdocs / d).mkdir()
        (s.gen / "home" / "alice" / "www").mkdir(parents=True)
        for root, dirs, _ in os.walk(s.gen):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        yield s
    finally:
        s.stop()


def with_sidecar(base: Path, coding: str) -> Path:
    page = write_file(base / "page.html", PAGE, time.time() - 1000)
    write_file(Path(str(page) + SUFFIX[coding]), compress(SIDECAR_TEXT, coding), time.time())
    return page


# the direct requests' own refusals: "client denied by server configuration"
@pytest.mark.log_allow(r"AH01630")
@pytest.mark.parametrize("prefix,directory,coding,direct_status", [
    ("/rw", "rw", "br", 403),        # RewriteRule "\.br$" - [F] in server context
    ("/expr", "expr", "br", 403),    # Require expr on REQUEST_URI, same <Directory>
    ("/fname", "fname", "zstd", 403),  # Require expr on REQUEST_FILENAME
    ("/am", "amdir", "br", 404),     # AliasMatch maps only *.html
])
def test_mc_525_01_refused_direct_means_no_sidecar(srv, prefix, directory, coding,
                                                   direct_status):
    with_sidecar(srv.htdocs / directory, coding)
    direct = request(srv.port, f"{prefix}/page.html{SUFFIX[coding]}")
    assert direct.status == direct_status, direct
    got = get(srv, f"{prefix}/page.html", coding)
    assert got.resp.status == 200 and got.resp.content_encoding == coding, got.resp
    assert got.source == "live", got.source
    assert got.resp.decoded() == PAGE, "sent a sidecar that its own URL refuses"


def test_mc_525_02_userdir_sidecar_is_sent(srv):
    # the URL maps to the file only through translate_name (mod_userdir): the sidecar's URL does
    # too, and a direct request gets it
    with_sidecar(srv.gen / "home" / "alice" / "www", "br")
    direct = request(srv.port, "/~alice/page.html.br")
    assert direct.status == 200, direct
    got = get(srv, "/~alice/page.html", "br")
    assert got.source == "sidecar" and got.resp.decoded() == SIDECAR_TEXT, got.source
    # and the page's own gzip sidecar is not there: live
    assert get(srv, "/~alice/page.html", "gzip").source == "live"
