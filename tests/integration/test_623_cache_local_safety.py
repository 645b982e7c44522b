# SPDX-License-Identifier: Apache-2.0
"""The tier of verified cache entries (MultiCompressCacheLocal) keeps every rule of a store hit:
an entry the child holds is never sent for another virtual host, nor to a client that may not
read the file (file permissions, an access rule that refuses this client), and the tier shows
in mod_status's counters (`?auto` and the HTML section) as in the Prometheus text. Each test
first proves the entry is in the tier (a `local_hit`), then asks what must not be answered
from it. test_622 has the rest (bound, versions, graceful restart, verification)."""
from __future__ import annotations

import os

import pytest

from mc_client import request
from mc_decode import decode
from mc_stores import copy_static, get
from mc_tier import LOCAL_BYTES, LOCAL_HIT, get_at, local_hits, metrics, strong_hit, tier_server

# Two name-based virtual hosts on the test's port, both serving /t (the main server's Alias and
# <Directory> apply to both): the same file at the same URL.
VHOSTS = """
<VirtualHost 127.0.0.1:@PORT@>
    ServerName a.test
</VirtualHost>
<VirtualHost 127.0.0.1:@PORT@>
    ServerName b.test
</VirtualHost>
"""

# A client that sends `X-Client: blocked` may not read /t/ (its Require replaces the
# <Directory>'s for that location).
ACCESS_RULE = """
<Location "/t/">
    Require expr "%{HTTP:X-Client} != 'blocked'"
</Location>
"""

STATUS = """
ExtendedStatus On
<Location /server-status>
    SetHandler server-status
</Location>
"""


def in_tier(srv, url: str, original: bytes, host: str | None = None) -> float:
    """Makes `url`'s br entry the tier's (a local hit); returns the local hits counted so far."""
    strong_hit(srv, url, original, host=host)
    before = local_hits(srv)
    got = get_at(srv, url, "br", host)
    assert got.note == "cache" and decode(got.resp.body, "br") == original, got
    assert local_hits(srv) == before + 1, "the entry is not in the tier"
    return before + 1


def test_mc_623_01_never_for_another_virtual_host(make_server):
    """a.test's entry is in the tier; b.test serves the same file at the same URL: its first
    request is a miss (compressed live), not a.test's entry; then it has its own."""
    srv = tier_server(make_server, "tier-vhosts", extra_conf=VHOSTS)
    url, path = copy_static(srv, "page.html", "/t", "tier")
    original = path.read_bytes()
    hits = in_tier(srv, url, original, host="a.test")
    got = get_at(srv, url, "br", "b.test")
    assert got.resp.status == 200 and decode(got.resp.body, "br") == original, got
    assert got.note == "live", f"b.test was answered from a.test's entry: {got}"
    assert local_hits(srv) == hits
    hits = in_tier(srv, url, original, host="b.test")
    # both are held now, each under its own key
    got = get_at(srv, url, "br", "a.test")
    assert got.note == "cache" and local_hits(srv) == hits + 1, got


def test_mc_623_02_never_for_a_client_that_may_not_read_the_file(make_server, log_allow):
    """With the entry in the tier: a client the access rule refuses gets httpd's 403; after
    chmod 000 (the children run as another user) everyone gets httpd's 403, as the default
    handler answers; neither is a tier hit. Readable again, the same version is a tier hit."""
    if os.geteuid() != 0:
        pytest.skip("needs root: a file the children (another user) may not read")
    log_allow.extend([r"AH00132", r"AH01630"])  # permission denied; client denied
    srv = tier_server(make_server, "tier-perm", extra_conf=ACCESS_RULE)
    url, path = copy_static(srv, "style.css", "/t", "tier")
    original = path.read_bytes()
    hits = in_tier(srv, url, original)
    refused = get(srv, url, "br", headers=[("X-Client", "blocked")])
    assert refused.resp.status == 403 and refused.note != "cache", refused
    assert local_hits(srv) == hits
    os.chmod(path, 0o000)
    try:
        assert request(srv.port, url).status == 403  # without Accept-Encoding: httpd's answer
        got = get(srv, url, "br")
        assert got.resp.status == 403 and got.note != "cache", got
        assert local_hits(srv) == hits, "an unreadable file was answered from the tier"
    finally:
        os.chmod(path, 0o644)
    got = get(srv, url, "br")
    assert got.resp.status == 200 and got.note == "cache", got
    assert decode(got.resp.body, "br") == original and local_hits(srv) == hits + 1


def test_mc_623_03_status_counters_show_the_tier(make_server):
    """/server-status?auto has the tier's bytes (the gauge the Prometheus text has) and its hits;
    the HTML section has the bytes."""
    srv = tier_server(make_server, "tier-status", extra_conf=STATUS, extra_modules=["status"])
    url, path = copy_static(srv, "app.js", "/t", "tier")
    hits = in_tier(srv, url, path.read_bytes())
    m = metrics(srv)
    held = int(m[LOCAL_BYTES])
    assert held > 0 and m[LOCAL_HIT] == hits, m
    auto = request(srv.port, "/server-status?auto", None)
    assert auto.status == 200
    lines = auto.body.decode().splitlines()
    assert f"MultiCompressCacheLocalBytes: {held}" in lines, lines
    assert f"MultiCompressCacheEventsLocalHit: {int(hits)}" in lines, lines
    html = request(srv.port, "/server-status", None).body.decode("latin-1")
    assert f"Verified cache entries held by the children: {held} bytes" in html
