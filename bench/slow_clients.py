# SPDX-License-Identifier: Apache-2.0
"""RSS growth under many slow compressed downloads.

Opens N connections (small receive buffers) that each request a large compressible file with one
Accept-Encoding, then reads each a little at a time, so the server keeps N compressions in flight.
Samples the server's RSS (sum over its processes) before and during; bounded by `hold` seconds."""

from __future__ import annotations

import errno
import socket
import time
from typing import Callable


def run(port: int, path: str, encoding: str, rss: Callable[[], tuple[int, int]], n: int = 256,
        hold: float = 5.0, ramp_timeout: float = 30.0, read_bytes: int = 1024,
        tick: float = 0.1) -> dict:
    """Phase 1 (at most ramp_timeout s): wait until every stream has its response head, i.e.
    the server has started all n compressions (a server buffers up to ~64 KB of output before
    its first write, so this takes a few CPU-seconds). Phase 2: hold them `hold` seconds, still
    reading slowly. RSS is sampled every tick in both phases."""
    baseline, baseline_anon = rss()
    socks: list[socket.socket] = []
    heads: list[bytes] = []
    got: list[int] = []
    peak, peak_anon = baseline, baseline_anon
    samples = []
    request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: {encoding}\r\n"
               "Connection: close\r\n\r\n").encode()
    t0 = time.monotonic()
    ramp = 0.0
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            # A small receive window keeps the server from pushing the whole body into the kernel.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(10)
            s.connect(("127.0.0.1", port))
            s.sendall(request)
            s.setblocking(False)
            socks.append(s)
            heads.append(b"")
            got.append(0)
        ramp_end = time.monotonic() + ramp_timeout
        end = None
        while end is None or time.monotonic() < end:
            if end is None and (time.monotonic() > ramp_end
                                or all(b"\r\n\r\n" in h for h in heads)):
                ramp = time.monotonic() - t0
                end = time.monotonic() + hold
            for i, s in enumerate(socks):
                try:
                    data = s.recv(read_bytes)
                except OSError as e:
                    if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                        continue
                    raise
                got[i] += len(data)
                if b"\r\n\r\n" not in heads[i]:
                    heads[i] += data
            cur, cur_anon = rss()
            peak, peak_anon = max(peak, cur), max(peak_anon, cur_anon)
            samples.append((round(time.monotonic() - t0, 2), cur, cur_anon))
            time.sleep(tick)
    finally:
        for s in socks:
            s.close()
    ok = waiting = 0
    bad_heads = []
    for h in heads:
        if b"\r\n\r\n" not in h:
            waiting += 1    # no head before the ramp timeout: the server was still compressing
            continue
        head = h.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
        if head.startswith("http/1.1 200") and f"content-encoding: {encoding}" in head:
            ok += 1
        elif len(bad_heads) < 3:
            bad_heads.append(head[:200])
    return {
        "connections": n,
        "streams_ok": ok,
        "streams_waiting": waiting,
        "bad_heads": bad_heads,
        "hold_s": hold,
        "ramp_s": round(ramp, 2),
        "received_bytes": sum(got),
        "rss_baseline": baseline,
        "rss_peak": peak,
        "rss_growth": peak - baseline,
        "anon_baseline": baseline_anon,
        "anon_peak": peak_anon,
        "anon_growth": peak_anon - baseline_anon,
        "samples": samples,
    }
