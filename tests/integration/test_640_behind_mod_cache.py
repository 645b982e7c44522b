# SPDX-License-Identifier: Apache-2.0
"""mod_cache in front of sidecar and cache hits.

When a cached entry goes stale, mod_cache revalidates with its own If-None-Match /
If-Modified-Since; the module's handler must end that request as httpd's default handler does
(r->status set, an EOS down the filter chain, OK), so mod_cache turns the 304 into the full
cached response. A bare 304 must never reach a client that sent an unconditional request.
Stores: mod_cache_disk and mod_cache_socache (shmcb), CacheQuickHandler On and Off; entries
go stale after a second (CacheMaxExpire 1). Also: mod_headers and ErrorDocument apply to the
module's 304 and 412 as to the default handler's.
"""
from __future__ import annotations

import itertools
import os
import pwd
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mc_client import Response, request, suffixed
from mc_decode import decode
from mc_server import HttpdServer
from mc_stores import SOURCE_LOG_CONF, copy_static, get, poll_until, write_sidecar

CODINGS = ("zstd", "br", "gzip")
# mod_cache_disk's own races: a child reads an entry's header while another replaces its data
# file (AH00708), or two children store it at once (AH00699); it then serves a miss.
# mod_cache_socache's AH02360 ("entry too short, removing") under concurrent revalidation
# likewise. The default handler's responses show both.
pytestmark = pytest.mark.log_allow(r"AH00708|AH00699|AH02360")
SOURCES = ("sidecar", "cache")
# The file the sidecar and cache tests serve is 33 KB, so that mod_cache_socache's default
# shmcb (64 KB entries) holds it.
NAME = "style.css"

SITE = SOURCE_LOG_CONF + """
@CACHE_CONF@
CacheDefaultExpire 1
CacheMaxExpire 1
CacheHeader on
<Directory "@HTDOCS@/side">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
    Header set X-Seen yes
</Directory>
<Directory "@HTDOCS@/cached">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCache On
    Header set X-Seen yes
</Directory>
# the default handler, for comparison
<Directory "@HTDOCS@/plain">
    Header set X-Seen yes
</Directory>
ErrorDocument 412 "precondition failed (ErrorDocument)"
"""
DIRS = ("side", "cached", "plain")
DIR_OF = {"sidecar": "side", "cache": "cached", "plain": "plain"}


def cache_conf(store: str, quick: str) -> str:
    if store == "disk":
        store_lines = 'CacheRoot "@GEN@/cachedisk"\nCacheEnable disk /\nCacheDirLevels 1\n'
    else:
        store_lines = 'CacheSocache shmcb\nCacheEnable socache /\n'
    return f"CacheQuickHandler {quick}\n{store_lines}"


def modules(store: str) -> list[str]:
    mods = ["cache", "socache_shmcb"]
    mods.append("cache_disk" if store == "disk" else "cache_socache")
    return mods


def _child_user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    for u in ("www-data", "daemon", "nobody"):
        try:
            return pwd.getpwnam(u)
        except KeyError:
            continue
    return None


class Site:
    """A server and, per source, a page with sidecars / a filled cache entry."""

    def __init__(self, srv: HttpdServer, store: str = "", quick: str = "On"):
        self.srv = srv
        self.store = store
        self.quick = quick
        self.urls: dict[str, str] = {}
        self.original: dict[str, bytes] = {}
        self.etag: dict[str, str] = {}
        self.last_modified: dict[str, str] = {}

    def prepare(self) -> "Site":
        for source, d in DIR_OF.items():
            url, path = copy_static(self.srv, NAME, f"/{d}", d)
            if source == "sidecar":
                for c in CODINGS:
                    write_sidecar(path, c, newer_by=60)
            self.urls[source] = url
            self.original[source] = path.read_bytes()
            ref = request(self.srv.port, url, headers=[("Cache-Control", "no-cache")])
            assert ref.status == 200 and ref.header("ETag"), ref
            self.etag[source] = ref.header("ETag")
            self.last_modified[source] = ref.header("Last-Modified")
        # the module's cache holds each coding before the test starts
        for c in CODINGS:
            ok = poll_until(lambda: get(self.srv, self.urls["cache"], c,
                                        [("Cache-Control", "no-cache")]).note == "cache")
            assert ok, f"no cache hit for {c}"
        return self


