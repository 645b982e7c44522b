# SPDX-License-Identifier: Apache-2.0
"""The soak's client and its checks (part of soak.py): a small HTTP/1.1 client on a raw
socket, and the checks every completed response goes through (status, Content-Encoding,
Content-Length, Vary, the decoded body)."""
from __future__ import annotations

import socket
import struct

from mc_decode import DecodeError, decode

CLIENT_TIMEOUT = 30.0  # --timeout: seconds a request may take
STOCK = False  # --stock: checks accept any coding the client accepted, and do not fail the run
ACCEPTED_TOKENS = {"gzip", "br", "zstd", "deflate"}


# ---------------------------------------------------------------------------------------------
# A small HTTP/1.1 client on a raw socket (http.client is too slow for the rate we want, and
# refuses to send the malformed headers we want to send)

class Closed(Exception):
    """The server closed an idle keep-alive connection before answering."""


class Resp:
    __slots__ = ("status", "headers", "body", "wire")

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes, wire: int):
        self.status, self.headers, self.body, self.wire = status, headers, body, wire

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]

    def get(self, name: str) -> str | None:
        v = self.all(name)
        return ", ".join(v) if v else None

    def describe(self) -> str:
        return f"{self.status} {self.headers} body={len(self.body)}B"


def build_request(method: str, path: str, headers: list[tuple[str, str | bytes]],
                  body_len: int | None = None, chunked: bool = False,
                  close: bool = False) -> bytes:
    out = [f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()]
    for k, v in headers:
        out.append(k.encode() + b": " + (v if isinstance(v, bytes) else v.encode("latin-1"))
                   + b"\r\n")
    if chunked:
        out.append(b"Transfer-Encoding: chunked\r\n")
    elif body_len is not None:
        out.append(b"Content-Length: %d\r\n" % body_len)
    if close:
        out.append(b"Connection: close\r\n")
    out.append(b"\r\n")
    return b"".join(out)


def read_head(rf) -> tuple[int, list[tuple[str, str]], int, bool]:
    line = rf.readline(65537)
    if not line:
        raise Closed()
    wire = len(line)
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        raise ValueError(f"bad status line {line!r}")
    status = int(parts[1])
    headers = []
    while True:
        h = rf.readline(65537)
        wire += len(h)
        if h in (b"\r\n", b"\n"):
            break
        if not h:
            raise ConnectionError("connection closed in the response head")
        k, _, v = h.partition(b":")
        headers.append((k.strip().decode("latin-1").lower(), v.strip().decode("latin-1")))
    keep = parts[0] == b"HTTP/1.1"
    for k, v in headers:
        if k == "connection" and "close" in v.lower():
            keep = False
    return status, headers, wire, keep


def read_body(rf, method: str, status: int,
              headers: list[tuple[str, str]]) -> tuple[bytes, int, bool]:
    """(body, bytes on the wire, whether the connection may be reused)."""
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return b"", 0, True
    te = [v.lower() for k, v in headers if k == "transfer-encoding"]
    if te and "chunked" in te[-1]:
        parts, wire = [], 0
        while True:
            line = rf.readline(1024)
            if not line:
                raise ConnectionError("connection closed in a chunk size")
            wire += len(line)
            n = int(line.split(b";", 1)[0].strip(), 16)
            if n == 0:
                while True:  # trailers
                    t = rf.readline(65537)
                    wire += len(t)
                    if t in (b"\r\n", b"\n", b""):
                        break
                return b"".join(parts), wire, True
            data = rf.read(n)
            if len(data) != n:
                raise ConnectionError("connection closed in a chunk")
            crlf = rf.read(2)
            if crlf != b"\r\n":
                raise ValueError(f"chunk not followed by CRLF: {crlf!r}")
            parts.append(data)
            wire += n + 2
    cls = [v for k, v in headers if k == "content-length"]
    if cls:
        if len(cls) > 1:
            raise ValueError(f"several Content-Length: {cls}")
        n = int(cls[0])
        data = rf.read(n)
        if len(data) != n:
            raise ConnectionError(f"body ended after {len(data)} of {n} bytes")
        return data, n, True
    data = rf.read()
    return data, len(data), False


