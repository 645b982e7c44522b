# SPDX-License-Identifier: Apache-2.0
"""Sidecars the module reads whole are kept by the child (MultiCompressCacheLocal's tier), under
the version of the sidecar file its lookup found (device, inode, size, mtime, ctime): a later hit
opens nothing, yet runs the same lookup at the sidecar's own URL, so a rule added since, a file
rewritten (even to the same size and mtime) or made unreadable is never answered from memory.
With `MultiCompressCacheLocal Off` nothing is kept. The module's trace line for each hit says how
its body was sent (`read whole`, `kept by the child`).
"""
from __future__ import annotations

import gzip
import os
import time

import pytest

from mc_decode import decode
from mc_server import HttpdServer
from mc_stores import SOURCE_LOG_CONF, copy_static, get, write_sidecar

ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")
SITE = SOURCE_LOG_CONF + """
LogLevel notice multicompress:trace1
<Directory "@HTDOCS@/kept">
    AllowOverride AuthConfig
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
"""


def start(make_server, name: str, extra: str = "") -> HttpdServer:
    return make_server(name, site_template=None, extra_conf=SITE + extra, mpm_conf=ONE_CHILD,
                       htdocs_copies=[("kept", "static")]).start()


def small_page(srv: HttpdServer):
    """A private copy of small.html with a gzip sidecar well under one bucket buffer."""
    url, path = copy_static(srv, "small.html", "/kept", "kept")
    side = write_sidecar(path, "gzip", newer_by=10)
    assert side.stat().st_size < 8000
    return url, path, side


def sent(srv: HttpdServer, url: str, side, how: str) -> bytes:
    """One request answered with the sidecar's bytes as they are on disk now, sent `how`."""
    mark = srv.log_size()
    got = get(srv, url, "gzip")
    assert got.resp.status == 200 and got.source == "sidecar", (got.source, got.resp)
    assert got.resp.body == side.read_bytes()
    time.sleep(0.2)
    log = srv.read_log(mark)
    assert f"sending sidecar {side} ({how})" in log, log[-2000:]
    return got.resp.body


def live_only(srv: HttpdServer, url: str, path, kept: bytes) -> None:
    """A few requests compressed live from `path`, never answered with the `kept` bytes."""
    for _ in range(3):
        got = get(srv, url, "gzip")
        assert got.resp.status == 200 and got.source == "live", (got.source, got.resp)
        assert got.resp.body != kept and decode(got.resp.body, "gzip") == path.read_bytes()


def test_mc_613_01_kept_after_the_first_read(make_server):
    srv = start(make_server, "kept")
    url, path, side = small_page(srv)
    body = sent(srv, url, side, "read whole")
    for _ in range(5):
        assert sent(srv, url, side, "kept by the child") == body
    assert decode(body, "gzip") == path.read_bytes()
    # a HEAD from memory too: the same head, no body
    head = get(srv, url, "gzip", method="HEAD")
    assert head.resp.status == 200 and head.resp.body == b""
    assert head.resp.header("Content-Length") == str(len(body))


def test_mc_613_02_rewritten_to_the_same_size_and_mtime(make_server):
    """Another gzip stream of the same size (its header's MTIME field differs), written over the
    sidecar with its old mtime put back: the ctime changed, so the new bytes are read and sent."""
    srv = start(make_server, "kept-rewrite")
    url, path, side = small_page(srv)
    sent(srv, url, side, "read whole")
    old = sent(srv, url, side, "kept by the child")
    st = side.stat()
    new = gzip.compress(path.read_bytes(), 9, mtime=12345)
    assert len(new) == len(old) and new != old
    time.sleep(0.02)
    side.write_bytes(new)
    os.utime(side, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert side.stat().st_mtime_ns == st.st_mtime_ns and side.stat().st_size == st.st_size
    assert sent(srv, url, side, "read whole") == new
    assert sent(srv, url, side, "kept by the child") == new
    assert decode(new, "gzip") == path.read_bytes()


def test_mc_613_03_rule_added_after_it_was_kept(make_server):
    """An .htaccess that denies the sidecar's URL, written after the child kept the sidecar: the
    next responses are compressed live; without it the kept bytes are sent again."""
    srv = start(make_server, "kept-rule")
    url, path, side = small_page(srv)
    sent(srv, url, side, "read whole")
    kept = sent(srv, url, side, "kept by the child")
    rules = srv.htdocs / "kept" / ".htaccess"
    rules.write_text(f'<Files "{side.name}">\n    Require all denied\n</Files>\n')
    os.chmod(rules, 0o644)
    try:
        live_only(srv, url, path, kept)
    finally:
        rules.unlink()
    assert sent(srv, url, side, "kept by the child") == kept


@pytest.mark.log_allow(r"MC00030")
def test_mc_613_04_made_unreadable_after_it_was_kept(make_server):
    """chmod 000 (the children run as another user) after the child kept the sidecar: live
    compression, as for a sidecar never read; readable again, it is read and kept anew."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the children run as another user")
    srv = start(make_server, "kept-perm")
    url, path, side = small_page(srv)
    sent(srv, url, side, "read whole")
    kept = sent(srv, url, side, "kept by the child")
    os.chmod(side, 0o000)
    try:
        live_only(srv, url, path, kept)
    finally:
        os.chmod(side, 0o644)
    sent(srv, url, side, "read whole")
    sent(srv, url, side, "kept by the child")


def test_mc_613_05_nothing_kept_with_the_tier_off(make_server):
    srv = start(make_server, "kept-off", "MultiCompressCacheLocal Off\n")
    url, _, side = small_page(srv)
    for _ in range(4):
        sent(srv, url, side, "read whole")
