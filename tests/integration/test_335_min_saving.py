# SPDX-License-Identifier: Apache-2.0
"""MultiCompressMinSaving: bodies that will not shrink go out unchanged.

- A body whose first block saves less than the set percentage (default 5 %) under a quick zstd-1
  probe goes out identity, decided before anything is passed on: a 1 MB random file under
  text/plain, a CGI's random bytes. The counters say why (`reason="incompressible"`), and so
  does the trace line.
- The child remembers it (static files by version: path, device, inode, size, mtime; other
  responses by host, path and type), so the next request is sent without a probe; a new version
  of the file is probed again; another URL of the same type is not affected.
- The 88 KB HTML page still compresses; `MultiCompressMinSaving 90` sends it identity, `Off`
  compresses even random bytes (as before this directive).
The server has one child, so that every request sees the same memory.
"""
from __future__ import annotations

import os
import re
import time

import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_drop_in import start_dropin, stop_checked
from mc_stores import set_mtime

RANDOM = os.urandom(1_000_000)
CGI_RANDOM = r'''#!/usr/bin/python3
import os, sys
sys.stdout.buffer.write(b"Content-Type: text/plain\r\n\r\n")
sys.stdout.buffer.flush()
for _ in range(8):
    sys.stdout.buffer.write(os.urandom(32768))
    sys.stdout.buffer.flush()
'''
CGI_TEXT = r'''#!/usr/bin/python3
import sys
sys.stdout.buffer.write(b"Content-Type: text/plain\r\n\r\n")
sys.stdout.buffer.flush()
for i in range(4000):
    sys.stdout.buffer.write(b"line %06d: the quick brown fox jumps over the lazy dog\n" % i)
'''
# Ticks flushed one by one (a stall after each: the filter flushes), or the same URL's text at once.
CGI_TRICKLE = r'''#!/usr/bin/python3
import os, sys, time
out = sys.stdout.buffer
out.write(b"Content-Type: text/plain\r\n\r\n")
out.flush()
if os.environ.get("QUERY_STRING") == "trickle":
    for i in range(300):
        out.write(b"tick %03d\n" % i)
        out.flush()
        time.sleep(0.003)
else:
    for i in range(400):
        out.write(b"line %06d: the quick brown fox jumps over the lazy dog\n" % i)
'''

SITE = r"""
<Location /metrics>
    SetHandler multicompress-metrics
</Location>
Alias /ms "@HTDOCS@/ms"
<Directory "@HTDOCS@/ms">
    AddOutputFilterByType MULTICOMPRESS text/html text/plain
</Directory>
Alias /ms-off "@HTDOCS@/ms-off"
<Directory "@HTDOCS@/ms-off">
    AddOutputFilterByType MULTICOMPRESS text/html text/plain
    MultiCompressMinSaving Off
</Directory>
Alias /ms-90 "@HTDOCS@/ms-90"
<Directory "@HTDOCS@/ms-90">
    AddOutputFilterByType MULTICOMPRESS text/html text/plain
    MultiCompressMinSaving 90%
</Directory>
ScriptAlias /cgi/ "@HTDOCS@/cgi335/"
<Directory "@HTDOCS@/cgi335">
    Options +ExecCGI
    AddOutputFilterByType MULTICOMPRESS text/plain
</Directory>
"""

ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")


@pytest.fixture(scope="module")
def srv(env):
    files = {"cgi335/random.py": CGI_RANDOM, "cgi335/text.py": CGI_TEXT,
             "cgi335/trickle.py": CGI_TRICKLE}
    for d in ("ms", "ms-off", "ms-90"):
        files[f"{d}/random.txt"] = RANDOM
        files[f"{d}/page.html"] = static_file(env, "page.html")
    s = start_dropin(env, "t335", SITE, files=files, mpm_conf=ONE_CHILD)
    for d in ("ms", "ms-off", "ms-90"):
        for name in ("random.txt", "page.html"):
            set_mtime(s.htdocs / d / name, time.time() - 1000)
    yield s
    stop_checked(s)