def make_site(env, name: str, store: str, quick: str) -> HttpdServer:
    conf = SITE.replace("@CACHE_CONF@", cache_conf(store, quick))
    return HttpdServer(env, name, site_template=None, extra_conf=conf,
                       extra_modules=[*modules(store), "headers"],
                       htdocs_copies=[(d, "static") for d in DIRS])


@pytest.fixture(scope="module", params=[("disk", "On"), ("disk", "Off"), ("socache", "On"),
                                        ("socache", "Off")],
                ids=["disk-quick", "disk-noquick", "socache-quick", "socache-noquick"])
def site(request, env):
    store, quick = request.param
    s = make_site(env, f"behind-cache-{store}-{quick}", store, quick)
    try:
        s.start()
        if store == "disk":
            d = s.gen / "cachedisk"
            d.mkdir()
            user = _child_user()
            if user is not None:
                os.chown(d, user.pw_uid, user.pw_gid)
        yield Site(s, store, quick).prepare()
    finally:
        s.stop()


def socache_truncated(resp: Response) -> bool:
    """mod_cache_socache (httpd 2.4.71) keeps no body when it revalidates an entry: its later
    hits are 200s with Content-Length 0, for the default handler's responses as for ours
    (test_mc_640_05 shows it on a plain file). Not the module's doing; tolerated there only."""
    return (resp.status == 200 and resp.body == b"" and resp.header("Content-Length") == "0"
            and (resp.header("X-Cache") or "").startswith(("HIT", "REVALIDATE")))


def problem(resp: Response, coding: str | None, original: bytes, head: bool,
            conditional_match: bool, store: str = "") -> str | None:
    """What is wrong with a response (None: nothing)."""
    if store == "socache" and not head and socache_truncated(resp):
        return None
    if conditional_match:
        if resp.status == 304 and resp.body == b"":
            return None
        if resp.status != 200:
            return f"status {resp.status} for a matching condition"
    elif resp.status != 200:
        return f"status {resp.status} for {'HEAD' if head else 'GET'} without a matching condition"
    if resp.header_all("Content-Encoding") != ([coding] if coding else []):
        return f"Content-Encoding {resp.header_all('Content-Encoding')}"
    if head:
        return None if resp.body == b"" else "HEAD with a body"
    try:
        if (decode(resp.body, coding) if coding else resp.body) != original:
            return "decoded body differs from the file"
    except AssertionError as e:
        return f"undecodable body: {e}"
    cl = resp.header_all("Content-Length")
    if cl not in ([], [str(len(resp.body))]):
        return f"Content-Length {cl} for {len(resp.body)} bytes"
    return None


def run_for(seconds: float, fn) -> list[str]:
    bad: list[str] = []
    deadline = time.monotonic() + seconds
    for i in itertools.count():
        if time.monotonic() > deadline:
            break
        msg = fn(i)
        if msg:
            bad.append(msg)
    return bad


def cases(site: Site, sources=SOURCES):
    """(source, coding, method, headers, matching) for every combination."""
    out = []
    for source in sources:
        for coding in CODINGS:
            tag = suffixed(site.etag[source], coding) if source != "plain" else site.etag[source]
            for method in ("GET", "HEAD"):
                out.append((source, coding, method, [], False))
                out.append((source, coding, method, [("If-None-Match", '"other"')], False))
                out.append((source, coding, method, [("If-None-Match", tag)], True))
                out.append((source, coding, method,
                            [("If-Modified-Since", site.last_modified[source])], True))
    return out


def check_one(site: Site, case) -> str | None:
    source, coding, method, headers, matching = case
    r = request(site.srv.port, site.urls[source], coding, headers, method)
    msg = problem(r, coding if source != "plain" else None, site.original[source],
                  method == "HEAD", matching, site.store)
    return f"{source} {coding} {method} {headers}: {msg} {r!r}" if msg else None


def test_mc_640_01_unconditional_requests_get_full_responses(site):
    """Sequential requests over 3.5 s (entries go stale every second and are revalidated):
    every unconditional GET is a full 200 whose body decodes to the file, every HEAD a 200."""
    all_cases = [c for c in cases(site) if not c[3]]
    bad = run_for(3.5, lambda i: check_one(site, all_cases[i % len(all_cases)]))
    assert not bad, f"{len(bad)} bad responses, e.g.:\n" + "\n".join(bad[:5])


