# SPDX-License-Identifier: Apache-2.0
"""Dictionaries only from what every client may have (RFC 9842 §9).

The attack: a page made for one user (a PIN, a session) becomes a shared dictionary, and anyone
can then test guesses of it by naming their SHA-256 in `Available-Dictionary`: `dcz` comes back
only for the right guess. So a response is neither offered (`Use-As-Dictionary`) nor learned
when it carries `Cache-Control: private` or `no-store` (also added later by mod_headers) or a
`Set-Cookie`, or answers a request with `Cookie` or `Authorization` (unless the response says
`Cache-Control: public`, as RFC 9111 §3.5 lets a shared cache keep it). A dictionary's origin is
the virtual host that served it, never the `Host` header alone; every distinct body of a
dynamic handler is its own version.
"""
from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import quote

import pytest

from mc_client import Response
from mc_dictionary import get_as
from mc_process import free_port
from mc_server import HttpdServer

AE = "dcz, zstd, br, gzip"

SITE = """
MultiCompressEncodings dcz zstd br gzip
MultiCompressCacheStore @STORE@
ScriptAlias /cgi-bin/ "@HTDOCS@/cgi-bin/"
ScriptAlias /cgi-late/ "@HTDOCS@/cgi-bin/"
<Location /cgi-bin/>
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressUseAsDictionary "/t/*"
</Location>
<Location /cgi-late/>
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressUseAsDictionary "/t/*"
    # a logged-in area: mod_headers marks it private after the handler
    Header set Cache-Control "private, max-age=0"
</Location>
Alias /t "@HTDOCS@/target"
<Directory "@HTDOCS@/target">
    AddOutputFilterByType MULTICOMPRESS text/html
</Directory>
Listen 127.0.0.1:@PORT2@
<VirtualHost 127.0.0.1:@PORT@>
    ServerName a.test
</VirtualHost>
<VirtualHost 127.0.0.1:@PORT2@>
    ServerName c.test
</VirtualHost>
"""
TARGET = (b"<html><body>\n<p>Your account page. PIN: 0000</p>\n"
          + b"<p>navigation, footer and the text every page of this site shares</p>\n" * 40
          + b"</body></html>\n")


def page_body(token: str) -> bytes:
    """What htdocs/cgi-bin/echo_token.py answers for t=TOKEN."""
    return (b"<html><body>\n<p>Your account page. PIN: " + token.encode() + b"</p>\n"
            + b"<p>navigation, footer and the text every page of this site shares</p>\n" * 40
            + b"</body></html>\n")


@pytest.fixture(scope="module")
def srv(env, memcache_store):
    store = memcache_store
    port2 = free_port()
    s = HttpdServer(env, "dictionary-private", site_template=None,
                    extra_conf=SITE.replace("@STORE@", store.spec).replace("@PORT2@",
                                                                            str(port2)),
                    extra_modules=["socache_memcache"])
    try:
        s.start()
        s.port2 = port2
        (s.htdocs / "target").mkdir()
        (s.htdocs / "target" / "page.html").write_bytes(TARGET)
        yield s
    finally:
        s.stop()


def get(port: int, path: str, host: str = "a.test", ae: str | None = AE,
        headers: tuple[tuple[str, str], ...] = ()) -> Response:
    return get_as(port, path, ae, headers=headers, host=host)


def available(data: bytes) -> tuple[str, str]:
    return ("Available-Dictionary", ":" + base64.b64encode(hashlib.sha256(data).digest()).decode()
            + ":")


def cgi(token: str, *headers: str, prefix: str = "/cgi-bin/") -> str:
    q = "&".join([f"t={token}"] + [f"h={quote(h)}" for h in headers])
    return f"{prefix}echo_token.py?{q}"


def guess_works(srv, body: bytes, port: int | None = None, host: str = "a.test") -> bool:
    """An attacker without cookies names `body`'s hash: dcz comes back only if it was learned."""
    r = get(port or srv.port, "/t/page.html", host=host, headers=(available(body),))
    assert r.status == 200, r
    return r.content_encoding == "dcz"


def test_mc_496_01_public_page_is_a_dictionary(srv):
    token = secrets.token_hex(4)
    r = get(srv.port, cgi(token), ae="identity")
    assert r.body == page_body(token) and r.header("Use-As-Dictionary") == 'match="/t/*"'
    assert guess_works(srv, page_body(token))


@pytest.mark.parametrize("case", ["cookie", "authorization", "private", "no-store",
                                  "set-cookie", "late-private"])
def test_mc_496_02_private_pages_are_never_dictionaries(srv, case):
    pin = f"{secrets.randbelow(10000):04d}"
    headers: tuple[tuple[str, str], ...] = ()
    path = cgi(pin)
    if case == "cookie":
        headers = (("Cookie", "session=s3cr3t"),)
    elif case == "authorization":
        headers = (("Authorization", "Basic dXNlcjpwYXNz"),)
    elif case == "private":
        path = cgi(pin, "Cache-Control: private")
    elif case == "no-store":
        path = cgi(pin, "Cache-Control: no-store")
    elif case == "set-cookie":
        path = cgi(pin, "Set-Cookie: session=abc; HttpOnly")
    else:
        path = cgi(pin, prefix="/cgi-late/")
    victim = get(srv.port, path, ae="gzip, br", headers=headers)
    assert victim.status == 200 and page_body(pin) in victim.decoded()
    assert victim.header("Use-As-Dictionary") is None, victim
    # the attacker tries the right PIN (and a few wrong ones): never a dcz answer
    for guess in {pin, "0000", "1234"}:
        assert not guess_works(srv, page_body(guess)), f"PIN {guess} confirmed by dcz"


def test_mc_496_03_credentialed_request_with_public_response(srv):
    # The handler says the response is for everyone (RFC 9111 §3.5: Cache-Control: public).
    token = secrets.token_hex(4)
    r = get(srv.port, cgi(token, "Cache-Control: public, max-age=600"), ae="identity",
            headers=(("Cookie", "consent=yes"),))
    assert r.header("Use-As-Dictionary") == 'match="/t/*"', r
    assert guess_works(srv, page_body(token))


def test_mc_496_04_origin_is_the_virtual_host(srv):
    # learned by c.test (port 2) from a request that says Host: a.test
    token = secrets.token_hex(4)
    assert get(srv.port2, cgi(token), host="a.test", ae="identity").header("Use-As-Dictionary")
    assert not guess_works(srv, page_body(token), port=srv.port, host="a.test")
    assert guess_works(srv, page_body(token), port=srv.port2, host="c.test")
    # and the other way round
    token2 = secrets.token_hex(4)
    assert get(srv.port, cgi(token2), host="a.test", ae="identity").header("Use-As-Dictionary")
    assert not guess_works(srv, page_body(token2), port=srv.port2, host="a.test")
    assert guess_works(srv, page_body(token2), port=srv.port, host="a.test")
    # within one virtual host the Host header changes nothing: c.test answers any name
    assert guess_works(srv, page_body(token), port=srv.port2, host="elsewhere.example")


def test_mc_496_05_every_body_of_a_script_is_its_own_version(srv):
    first, second = secrets.token_hex(4), secrets.token_hex(4)
    for t in (first, second):
        r = get(srv.port, cgi(t), ae="identity")
        assert r.body == page_body(t) and r.header("Use-As-Dictionary")
    assert guess_works(srv, page_body(first))
    assert guess_works(srv, page_body(second)), "a script's second body was never learned"
