# SPDX-License-Identifier: Apache-2.0
"""Nobody else's bytes: compress-once (sidecars, MultiCompressCache and its upgrade worker) only
where the response is the file, the same for everyone.

Written as the attacks an administrator's real configuration invites: SSI pages (mod_include,
XBitHack) that echo a visitor's cookie or the query string, mod_substitute per location and per
virtual host, two virtual hosts on one DocumentRoot sharing one memcached, and sidecars next to
SSI templates. Each test fails when a cache entry or a sidecar carries bytes that the response
without the module would not have had for this client and this virtual host.
"""
from __future__ import annotations

import http.client
import os
import time
from pathlib import Path

import pytest

from mc_client import Response
from mc_server import HttpdServer
from mc_stores import (SOURCE_LOG_CONF, compress, poll_until, wait_source,
                       write_file)

ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")
UPGRADE_WAIT = 3.0  # the upgrade worker stores a strong copy within ~0.1 s of a fill

SITE = SOURCE_LOG_CONF + """
MultiCompressCacheStore @STORE@
AddType text/html .shtml
<Directory "@HTDOCS@/ssi">
    Options +Includes
    AddOutputFilter INCLUDES .shtml
    XBitHack on
    AddOutputFilterByType MULTICOMPRESS text/html text/plain
    MultiCompressCache On
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/subst">
    AddOutputFilterByType SUBSTITUTE text/html
    Substitute "s/PUBLIC-WORD/substituted-word/"
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressCache On
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/shared">
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressCache On
</Directory>
<VirtualHost 127.0.0.1:@PORT@>
    ServerName a.test
</VirtualHost>
<VirtualHost 127.0.0.1:@PORT@>
    ServerName b.test
    # one virtual host rewrites its pages: its bytes are its own
    <Location "/shared/">
        AddOutputFilterByType SUBSTITUTE text/html
        Substitute "s/PUBLIC-WORD/b-test-only/"
    </Location>
</VirtualHost>
"""

SSI_ECHO = (b"<html><body><p>Hello, your cookie is <!--#echo var=\"HTTP_COOKIE\" --> and you "
            b"asked for <!--#echo var=\"QUERY_STRING\" -->.</p>\n"
            + b"<p>public text that compresses well, public text that compresses well</p>\n" * 60
            + b"</body></html>\n")
SSI_TEMPLATE = (b"<!--#set var=\"dbpass\" value=\"hunter2-db-password\" -->\n<html><body>\n"
                + b"<p>the page a visitor may see, the page a visitor may see</p>\n" * 60
                + b"</body></html>\n")
PUBLIC_PAGE = (b"<html><body>\n" + b"<p>PUBLIC-WORD: text that every visitor may read</p>\n" * 80
               + b"</body></html>\n")


@pytest.fixture(scope="module")
def srv(env, memcache_store):
    store = memcache_store
    s = HttpdServer(env, "shared-bytes", site_template=None,
                    extra_conf=SITE.replace("@STORE@", store.spec),
                    extra_modules=["include", "substitute", "socache_memcache"],
                    mpm_conf=ONE_CHILD)
    try:
        s.start()
        for d in ("ssi", "subst", "shared"):
            (s.htdocs / d).mkdir(exist_ok=True)
            os.chmod(s.htdocs / d, 0o755)
        yield s
    finally:
        s.stop()


_n = iter(range(1, 1 << 30))


def page(srv: HttpdServer, d: str, ext: str, body: bytes, mode: int = 0o644) -> tuple[str, Path]:
    """A new file in htdocs/D (its URL and path); its mtime is in the past (a strong ETag)."""
    name = f"p{os.getpid()}-{next(_n)}.{ext}"
    path = write_file(srv.htdocs / d / name, body, time.time() - 1000)
    os.chmod(path, mode)
    return f"/{d}/{name}", path


def hget(srv: HttpdServer, path: str, ae: str | None = "gzip", host: str | None = None,
         headers: tuple[tuple[str, str], ...] = ()) -> tuple[Response, str]:
    """GET with an optional Host; returns the response and its logged source."""
    rid = f"s{os.getpid()}-{next(_n)}"
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=host is not None, skip_accept_encoding=True)
        if host is not None:
            conn.putheader("Host", host)
        if ae is not None:
            conn.putheader("Accept-Encoding", ae)
        for k, v in (("X-MC-Id", rid), *headers):
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        resp = Response(r.status, r.reason, list(r.getheaders()), r.read())
    finally:
        conn.close()
    return resp, wait_source(srv, rid)[0]


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_520_01_ssi_cookie_never_cached_for_another_client(srv, coding):
    url, _ = page(srv, "ssi", "shtml", SSI_ECHO)
    victim, _ = hget(srv, url, coding, headers=(("Cookie", "session=victim-4711"),))
    assert victim.status == 200 and victim.content_encoding == coding, victim
    assert b"session=victim-4711" in victim.decoded()
    time.sleep(UPGRADE_WAIT)  # what an upgrade of the entry would have written is in by now
    for _ in range(3):
        other, source = hget(srv, url, coding)
        body = other.decoded()
        assert b"victim-4711" not in body, "another client's SSI output came from the cache"
        assert b"<!--#echo" not in body, "the unprocessed template came from the cache"
        assert source == "live", source