def test_mc_640_02_conditional_requests(site):
    """If-None-Match with the altered ETag and If-Modified-Since: 304 (or a full 200); an ETag
    that does not match: the full response; over 3 s of revalidations."""
    all_cases = cases(site)
    bad = run_for(3.0, lambda i: check_one(site, all_cases[i % len(all_cases)]))
    assert not bad, f"{len(bad)} bad responses, e.g.:\n" + "\n".join(bad[:5])
    # a matching condition really gets its 304 (a revalidating mod_cache may send the full
    # 200 instead, which the loop above accepts)
    # With CacheQuickHandler Off, mod_cache compares the client's If-None-Match only after the
    # fixups, where the module has stripped the coding suffix, so a cached entry answers with
    # the full 200 (correct, not optimal).
    for source in ("plain", *(SOURCES if site.quick == "On" else ())):
        for coding in CODINGS:
            tag = site.etag[source] if source == "plain" else suffixed(site.etag[source], coding)
            hdr = [("If-None-Match", tag)]
            got = poll_until(lambda: request(site.srv.port, site.urls[source], coding,
                                             hdr).status == 304, timeout=3.0)
            assert got, f"no 304 for {source} {coding} {hdr}"


def test_mc_640_03_under_load(site):
    """8 threads for 3 s, the same mix: no bare 304 for an unconditional request."""
    all_cases = cases(site)
    bad: list[str] = []
    lock = threading.Lock()
    counter = itertools.count()

    def worker(_):
        for msg in run_for(3.0, lambda i: check_one(site, all_cases[next(counter) %
                                                                   len(all_cases)])):
            with lock:
                bad.append(msg)

    with ThreadPoolExecutor(8) as ex:
        list(ex.map(worker, range(8)))
    assert not bad, f"{len(bad)} bad responses, e.g.:\n" + "\n".join(bad[:5])


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_640_04_headers_and_error_document_as_default_handler(env, make_server, source,
                                                                  coding):
    """Without mod_cache: the module's 304 and 412 carry what mod_headers adds and what
    ErrorDocument sends, exactly as the default handler's do for the same file."""
    conf = SITE.replace("@CACHE_CONF@", "").replace("CacheDefaultExpire 1\n", "") \
        .replace("CacheMaxExpire 1\n", "").replace("CacheHeader on\n", "")
    srv = make_server(f"precond-{source}-{coding}", site_template=None, extra_conf=conf,
                      extra_modules=["headers", "socache_shmcb"],
                      htdocs_copies=[(d, "static") for d in DIRS])
    srv.start()
    s = Site(srv).prepare()
    plain_url = s.urls["plain"]
    plain = request(srv.port, plain_url)
    url = s.urls[source]
    ours_tag = suffixed(s.etag[source], coding)
    for ours_h, plain_h, want in (
            ([("If-None-Match", ours_tag)], [("If-None-Match", plain.header("ETag"))], 304),
            ([("If-Modified-Since", s.last_modified[source])],
             [("If-Modified-Since", plain.header("Last-Modified"))], 304),
            ([("If-Match", '"nope"')], [("If-Match", '"nope"')], 412),
            ([("If-Unmodified-Since", "Mon, 01 Jan 2001 00:00:00 GMT")],
             [("If-Unmodified-Since", "Mon, 01 Jan 2001 00:00:00 GMT")], 412)):
        ref = request(srv.port, plain_url, coding, plain_h)
        got = get(srv, url, coding, ours_h)
        r = got.resp
        assert ref.status == want, ref
        assert r.status == want, (ours_h, r)
        assert got.note == source, got
        assert r.header("X-Seen") == ref.header("X-Seen"), (ours_h, r, ref)
        assert r.body == ref.body, (ours_h, r.body[:200], ref.body[:200])


def test_mc_640_05_default_handler_control(site):
    """The same checks on a plain file served by the default handler (no sidecar, no module
    cache): what mod_cache itself does. Behind mod_cache_socache, its truncated revalidations
    are tolerated as for the module's responses."""
    all_cases = [c for c in cases(site, ("plain",)) if not c[3] or c[4]]
    bad = run_for(3.0, lambda i: check_one(site, all_cases[i % len(all_cases)]))
    assert not bad, f"{len(bad)} bad responses, e.g.:\n" + "\n".join(bad[:5])
