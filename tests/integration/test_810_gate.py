# SPDX-License-Identifier: Apache-2.0
"""Large whole bodies (>= 256 KiB) are compressed by at most as many threads of a child at once
as there are cores (mc_filter.cc, CompressionGate): clients that stop reading must never hold
that up, and a crowd of large compressions must all complete and decode."""
import random
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from mc_client import assert_encoded, request
from mc_drop_in import start_dropin, stop_checked

# A fixed socket send buffer: with autotuning, loopback buffers grow to megabytes and swallow
# a whole compressed body, and no client would ever stall the server.
SITE = r"""
SendBufferSize 65536
DocumentRoot "@HTDOCS@"
<Directory "@HTDOCS@/big">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS text/plain
    MultiCompressEncodings zstd br gzip
</Directory>
"""
# One child, so every compression shares one gate; more threads than the gate has slots.
MPM_CONF = ("StartServers 1\nServerLimit 1\nThreadsPerChild 24\nMaxRequestWorkers 24\n"
            "MinSpareThreads 1\nMaxSpareThreads 24\n")
SIZE = 1_500_000


def letters(seed: int, n: int) -> bytes:
    """Random lowercase words: compresses to about 60 %, so a compressed response is far larger
    than the socket buffers between a stalled client and the server."""
    rng = random.Random(seed)
    out = bytearray()
    while len(out) < n:
        out += bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) + b" "
    return bytes(out[:n])


DOCS = {f"big/doc{i}.txt": letters(i, SIZE) for i in range(3)}


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t810", SITE, files=DOCS, mpm_conf=MPM_CONF)
    yield s
    stop_checked(s)


def stalled_client(port: int, path: str, coding: str) -> socket.socket:
    """Requests `path` and then reads only the first bytes: the server's thread blocks writing
    the rest of the compressed body."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: {coding}\r\n"
              f"Connection: close\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1024)
        if not chunk:
            break
        head += chunk
    assert head.startswith(b"HTTP/1.1 200") and f"Content-Encoding: {coding}".encode() in head, \
        head[:300]
    return s


def test_mc_810_01_stalled_clients_do_not_hold_the_gate(srv):
    """Six clients (three times the gate's slots on a 2-core machine) stop reading their large
    compressed responses; another client's large response still comes at once."""
    stalled = []
    try:
        # br goes through the streaming encoder (gzip and zstd through the one-shot path)
        for i in range(6):
            stalled.append(stalled_client(srv.port, f"/big/doc{i % 3}.txt",
                                          ("br", "br", "zstd")[i % 3]))
        time.sleep(0.5)  # their threads are now blocked writing
        for coding in ("br", "zstd", "gzip"):
            t0 = time.monotonic()
            r = request(srv.port, "/big/doc1.txt", coding, timeout=30)
            assert_encoded(r, coding, DOCS["big/doc1.txt"])
            assert time.monotonic() - t0 < 15, f"{coding}: {time.monotonic() - t0:.1f} s"
    finally:
        for s in stalled:
            s.close()


def test_mc_810_02_many_large_compressions_at_once(srv):
    """More large compressions at once than the gate has slots: all complete, all decode."""
    jobs = [(f"/big/doc{i % 3}.txt", ("zstd", "br", "gzip")[i % 3]) for i in range(18)]

    def one(job):
        path, coding = job
        r = request(srv.port, path, coding, timeout=60)
        assert_encoded(r, coding, DOCS[path.lstrip("/")])
        return coding

    with ThreadPoolExecutor(max_workers=18) as pool:
        assert sorted(pool.map(one, jobs)) == sorted(c for _, c in jobs)
