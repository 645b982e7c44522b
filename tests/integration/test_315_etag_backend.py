# SPDX-License-Identifier: Apache-2.0
"""A proxied backend whose ETags may end in one of our suffixes ("v1-gzip" for its identity body,
W/"v1-br"). Every representation (identity, gzip, br, zstd) carries a distinct validator; each
client sending its own tag back gets 304 with that same tag; after the backend changes its tag every
client gets 200 with the exact bytes (a wrong 304 would leave it with stale bytes). The backend is a
small http.server in this process (a thread on 127.0.0.1, shut down by the fixture) that answers
If-None-Match itself (weak comparison)."""
import http.server
import threading

import pytest

from mc_client import assert_encoded, request
from mc_drop_in import start_dropin, stop_checked

CLIENTS = {"identity": None, "gzip": "gzip", "br": "br", "zstd": "zstd"}
TAGS = ['"v1"', '"v1-gzip"', 'W/"v1-br"', '"v1-identity"', '"v1-zstd-identity"']


def body_for(tag: str) -> bytes:
    line = f"<p>version {tag}: the quick brown fox jumps over the lazy dog</p>\n".encode()
    return b"<html><body>\n" + line * 120 + b"</body></html>\n"


def opaque(tag: str) -> str:
    return tag[2:] if tag.startswith("W/") else tag


class Backend:
    """Serves /res/* with the current (tag, body); 304 when If-None-Match matches weakly."""

    def __init__(self):
        self.tag = '"v1"'
        self.seen_inm: list[str | None] = []
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                inm = self.headers.get("If-None-Match")
                backend.seen_inm.append(inm)
                tag = backend.tag
                match = inm is not None and (inm.strip() == "*" or any(
                    opaque(t.strip()) == opaque(tag) for t in inm.split(",")))
                if match:
                    self.send_response(304)
                    self.send_header("ETag", tag)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = body_for(tag)
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("ETag", tag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


FRONT = r"""
<Location /bytype/>
    ProxyPass http://127.0.0.1:{port}/res/
    AddOutputFilterByType MULTICOMPRESS text/html
    MultiCompressEncodings zstd br gzip deflate
</Location>
<Location /set/>
    ProxyPass http://127.0.0.1:{port}/res/
    SetOutputFilter MULTICOMPRESS
    MultiCompressEncodings zstd br gzip deflate
</Location>
"""


@pytest.fixture(scope="module")
def servers(env):
    back = Backend()
    try:
        front = start_dropin(env, "t315-front", FRONT.replace("{port}", str(back.port)),
                             modules=["proxy", "proxy_http"])
    except Exception:
        back.close()
        raise
    yield front, back
    stop_checked(front)
    back.close()


PREFIXES = ["/bytype/", "/set/"]


def get(front, prefix, client, inm=None):
    headers = [("If-None-Match", inm)] if inm else []
    return request(front.port, f"{prefix}doc", CLIENTS[client], headers=headers)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("tag", TAGS)
def test_mc_315_01_distinct_tags_and_304_each(servers, prefix, tag):
    front, back = servers
    back.tag = tag
    tags = {}
    for client, ae in CLIENTS.items():
        r = get(front, prefix, client)
        assert_encoded(r, ae, body_for(tag))
        tags[client] = r.header("ETag")
        assert tags[client], r
    assert len(set(tags.values())) == len(CLIENTS), tags
    for client in CLIENTS:
        r = get(front, prefix, client, tags[client])
        assert r.status == 304, (client, tags, back.seen_inm[-1:], r)
        assert r.header_all("ETag") == [tags[client]], (client, tags, r.headers)
        assert r.vary_tokens() == ["accept-encoding"], r.headers


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("old,new", [('"v1"', '"v1-gzip"'), ('"v1-gzip"', '"v1"'),
                                     ('"v1"', 'W/"v1-br"'), ('W/"v1-br"', '"v1"'),
                                     ('"v1-gzip"', '"v1-gzip-gzip"'),
                                     ('"v1"', '"v1-identity"')])
def test_mc_315_02_changed_backend_tag_gets_200(servers, prefix, old, new):
    """Whatever tag a client holds from the old version, the new one is never confirmed by a
    304: each client gets 200 with the new bytes, and its new tag then validates."""
    front, back = servers
    back.tag = old
    held = {}
    for client in CLIENTS:
        held[client] = get(front, prefix, client).header("ETag")
    back.tag = new
    for client, ae in CLIENTS.items():
        # the client's own tag, and every tag of the old version at once
        for inm in (held[client], ", ".join(held.values())):
            r = get(front, prefix, client, inm)
            assert r.status == 200, (client, old, new, inm, back.seen_inm[-1:], r)
            assert_encoded(r, ae, body_for(new))
            again = get(front, prefix, client, r.header("ETag"))
            assert again.status == 304, (client, r.header("ETag"), back.seen_inm[-1:])


@pytest.mark.parametrize("prefix", PREFIXES)
def test_mc_315_03_other_clients_tag_not_confirmed(servers, prefix):
    """A br client sending the gzip client's tag does not get a 304 for a representation it
    would not get (its stored response would be gzip): 200 with br."""
    front, back = servers
    back.tag = '"v1-gzip"'
    gz = get(front, prefix, "gzip").header("ETag")
    r = get(front, prefix, "br", gz)
    assert r.status == 200, (gz, back.seen_inm[-1:], r)
    assert_encoded(r, "br", body_for('"v1-gzip"'))


@pytest.mark.parametrize("prefix", PREFIXES)
def test_mc_315_04_star(servers, prefix):
    front, back = servers
    back.tag = '"v1-gzip"'
    want = get(front, prefix, "gzip").header("ETag")
    r = get(front, prefix, "gzip", "*")
    assert r.status == 304 and r.header_all("ETag") == [want], r.headers
