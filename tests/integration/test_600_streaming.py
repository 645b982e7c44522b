# SPDX-License-Identifier: Apache-2.0
"""Streaming: flushed output reaches the client decodable before the script ends; a 50 MB
streamed body decodes and the server's memory stays bounded, also for slow clients of a large
file."""
import gzip
import hashlib
import socket
import threading
import time

import pytest

from mc_bodies import big_body_blocks
from mc_client import open_stream
from mc_decode import StreamDecoder, ZSTD_MAX_WINDOW, zstd_window
from mc_process import rss_kib
from mc_server import HttpdServer, start_main

CODINGS = [("/cgi-bin/", "gzip"), ("/cgi-bin/", "br"), ("/cgi-bin/", "zstd"),
           ("/cgi-all/", "deflate")]


def stream_first_line(port: int, path: str, coding: str | None):
    """Returns (seconds until line 1 was decoded, seconds until the end, decoded body)."""
    t0 = time.monotonic()
    conn, resp = open_stream(port, path, coding)
    try:
        assert resp.status == 200
        assert resp.getheader("Content-Encoding") == coding
        assert resp.getheader("Content-Length") is None
        dec = StreamDecoder(coding)
        out = b""
        t_first = None
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            out += dec.feed(chunk)
            if t_first is None and b"\n" in out:
                t_first = time.monotonic() - t0
        out += dec.finish()
        return t_first, time.monotonic() - t0, out
    finally:
        conn.close()


@pytest.mark.parametrize("prefix,coding", CODINGS, ids=[c for _, c in CODINGS])
def test_mc_600_01_flushed_line_arrives_decodable(main, prefix, coding):
    """stream.py writes line 1, flushes, sleeps 2 s, writes line 2: the client decodes line 1
    while the script sleeps."""
    t_first, t_end, body = stream_first_line(
        main.port, prefix + "stream.py?sleep=2&lines=2", coding)
    lines = body.split(b"\n")
    assert lines[0].startswith(b"line 1 of 2") and lines[1].startswith(b"line 2 of 2"), body
    assert t_end >= 1.9, f"script ended after {t_end:.2f}s: the test proves nothing"
    assert t_first is not None and t_first < 1.0, \
        f"line 1 decoded only after {t_first}s (script slept 2 s; end at {t_end:.2f}s)"


def test_mc_600_02_streaming_event_stream(main):
    """text/event-stream, three events one second apart, each decodable on arrival."""
    t0 = time.monotonic()
    conn, resp = open_stream(main.port,
                             "/cgi-bin/stream.py?sleep=1&lines=3&ct=text/event-stream", "br")
    try:
        assert resp.getheader("Content-Encoding") == "br"
        dec = StreamDecoder("br")
        out, seen = b"", []
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            out += dec.feed(chunk)
            while len(seen) < out.count(b"\n"):
                seen.append(time.monotonic() - t0)
        dec.finish()
    finally:
        conn.close()
    assert len(seen) == 3
    # each line arrives well before the next one is written
    assert seen[0] < 0.8 and 0.8 < seen[1] < 1.8 and 1.8 < seen[2], seen


# ---- 50 MB, bounded memory

BIG = 50 * 1024 * 1024


@pytest.fixture(scope="module")
def single_child(env):
    """Event MPM with exactly one child process, so its RSS is the server's."""
    srv = start_main(env, "event", "rss", trace=False,
                     mpm_conf="StartServers 1\nServerLimit 1\nThreadsPerChild 8\n"
                              "MaxRequestWorkers 8\nMinSpareThreads 1\nMaxSpareThreads 16\n")
    yield srv
    srv.stop()