def test_mc_520_02_query_string_does_not_poison_the_cache(srv):
    url, _ = page(srv, "ssi", "shtml", SSI_ECHO)
    hget(srv, url + "?%3Cscript%3Eattacker%3C/script%3E", "br")
    time.sleep(UPGRADE_WAIT)
    victim, source = hget(srv, url, "br")
    assert b"attacker" not in victim.decoded() and source == "live", (source, victim)


@pytest.mark.parametrize("coding", ["br", "gzip"])
def test_mc_520_03_sidecar_of_an_ssi_template_is_not_sent(srv, coding):
    url, path = page(srv, "ssi", "shtml", SSI_TEMPLATE)
    write_file(Path(str(path) + {"br": ".br", "gzip": ".gz"}[coding]),
               compress(SSI_TEMPLATE, coding), time.time())
    r, source = hget(srv, url, coding)
    assert r.status == 200 and source == "live", (source, r)
    body = r.decoded()
    assert b"hunter2-db-password" not in body and b"#set" not in body, body[:200]


def test_mc_520_04_xbithack_html_is_not_compressed_once(srv):
    # XBitHack on: an executable .html is SSI; its sidecar and cache entry are the template
    url, path = page(srv, "ssi", "html", SSI_TEMPLATE, mode=0o755)
    write_file(Path(str(path) + ".br"), compress(SSI_TEMPLATE, "br"), time.time())
    os.chmod(path, 0o755)
    for ae in ("br", "gzip", "gzip"):
        r, source = hget(srv, url, ae)
        assert r.status == 200 and source == "live", (ae, source, r)
        assert b"hunter2-db-password" not in r.decoded()
    # the same page not executable is plain HTML: compress-once applies
    url2, path2 = page(srv, "ssi", "html", PUBLIC_PAGE)
    write_file(Path(str(path2) + ".br"), compress(PUBLIC_PAGE, "br"), time.time())
    r, source = hget(srv, url2, "br")
    assert source == "sidecar" and r.decoded() == PUBLIC_PAGE, source


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_mc_520_05_substitute_applies_to_every_client(srv, coding):
    url, path = page(srv, "subst", "html", PUBLIC_PAGE)
    write_file(Path(str(path) + {"br": ".br", "zstd": ".zst"}[coding]),
               compress(PUBLIC_PAGE, coding), time.time())
    want = PUBLIC_PAGE.replace(b"PUBLIC-WORD", b"substituted-word")
    for _ in range(3):  # sidecar, then (no sidecar for gzip) cache fill and hit
        r, source = hget(srv, url, coding)
        assert r.decoded() == want and source == "live", source
    r, source = hget(srv, url, "gzip")
    assert r.decoded() == want and source == "live", source
    time.sleep(UPGRADE_WAIT)
    r, source = hget(srv, url, "gzip")
    assert r.decoded() == want and source == "live", source


def test_mc_520_06_virtual_hosts_do_not_share_entries(srv):
    url, _ = page(srv, "shared", "html", PUBLIC_PAGE)
    # b.test substitutes its pages; a.test does not
    b, b_source = hget(srv, url, "br", host="b.test")
    assert b.decoded() == PUBLIC_PAGE.replace(b"PUBLIC-WORD", b"b-test-only"), b_source
    time.sleep(UPGRADE_WAIT)
    a, _ = hget(srv, url, "br", host="a.test")
    assert a.decoded() == PUBLIC_PAGE, "a.test got b.test's substituted page"
    # a.test's own entry: filled by a.test, served to a.test, never to b.test
    a2, a2_source = poll_until(lambda: (lambda r: r if r[1] == "cache" else None)(
        hget(srv, url, "br", host="a.test")), timeout=6) or (None, None)
    assert a2 is not None and a2.decoded() == PUBLIC_PAGE, "a.test's entry was never used"
    for _ in range(2):
        b2, b2_source = hget(srv, url, "br", host="b.test")
        assert b2.decoded() == PUBLIC_PAGE.replace(b"PUBLIC-WORD", b"b-test-only"), b2_source
        assert b2_source == "live"


def test_mc_520_07_plain_files_still_compressed_once(srv):
    # The guard must not cost compress-once on an ordinary server: mod_headers, mod_filter's
    # harness for our filter, and mod_include loaded but not on this response.
    url, path = page(srv, "shared", "html", PUBLIC_PAGE)
    first, source = hget(srv, url, "br", host="a.test")
    assert source == "live" and first.decoded() == PUBLIC_PAGE
    hit = poll_until(lambda: (lambda r: r if r[1] == "cache" else None)(
        hget(srv, url, "br", host="a.test")), timeout=6)
    assert hit and hit[0].decoded() == PUBLIC_PAGE
    # an entry is bound to its virtual host: b.test (no filter on /ssi/) fills its own
    url_b, _ = page(srv, "ssi", "html", PUBLIC_PAGE)
    assert poll_until(lambda: hget(srv, url_b, "br", host="a.test")[1] == "cache", timeout=6)
    first_b, source_b = hget(srv, url_b, "br", host="b.test")
    assert source_b == "live" and first_b.decoded() == PUBLIC_PAGE, source_b
    assert poll_until(lambda: hget(srv, url_b, "br", host="b.test")[1] == "cache", timeout=6)
    url2, path2 = page(srv, "ssi", "html", PUBLIC_PAGE)
    write_file(Path(str(path2) + ".gz"), compress(PUBLIC_PAGE, "gzip"), time.time())
    r, source = hget(srv, url2, "gzip")
    assert source == "sidecar" and r.decoded() == PUBLIC_PAGE
