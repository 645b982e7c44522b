# SPDX-License-Identifier: Apache-2.0
"""A sidecar whose mtime was copied from its file in whole seconds.

`gzip -k` and `zstd -k` give FILE.gz / FILE.zst their file's mtime to the nanosecond; Debian 12's
`brotli -k` (1.0.9) copies it in whole seconds, so its FILE.br is older than FILE by the
fraction of a second and, by the freshness rule, stale: compressed live. The module says so once
per version of the sidecar (MC00332, naming `touch -r`), and `touch -r FILE FILE.br` makes it
fresh. A sidecar older by whole seconds is stale without a word. ("Once": once per child.)
"""
from __future__ import annotations

import os
import time

import pytest

from mc_decode import decode
from mc_stores import (SOURCE_LOG_CONF, compress, copy_static, get, log_lines_matching,
                       pid_of_log_line, write_file)

SITE = SOURCE_LOG_CONF + """
Alias /s "@HTDOCS@/side"
<Directory "@HTDOCS@/side">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
"""
SECOND_NS = 1_000_000_000


def set_mtime_ns(path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))


@pytest.mark.log_allow(r"MC00332")
def test_mc_611_01_whole_second_sidecar(make_server):
    srv = make_server("mtime", site_template=None, extra_conf=SITE,
                      htdocs_copies=[("side", "static")]).start()
    url, path = copy_static(srv, "page.html", "/s", "side")
    original = path.read_bytes()
    whole = (int(time.time()) - 1000) * SECOND_NS
    set_mtime_ns(path, whole + 400_000_000)  # FILE at .4 s
    side = write_file(path.with_name(path.name + ".br"), compress(original, "br"))
    sidecar = side.read_bytes()
    set_mtime_ns(side, whole)  # as brotli -k leaves it

    for _ in range(6):  # live, and said once by each child that saw it
        got = get(srv, url, "br")
        assert got.resp.status == 200 and decode(got.resp.body, "br") == original
        assert got.note == "live", got
    said = log_lines_matching(srv, r"MC00332")
    pids = [pid_of_log_line(line) for line in said]
    assert said and len(pids) == len(set(pids)), said
    assert side.name in said[0] and "touch -r" in said[0], said[0]

    set_mtime_ns(side, whole + 400_000_000)  # touch -r FILE FILE.br
    got = get(srv, url, "br")
    assert got.note == "sidecar" and got.resp.body == sidecar, got

    # older by a whole second: stale, and nothing to say about it
    set_mtime_ns(side, whole - SECOND_NS)
    got = get(srv, url, "br")
    assert got.note == "live", got
    assert len(log_lines_matching(srv, r"MC00332")) == len(said)