def children_rss(srv: HttpdServer) -> int:
    total = 0
    for pid in srv.child_pids():
        try:
            total += rss_kib(pid)
        except OSError:
            pass
    return total


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_600_03_big_stream_bounded_memory(single_child, coding):
    srv = single_child
    path = f"/cgi-bin/big.py?size={BIG}&seed=7"
    # warm up: one smaller request of the same kind
    conn, resp = open_stream(srv.port, f"/cgi-bin/big.py?size={4 << 20}&seed=7", coding)
    while resp.read1(1 << 16):
        pass
    conn.close()
    base = children_rss(srv)
    assert base > 0

    peak = [base]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], children_rss(srv))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    want = hashlib.sha256()
    for block in big_body_blocks(BIG, seed=7):
        want.update(block)
    try:
        conn, resp = open_stream(srv.port, path, coding)
        assert resp.status == 200
        assert resp.getheader("Content-Encoding") == coding
        dec = StreamDecoder(coding)
        got = hashlib.sha256()
        n_in = n_out = 0
        first = True
        while True:
            chunk = resp.read1(1 << 16)
            if not chunk:
                break
            if first and coding == "zstd":
                assert zstd_window(chunk) <= ZSTD_MAX_WINDOW
                first = False
            n_in += len(chunk)
            out = dec.feed(chunk)
            n_out += len(out)
            got.update(out)
        tail = dec.finish()
        got.update(tail)
        n_out += len(tail)
        conn.close()
    finally:
        stop.set()
        sampler.join()
    peak[0] = max(peak[0], children_rss(srv))
    assert n_out == BIG
    assert got.hexdigest() == want.hexdigest()
    assert n_in < BIG  # it was compressed
    growth_mib = (peak[0] - base) / 1024
    assert growth_mib < 32, f"RSS grew by {growth_mib:.1f} MiB ({base} -> {peak[0]} KiB)"


# ---- slow clients of a large static file

def test_mc_600_04_slow_clients_of_a_large_file_hold_no_copy_of_it(env, make_server):
    """Sixteen clients that read slowly, each compressing a 2 MB file in one call: a connection
    keeps what is still to be sent (the compressed body), not the file's bytes (a read of a file
    this large is left to EnableMMAP: read into heap buckets, the bytes stayed in each
    connection's allocator while its client was slow: +2 MB per client)."""
    srv = make_server("rss-static", site_template=None, trace=False,
                      extra_conf="AddOutputFilterByType MULTICOMPRESS text/plain\n"
                                 "SendBufferSize 65536\n",
                      mpm_conf="StartServers 1\nServerLimit 1\nThreadsPerChild 32\n"
                               "MaxRequestWorkers 32\nMinSpareThreads 1\nMaxSpareThreads 64\n")
    srv.start()
    lines = (f"line {i}: a sentence that every page of a manual repeats, with {i % 97} in it\n"
             for i in range(40000))
    body = "".join(lines).encode()[:2_000_000]
    (srv.htdocs / "big.txt").write_bytes(body)
    (srv.htdocs / "big.txt").chmod(0o644)
    request = b"GET /big.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n"
    # warm up: the child's encoders and pools as a first request leaves them
    conn, resp = open_stream(srv.port, "/big.txt", "gzip")
    assert resp.getheader("Content-Encoding") == "gzip"
    assert gzip.decompress(resp.read()) == body
    conn.close()
    # RSS is taken after the child's idle trim (a second without compression work gives back
    # the blocks it keeps for the next body: a bounded per-child cache, not any connection's).
    time.sleep(3)
    base = children_rss(srv)
    socks = []
    try:
        for _ in range(16):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(30)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(request)
            socks.append(s)
        for s in socks:
            head = s.recv(1024)  # the compressed body follows: every stream has started
            assert head.startswith(b"HTTP/1.1 200") and b"Content-Encoding: gzip" in head, head
        time.sleep(3)  # every body is compressed (a whole body is, before its headers); trimmed
        grown_kib = children_rss(srv) - base
    finally:
        for s in socks:
            s.close()
    assert grown_kib < 16 * 1024, f"16 slow clients: +{grown_kib} KiB (the 2 MB file per client?)"
