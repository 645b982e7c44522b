# SPDX-License-Identifier: Apache-2.0
"""Each child's tier of verified cache entries (MultiCompressCacheLocal) for test_622 and
test_623: the site (one child, so that every request meets the same tier), the counters that
show the tier, and a request that waits for the strong entry a hit reads from the store."""
from __future__ import annotations

import http.client
import itertools
import os
import re

from mc_client import Response, request
from mc_decode import decode
from mc_stores import SOURCE_LOG_CONF, Sourced, get, log_lines_matching, poll_until, wait_source

ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")
UPGRADE_WAIT = 10.0
LOCAL_HIT = 'multicompress_cache_events_total{event="local_hit"}'
LOCAL_EVICT = 'multicompress_cache_events_total{event="local_evict"}'
HIT = 'multicompress_cache_events_total{event="hit"}'
LOCAL_BYTES = "multicompress_cache_local_bytes"

SITE = SOURCE_LOG_CONF + """
MultiCompressCache On
@STORE_LINE@
@LOCAL_LINE@
<Location /metrics>
    SetHandler multicompress-metrics
</Location>
Alias /t "@HTDOCS@/tier"
<Directory "@HTDOCS@/tier">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Directory>
"""

_ids = itertools.count(1)


def tier_server(make_server, name: str, *, store: str | None = None,
                local: str | None = None, extra_conf: str = "", extra_modules=()):
    conf = (SITE.replace("@STORE_LINE@", f"MultiCompressCacheStore {store}" if store else "")
            .replace("@LOCAL_LINE@", f"MultiCompressCacheLocal {local}" if local else ""))
    mods = ["socache_memcache"] if store and store.startswith("memcache") else ["socache_shmcb"]
    srv = make_server(name, site_template=None, extra_conf=conf + extra_conf,
                      extra_modules=mods + list(extra_modules), mpm_conf=ONE_CHILD,
                      htdocs_copies=[("tier", "static")])
    return srv.start()


def metrics(srv) -> dict[str, float]:
    r = request(srv.port, "/metrics", None)
    assert r.status == 200, r
    out = {}
    for line in r.body.decode().splitlines():
        m = re.match(r"^(multicompress_[a-z_]+(?:\{[^}]*\})?) ([0-9.]+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def local_hits(srv) -> float:
    return metrics(srv).get(LOCAL_HIT, 0)


def get_at(srv, url: str, coding: str, host: str | None = None) -> Sourced:
    """mc_stores.get, with `host` as the Host header when given (a name-based virtual host)."""
    if host is None:
        return get(srv, url, coding)
    rid = f"t{os.getpid()}-{next(_ids)}"
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.putrequest("GET", url, skip_host=True, skip_accept_encoding=True)
        for k, v in (("Host", host), ("Accept-Encoding", coding), ("X-MC-Id", rid)):
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        resp = Response(r.status, r.reason, list(r.getheaders()), r.read())
    finally:
        conn.close()
    note, env = wait_source(srv, rid)
    return Sourced(resp, note, env)


def strong_hit(srv, url: str, original: bytes, coding: str = "br", host: str | None = None):
    """Requests `url` until the response is a cache hit with the upgraded (strong) body: the
    first such hit read the entry from the store at its final level."""
    first = get_at(srv, url, coding, host)
    assert first.resp.status == 200 and decode(first.resp.body, coding) == original, first
    live_size = len(first.resp.body)

    def upgraded():
        got = get_at(srv, url, coding, host)
        assert decode(got.resp.body, coding) == original
        return got if got.note == "cache" and len(got.resp.body) < live_size else None

    hit = poll_until(upgraded, timeout=UPGRADE_WAIT)
    assert hit, f"no strong cache hit within {UPGRADE_WAIT}s: {log_lines_matching(srv, 'cache')[-5:]}"
    return hit
