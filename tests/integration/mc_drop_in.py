# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the drop-in tests (test_3[1-9]x_*.py: the module as a replacement for
mod_deflate and mod_brotli). Builds on the harness (mc_server.py, mc_client.py, mc_decode.py)
and adds:

- `mod_mctest_dropin.so` (tests/integration/mod_mctest/): handlers `mctest-echo` (request bodies)
  and `mctest-shapes` (bucket shapes, 204/304/206, pre-encoded bodies). Found at
  `<dir of config.ini>/mod_mctest/mod_mctest_dropin.so`, or at `$MC_MCTEST_DROPIN_SO`.
- `DropinServer`: an HttpdServer whose site is given as text, that loads mod_mctest_dropin and
  writes extra documents into its htdocs before it starts.
- `post()`: a request with a body, sent from a thread while the response is read (the server
  may answer 413 before it has read everything).
- Decompression bombs generated without holding the plain bytes (`bomb()`).
"""
from __future__ import annotations

import http.client
import os
import socket
import struct
import threading
import time
import zlib
from pathlib import Path
from typing import Iterable, Sequence

import brotli
import pytest
import zstandard

from mc_bodies import mctest_body, static_file
from mc_client import Response
from mc_env import McEnv
from mc_process import rss_kib
from mc_server import CRASH_PATTERNS, HttpdServer

CODINGS = ("gzip", "br", "zstd")


# ---------------------------------------------------------------------------------------------
# The test module

def dropin_so(env: McEnv) -> Path:
    """mod_mctest_dropin.so: $MC_MCTEST_DROPIN_SO, else next to the generated config.ini."""
    override = os.environ.get("MC_MCTEST_DROPIN_SO")
    if override:
        return Path(override)
    return env.ini_path.parent / "mod_mctest" / "mod_mctest_dropin.so"


class DropinServer(HttpdServer):
    """A server for one test module: `site` (httpd.conf text; @HTDOCS@, @GEN@, @PORT@ and
    @TEXT_TYPES@ are filled in), mod_mctest_dropin loaded, `files` ({relative path: bytes or
    str}) written into htdocs before the start."""

    def __init__(self, env: McEnv, name: str, site: str, *,
                 files: dict[str, bytes | str] | None = None, **kw):
        so = dropin_so(env)
        if not so.exists():
            pytest.fail(f"mod_mctest_dropin not built: {so} (config {env.ini_path}); build the "
                        f"project or set MC_MCTEST_DROPIN_SO", pytrace=False)
        conf = f'LoadModule mctest_dropin_module "{so}"\n{site}'
        super().__init__(env, name, site_template=None, extra_conf=conf, **kw)
        self.files = dict(files or {})

    def render(self) -> None:
        super().render()
        for rel, data in self.files.items():
            self.put_file(rel, data)

    def put_file(self, rel: str, data: bytes | str) -> Path:
        p = self.htdocs / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        for d in [p.parent, *p.parent.parents]:
            if d == self.htdocs or self.htdocs not in d.parents:
                break
            os.chmod(d, 0o755)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        os.chmod(p, 0o755 if rel.endswith((".py", ".cgi")) else 0o644)
        return p


def start_dropin(env: McEnv, name: str, site: str, *, files=None,
                 modules: Sequence[str] = (), **kw) -> DropinServer:
    return DropinServer(env, name, site, files=files, extra_modules=modules, **kw).start()


def stop_checked(srv: HttpdServer) -> None:
    """Stops `srv` and fails on crash lines it wrote that no per-test check has seen."""
    srv.stop()
    lines = srv.log_lines(getattr(srv, "checked_upto", 0))
    crashes = [l for l in lines if any(p.search(l) for p in CRASH_PATTERNS)]
    assert not crashes, crashes


def log_since(srv: HttpdServer, mark: int) -> str:
    return srv.read_log(mark)


def wait_for_log(srv: HttpdServer, mark: int, needle: str, timeout: float = 5.0) -> str:
    """The error_log text after `mark` once it contains `needle` (or when `timeout` passed)."""
    deadline = time.monotonic() + timeout
    text = srv.read_log(mark)
    while needle not in text and time.monotonic() < deadline:
        time.sleep(0.05)
        text = srv.read_log(mark)
    return text


def access_lines(srv: HttpdServer, log: str = "access_log") -> list[str]:
    try:
        return (srv.gen / "logs" / log).read_text().splitlines()
    except OSError:
        return []


def wait_access_line(srv: HttpdServer, log: str, needle: str, timeout: float = 5.0) -> str:
    """The last line of logs/LOG that contains `needle` (the access log is written after the
    response went out, so it may lag the client by a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [l for l in access_lines(srv, log) if needle in l]
        if found:
            return found[-1]
        if time.monotonic() > deadline:
            raise AssertionError(f"no line with {needle!r} in {log}: {access_lines(srv, log)[-5:]}")
        time.sleep(0.05)


def children_rss_kib(srv: HttpdServer) -> int:
    total = 0
    for pid in srv.child_pids():
        try:
            total += rss_kib(pid)
        except OSError:
            pass
    return total


# ---------------------------------------------------------------------------------------------
# Requests with bodies

def post(port: int, path: str, body: bytes | Iterable[bytes], *,
         headers: Sequence[tuple[str, str]] = (), chunked: bool = False,
         content_length: int | None = None, accept_encoding: str | None = None,
         method: str = "POST", timeout: float = 60) -> Response:
    """Sends `body` (bytes, or an iterable of chunks) from a thread while reading the response,
    so an early answer (413, 400) is seen even if the server stops reading. Without `chunked`,
    Content-Length is len(body) or `content_length`."""
    chunks: Iterable[bytes] = [body] if isinstance(body, (bytes, bytearray)) else body
    if not chunked and content_length is None:
        if not isinstance(body, (bytes, bytearray)):
            raise ValueError("an iterable body needs chunked=True or content_length")
        content_length = len(body)
    head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    if accept_encoding is not None:
        head.append(f"Accept-Encoding: {accept_encoding}")
    head.extend(f"{k}: {v}" for k, v in headers)
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {content_length}")
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    send_error: list[BaseException] = []

    def sender() -> None:
        try:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
            for chunk in chunks:
                if not chunk:
                    continue
                if chunked:
                    sock.sendall(b"%x\r\n" % len(chunk) + bytes(chunk) + b"\r\n")
                else:
                    sock.sendall(chunk)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except OSError as e:  # the server answered and closed early
            send_error.append(e)

    t = threading.Thread(target=sender, daemon=True)
    t.start()
    try:
        resp = http.client.HTTPResponse(sock, method=method)
        resp.begin()
        data = resp.read()
        out = Response(resp.status, resp.reason, list(resp.getheaders()), data)
    finally:
        t.join(timeout)
        sock.close()
    return out


# ---------------------------------------------------------------------------------------------
# Encoders (request bodies, pre-encoded documents) and bombs

# Request bodies use windows within MultiCompressInflateWindow's default (1 MiB), as a client
# that sends compressed bodies should (brotli -w 20; zstd: a window of 2^20 at most).
REQUEST_WINDOW_LOG = 20


def zstd_request_compressor(level: int = 3, **kw) -> zstandard.ZstdCompressor:
    params = zstandard.ZstdCompressionParameters.from_level(
        level, window_log=REQUEST_WINDOW_LOG, **kw)
    return zstandard.ZstdCompressor(compression_params=params)


def encode(data: bytes, coding: str, level: int | None = None) -> bytes:
    if coding == "gzip":
        c = zlib.compressobj(6 if level is None else level, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if coding == "br":
        return brotli.compress(data, quality=5 if level is None else level,
                               lgwin=REQUEST_WINDOW_LOG)
    if coding == "zstd":
        return zstd_request_compressor(3 if level is None else level,
                                       write_content_size=True).compress(data)
    raise ValueError(coding)


_MIB = 1 << 20
_bombs: dict[tuple[str, int], bytes] = {}


def _gzip_zeros(mib: int) -> bytes:
    """A gzip member of `mib` MiB of zeros, ~1 KiB per MiB. One MiB is compressed (zlib, raw
    deflate, ended by Z_FULL_FLUSH so the block needs nothing before it) and repeated; the CRC is
    computed over 1 MiB chunks. Nothing of the plain size is held in memory."""
    zeros = bytes(_MIB)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    final = b"\x03\x00"  # an empty final fixed-Huffman block
    return header + block * mib + final + struct.pack("<II", crc, (mib * _MIB) & 0xFFFFFFFF)


def bomb(coding: str, mib: int = 1024) -> bytes:
    """`mib` MiB of zeros in `coding`, made from 1 MiB chunks (cached for the session):
    gzip ~1 MB, br ~190 KB, zstd ~32 KB for 1 GiB."""
    key = (coding, mib)
    if key in _bombs:
        return _bombs[key]
    zeros = bytes(_MIB)
    if coding == "gzip":
        out = _gzip_zeros(mib)
    elif coding == "br":
        c = brotli.Compressor(quality=1, lgwin=REQUEST_WINDOW_LOG)
        parts = [c.process(zeros) for _ in range(mib)]
        parts.append(c.finish())
        out = b"".join(parts)
    elif coding == "zstd":
        c = zstd_request_compressor(3).compressobj()
        parts = [c.compress(zeros) for _ in range(mib)]
        parts.append(c.flush())
        out = b"".join(parts)
    else:
        raise ValueError(coding)
    _bombs[key] = out
    return out


def assert_no_crash(srv: HttpdServer, mark: int) -> None:
    lines = srv.log_lines(mark)
    crashes = [l for l in lines if any(p.search(l) for p in CRASH_PATTERNS)]
    assert not crashes, crashes


__all__ = ["CODINGS", "DropinServer", "access_lines", "assert_no_crash", "bomb",
           "children_rss_kib", "dropin_so", "encode", "log_since", "mctest_body", "post",
           "start_dropin", "static_file", "stop_checked", "wait_access_line", "wait_for_log"]