class Client:
    def __init__(self, port: int, timeout: float | None = None):
        self.port = port
        self.timeout = timeout if timeout is not None else CLIENT_TIMEOUT
        self.sock: socket.socket | None = None
        self.rf = None
        self.last = None  # the last request, for the failure report

    def connect(self) -> None:
        self.close()
        s = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = s
        self.rf = s.makefile("rb", buffering=65536)

    def close(self, reset: bool = False) -> None:
        if self.sock is not None:
            if reset:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            try:
                self.rf.close()
            finally:
                self.sock.close()
        self.sock = self.rf = None

    def request(self, method: str, path: str, headers=(), body: bytes | None = None,
                chunks: list[bytes] | None = None) -> Resp:
        """One request on the keep-alive connection (a new one if the server closed it)."""
        self.last = (method, path, list(headers),
                     f"body {len(body)} B" if body is not None else
                     f"chunked {sum(map(len, chunks))} B in {len(chunks)}" if chunks is not None
                     else "")
        for attempt in (0, 1):
            fresh = self.sock is None
            if fresh:
                self.connect()
            if chunks is not None:
                head = build_request(method, path, list(headers), chunked=True)
                payload = head + b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks if c) \
                    + b"0\r\n\r\n"
            else:
                head = build_request(method, path, list(headers),
                                     None if body is None else len(body))
                payload = head + (body or b"")
            try:
                self.sock.sendall(payload)
                status, hdrs, wire, keep = read_head(self.rf)
            except (Closed, BrokenPipeError, ConnectionResetError):
                self.close()
                if fresh or attempt:
                    raise
                continue  # an idle keep-alive connection the server had closed: once more
            data, bwire, reusable = read_body(self.rf, method, status, hdrs)
            if not (keep and reusable):
                self.close()
            return Resp(status, hdrs, data, wire + bwire)
        raise AssertionError("unreachable")


def dechunk_prefix(data: bytes) -> bytes:
    """The payload of a chunked prefix (the last chunk may be cut)."""
    out = bytearray()
    pos = 0
    while pos < len(data):
        end = data.find(b"\r\n", pos)
        if end < 0:
            break
        n = int(data[pos:end].split(b";")[0], 16)
        if n == 0:
            break
        start = end + 2
        out += data[start:start + n]
        pos = start + n + 2
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# Checks

class CheckFailed(AssertionError):
    pass


def ce_of(r: Resp) -> str | None:
    ces = r.all("content-encoding")
    if len(ces) > 1:
        raise CheckFailed(f"several Content-Encoding lines {ces}")
    return ces[0].strip().lower() if ces else None


def vary_tokens(r: Resp) -> list[str]:
    return [t.strip().lower() for v in r.all("vary") for t in v.split(",") if t.strip()]


def check_vary(r: Resp, want: bool) -> None:
    toks = vary_tokens(r)
    n = toks.count("accept-encoding")
    if want and n != 1:
        raise CheckFailed(f"Vary: Accept-Encoding expected once, got {r.all('vary')}")
    if not want and n:
        raise CheckFailed(f"no Vary: Accept-Encoding expected, got {r.all('vary')}")


def check_body(r: Resp, coding: str | None, expected: bytes, *, ce_any: bool = False,
               vary: bool | None = True, status: int = 200) -> int:
    """Status, Content-Encoding, Content-Length, Vary and the decoded body. `ce_any`: any
    coding we implement (or identity) is fine. Returns the decoded length."""
    if STOCK:
        ce_any, vary = True, None
    if r.status != status:
        raise CheckFailed(f"status {r.status}, expected {status}")
    got = ce_of(r)
    if ce_any:
        if got is not None and got not in ACCEPTED_TOKENS:
            raise CheckFailed(f"Content-Encoding {got!r}")
    elif got != coding:
        raise CheckFailed(f"Content-Encoding {got!r}, expected {coding!r}")
    cl = r.all("content-length")
    if len(cl) > 1 or (cl and int(cl[0]) != len(r.body)):
        raise CheckFailed(f"Content-Length {cl} for {len(r.body)} bytes")
    if vary is not None:
        check_vary(r, vary)
    try:
        plain = decode(r.body, got)
    except DecodeError as e:
        raise CheckFailed(f"body does not decode: {e}")
    if plain != expected:
        raise CheckFailed(f"decoded body differs: {len(plain)} bytes, expected {len(expected)}; "
                          f"first difference at {first_diff(plain, expected)}")
    return len(plain)


def first_diff(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for i in range(0, n, 4096):
        if a[i:i + 4096] != b[i:i + 4096]:
            for j in range(i, min(i + 4096, n)):
                if a[j] != b[j]:
                    return j
    return n