def metric(srv, name: str) -> int:
    text = request(srv.port, "/metrics").body.decode()
    m = re.search(r"^" + re.escape(name) + r" (\d+)$", text, re.M)
    assert m, f"{name} not in the metrics page"
    return int(m.group(1))


PROBES = "multicompress_saving_probes_total"
INCOMPRESSIBLE = 'multicompress_identity_responses_total{reason="incompressible"}'


def settled(srv, name: str, want: int, timeout: float = 5.0) -> int:
    """The counter once it reached `want` (requests are counted when they are logged)."""
    deadline = time.monotonic() + timeout
    while True:
        got = metric(srv, name)
        if got >= want or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def trace_lines(srv, mark: int, needle: str) -> list[str]:
    return [l for l in srv.log_lines(mark) if needle in l]


def first_request(srv, name: str, body: bytes, coding: str) -> int:
    """Writes /ms/NAME (a version 500 s old), requests it compressed with `coding` and waits for
    its one probe to be counted; returns the probe counter from before."""
    path = srv.htdocs / "ms" / name
    path.write_bytes(body)
    os.chmod(path, 0o644)
    set_mtime(path, time.time() - 500)
    probes0 = metric(srv, PROBES)
    assert_encoded(request(srv.port, f"/ms/{name}", coding), coding, body)
    assert settled(srv, PROBES, probes0 + 1) == probes0 + 1
    return probes0


def test_mc_335_01_random_file_identity_then_remembered(srv):
    probes0 = metric(srv, PROBES)
    why0 = metric(srv, INCOMPRESSIBLE)
    mark = srv.log_size()
    first = request(srv.port, "/ms/random.txt", "gzip, br, zstd")
    assert_encoded(first, None, RANDOM)
    assert first.header("Content-Length") == str(len(RANDOM))
    assert settled(srv, INCOMPRESSIBLE, why0 + 1) == why0 + 1
    assert metric(srv, PROBES) == probes0 + 1
    probed = trace_lines(srv, mark, "less than MultiCompressMinSaving 5%")
    assert probed and "zstd-1 probe" in probed[0], srv.log_lines(mark)[-5:]

    mark = srv.log_size()
    for coding in ("gzip", "br", "zstd"):
        again = request(srv.port, "/ms/random.txt", coding)
        assert_encoded(again, None, RANDOM)
    assert settled(srv, INCOMPRESSIBLE, why0 + 4) == why0 + 4
    assert metric(srv, PROBES) == probes0 + 1, "the next requests were probed again"
    assert len(trace_lines(srv, mark, "(remembered)")) == 3
    head = request(srv.port, "/ms/random.txt", "gzip", method="HEAD")
    assert head.status == 200 and head.content_encoding is None


def test_mc_335_02_off_compresses_random(srv):
    r = request(srv.port, "/ms-off/random.txt", "gzip")
    assert_encoded(r, "gzip", RANDOM)
    assert len(r.body) > len(RANDOM)


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_mc_335_03_page_still_compresses(env, srv, coding):
    page = static_file(env, "page.html")
    r = request(srv.port, "/ms/page.html", coding)
    assert_encoded(r, coding, page)
    assert len(r.body) < len(page) // 3


def test_mc_335_04_higher_minimum(env, srv):
    page = static_file(env, "page.html")
    assert_encoded(request(srv.port, "/ms-90/page.html", "br"), None, page)
    assert_encoded(request(srv.port, "/ms-90/page.html", "gzip"), None, page)


