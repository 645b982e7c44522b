# SPDX-License-Identifier: Apache-2.0
"""Decoders for the integration tests: gzip, deflate, br and zstd with the Python libraries
(zlib, python3-brotli, python3-zstandard), whole or incremental, each checking that the stream
is complete and has nothing after its end; plus a small-window inflate and the zstd window."""
from __future__ import annotations

import zlib

import brotli
import zstandard

ZSTD_MAX_WINDOW = 8 * 1024 * 1024  # RFC 9659: what browsers accept


class DecodeError(AssertionError):
    pass


class StreamDecoder:
    """Incremental decoder for one content coding; finish() checks the stream is complete and
    has nothing after its end (a second gzip member or zstd frame would mean double work)."""

    def __init__(self, coding: str | None):
        self.coding = (coding or "identity").strip().lower()
        c = self.coding
        if c in ("gzip", "x-gzip"):
            self._d = zlib.decompressobj(16 + 15)  # gzip framing only
        elif c == "deflate":
            self._d = zlib.decompressobj(15)  # zlib format (RFC 9110 §8.4.1.2)
        elif c == "br":
            self._d = brotli.Decompressor()
        elif c == "zstd":
            self._d = zstandard.ZstdDecompressor(
                max_window_size=ZSTD_MAX_WINDOW).decompressobj()
        elif c == "identity":
            self._d = None
        else:
            raise DecodeError(f"unexpected Content-Encoding {coding!r}")

    def feed(self, data: bytes) -> bytes:
        if not data:
            return b""
        try:
            if self._d is None:
                return data
            if self.coding == "br":
                return self._d.process(data)
            return self._d.decompress(data)
        except (zlib.error, brotli.error, zstandard.ZstdError) as e:
            raise DecodeError(f"{self.coding}: {e}") from e

    def finish(self) -> bytes:
        c = self.coding
        if c == "identity":
            return b""
        if c == "br":
            if not self._d.is_finished():
                raise DecodeError("br: stream not finished")
            return b""
        if c == "zstd":
            if not self._d.eof:
                raise DecodeError("zstd: frame not finished")
            if self._d.unused_data:
                raise DecodeError(f"zstd: {len(self._d.unused_data)} bytes after the frame")
            return b""
        out = self._d.flush()
        if not self._d.eof:
            raise DecodeError(f"{c}: stream not finished")
        if self._d.unused_data:
            raise DecodeError(f"{c}: {len(self._d.unused_data)} bytes after the stream")
        return out


def decode(body: bytes, coding: str | None) -> bytes:
    d = StreamDecoder(coding)
    out = d.feed(body)
    return out + d.finish()


def inflate_with_window(body: bytes, wbits: int, gzip: bool) -> bytes:
    """Decodes gzip (or zlib-format deflate) with a 2**wbits window, one output byte per call
    so that zlib's history is only its window: a back-reference farther than the window fails
    ("invalid distance too far back"), as does a zlib header announcing a larger window."""
    d = zlib.decompressobj(wbits + (16 if gzip else 0))
    out = bytearray()
    buf = body
    try:
        while True:
            chunk = d.decompress(buf, 1)
            out += chunk
            buf = d.unconsumed_tail
            if not chunk and not buf:
                break
        out += d.flush()
    except zlib.error as e:
        raise DecodeError(f"{'gzip' if gzip else 'deflate'} with a {1 << wbits}-byte window: {e}")
    if not d.eof or d.unused_data:
        raise DecodeError("stream not finished, or data after it")
    return bytes(out)


def zstd_window(body: bytes) -> int:
    return zstandard.get_frame_parameters(body).window_size
