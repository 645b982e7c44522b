# SPDX-License-Identifier: Apache-2.0
"""The integration tests' client: `request()` is a raw http.client request (nothing is decoded
behind the test's back), `Response` holds what came back, and the assertions shared by the
tests check a response's coding, body, Content-Length and Vary."""
from __future__ import annotations

import http.client
from dataclasses import dataclass
from typing import Sequence

from mc_decode import decode


@dataclass
class Response:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes

    def header_all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def header(self, name: str) -> str | None:
        vals = self.header_all(name)
        return ", ".join(vals) if vals else None

    @property
    def content_encoding(self) -> str | None:
        return self.header("Content-Encoding")

    def vary_tokens(self) -> list[str]:
        """Every Vary member over all Vary lines, lower-cased, in order."""
        out = []
        for v in self.header_all("Vary"):
            out.extend(t.strip().lower() for t in v.split(",") if t.strip())
        return out

    def decoded(self) -> bytes:
        return decode(self.body, self.content_encoding)

    def __repr__(self) -> str:
        return f"<Response {self.status} {self.headers!r} body={len(self.body)}B>"


def _send(conn: http.client.HTTPConnection, method: str, path: str,
          accept_encoding: str | Sequence[str] | None, headers: Sequence[tuple[str, str]]):
    # putrequest(skip_accept_encoding=True): http.client would otherwise add
    # "Accept-Encoding: identity" by itself.
    conn.putrequest(method, path, skip_accept_encoding=True)
    if accept_encoding is not None:
        values = [accept_encoding] if isinstance(accept_encoding, str) else accept_encoding
        for v in values:
            conn.putheader("Accept-Encoding", v)
    for k, v in headers:
        conn.putheader(k, v)
    conn.endheaders()


def request(port: int, path: str, accept_encoding: str | Sequence[str] | None = None,
            headers: Sequence[tuple[str, str]] = (), method: str = "GET",
            timeout: float = 60) -> Response:
    """One request on a fresh connection; the body is returned as sent (still encoded).
    `accept_encoding`: None sends no header, a list sends one header line per item."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        _send(conn, method, path, accept_encoding, headers)
        resp = conn.getresponse()
        body = resp.read()
        return Response(resp.status, resp.reason, list(resp.getheaders()), body)
    finally:
        conn.close()


def open_stream(port: int, path: str, accept_encoding: str | None,
                timeout: float = 60) -> tuple[http.client.HTTPConnection,
                                              http.client.HTTPResponse]:
    """Sends a request and returns after the response headers; read with resp.read1()."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    _send(conn, "GET", path, accept_encoding, ())
    return conn, conn.getresponse()


# ---------------------------------------------------------------------------------------------
# Assertions shared by the tests

def suffixed(etag: str, coding: str) -> str:
    """The ETag with our suffix for `coding` (MultiCompressAlterETag AddSuffix)."""
    assert etag.endswith('"'), etag
    return etag[:-1] + f'-{coding}"'


def assert_vary_once(resp: Response) -> None:
    tokens = resp.vary_tokens()
    assert tokens.count("accept-encoding") == 1, f"Vary: {resp.header_all('Vary')}"
    assert len(tokens) == len(set(tokens)), f"duplicated Vary member: {resp.header_all('Vary')}"


def assert_encoded(resp: Response, coding: str | None, expected: bytes, *,
                   vary: bool = True) -> None:
    """Status 200, Content-Encoding `coding` (None: identity), one Content-Encoding line with a
    single token, decoded body == expected, Vary: Accept-Encoding once (when `vary`), and a
    Content-Length that is absent or equal to the bytes on the wire."""
    assert resp.status == 200, resp
    ces = resp.header_all("Content-Encoding")
    if coding is None:
        assert not ces, f"expected identity, got Content-Encoding {ces}"
        assert resp.body == expected, "identity body differs from the file"
    else:
        assert ces == [coding], f"expected Content-Encoding {coding}, got {ces}"
        assert resp.decoded() == expected, "decoded body differs from the file"
    cl = resp.header_all("Content-Length")
    assert len(cl) <= 1, cl
    if cl:
        assert int(cl[0]) == len(resp.body), f"Content-Length {cl[0]} != {len(resp.body)}"
    if vary:
        assert_vary_once(resp)