def test_mc_335_05_new_version_probed_again(env, srv):
    path = srv.htdocs / "ms" / "changes.txt"
    path.write_bytes(os.urandom(200_000))
    os.chmod(path, 0o644)
    set_mtime(path, time.time() - 500)
    assert_encoded(request(srv.port, "/ms/changes.txt", "gzip"), None, path.read_bytes())
    text = static_file(env, "page.html") * 2  # same name, a new version: size and mtime differ
    path.write_bytes(text)
    set_mtime(path, time.time() - 100)
    assert_encoded(request(srv.port, "/ms/changes.txt", "gzip"), "gzip", text)


def test_mc_335_06_dynamic_by_url_not_by_type(srv):
    probes0 = metric(srv, PROBES)
    mark = srv.log_size()
    r = request(srv.port, "/cgi/random.py", "gzip")
    assert r.status == 200 and r.content_encoding is None and len(r.body) == 8 * 32768
    assert trace_lines(srv, mark, "zstd-1 probe"), srv.log_lines(mark)[-5:]
    assert settled(srv, PROBES, probes0 + 1) == probes0 + 1
    mark = srv.log_size()
    r = request(srv.port, "/cgi/random.py", "br")
    assert r.status == 200 and r.content_encoding is None
    assert trace_lines(srv, mark, "(remembered)")
    # The same type from another URL is compressed: one response does not stop a whole type.
    t = request(srv.port, "/cgi/text.py", "gzip")
    assert t.status == 200 and t.content_encoding == "gzip"
    assert t.decoded().startswith(b"line 000000: the quick brown fox")


def test_mc_335_07_a_body_that_shrinks_is_probed_once(env, srv):
    """The saving measured when a body is compressed is remembered as long as the probe's (an
    hour for a file version), so a page that compresses well is probed once, not on every
    request. Before, that second memory expired at once (its expiry was computed before its
    lifetime was known) and every compressed response paid the probe (~40-90 µs of zstd-1)."""
    page = static_file(env, "page.html") + b"<!-- probed once -->\n"
    probes0 = first_request(srv, "probed-once.html", page, "br")
    for coding in ("gzip", "zstd", "br", "gzip"):
        assert_encoded(request(srv.port, "/ms/probed-once.html", coding), coding, page)
    # wait as long as a probe of each of them would take to be counted
    assert settled(srv, PROBES, probes0 + 5, timeout=1.5) == probes0 + 1, \
        "a page that shrinks was probed again"


def test_mc_335_08_what_a_body_really_saved_replaces_the_estimate(env, srv):
    """A file whose first block is text and whose rest is random bytes passes the probe and is
    compressed once; what the whole body saved (about 1 %) is remembered, so the next request
    sends it unchanged without a probe."""
    body = static_file(env, "page.html")[:20000] + os.urandom(1_000_000)
    probes0 = first_request(srv, "text-then-random.txt", body, "gzip")
    mark = srv.log_size()
    assert_encoded(request(srv.port, "/ms/text-then-random.txt", "br"), None, body)
    assert trace_lines(srv, mark, "(remembered)"), srv.log_lines(mark)[-5:]
    assert settled(srv, PROBES, probes0 + 2, timeout=1.5) == probes0 + 1


def test_mc_335_09_a_flushed_stream_is_not_a_verdict(srv):
    """What a stream flushed before its end saved is not remembered: its size says as much about
    the flushes (here ticks of 9 bytes, each flushed, so gzip's output is larger than the text)
    as about the body, and remembering it would send the URL's next responses unchanged."""
    trickle = request(srv.port, "/cgi/trickle.py?trickle", "gzip")
    assert trickle.status == 200 and trickle.content_encoding == "gzip"
    assert trickle.decoded() == b"".join(b"tick %03d\n" % i for i in range(300))
    assert len(trickle.body) > len(trickle.decoded()) * 0.95, "the stream was not flushed"
    mark = srv.log_size()
    text = request(srv.port, "/cgi/trickle.py", "gzip")
    assert text.status == 200 and text.content_encoding == "gzip", srv.log_lines(mark)[-5:]
    assert not trace_lines(srv, mark, "(remembered)")
