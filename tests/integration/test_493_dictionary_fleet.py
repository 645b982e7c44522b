# SPDX-License-Identifier: Apache-2.0
"""Shared-dictionary compression (RFC 9842) across a fleet: two servers sharing a real
memcached as MultiCompressCacheStore. A dictionary learned by one is used by the other, also
after the old file was deleted; one the store lost means the normal negotiation; unknown hashes
are looked up once per child, not per request; a tampered store entry is refused (MC00270).
The tests run in this order and share the fleet (test 10 relies on test 09's deploy)."""
from __future__ import annotations

import hashlib
import socket

import pytest

from mc_bodies import mctest_body
from mc_decode import decode
from mc_dictionary import cli_decode, dcz_decode, dcz_get, learn, make_server, populate
from mc_stores import StoreProcess


# A fleet's sites: each server has them as name-based virtual hosts with the public name and
# port, so every server of the fleet is the same origin for each (whatever port it listens on).
FLEET_SITES = ("www.fleet.test", "evict.fleet.test", "miss.fleet.test", "tamper.fleet.test")
FLEET_VHOSTS = "".join(f"<VirtualHost 127.0.0.1:@PORT@>\n    ServerName {name}:80\n"
                       f"</VirtualHost>\n" for name in FLEET_SITES)


def fleet_origin(host: str) -> str:
    return f"http://{host}:80"


@pytest.fixture(scope="module")
def fleet(env):
    store = StoreProcess("memcache").start()
    servers = []
    try:
        for name in ("fleet-a", "fleet-b"):
            s = make_server(env, name, store.spec, modules=("socache_memcache",))
            s.extra_conf += FLEET_VHOSTS
            s.start()
            s.files = populate(s)
            servers.append(s)
        yield store, servers
    finally:
        for s in servers:
            s.stop()
        store.cleanup()


def test_mc_492_09_fleet_shares_dictionaries(fleet, tmp_path):
    _, (a, b) = fleet
    host = "www.fleet.test"
    v1, v2 = a.files["app.v1.js"], a.files["app.v2.js"]
    learn(a, "/d/app.v1.js", v1, host="www.fleet.test")
    # b never served v1; and a deploy removed the old file everywhere
    for s in (a, b):
        (s.htdocs / "dict" / "app.v1.js").unlink()
    r = dcz_get(b, "/d/app.v2.js", v1, host=host)
    assert r.content_encoding == "dcz", r
    assert dcz_decode(r.body, v1) == v2 and cli_decode(tmp_path, r.body, v1) == v2
    # a large dictionary goes to the store in chunks (memcached keeps items under 1 MB)
    big = mctest_body(3 << 20)
    (a.htdocs / "dict" / "site-dict.txt").write_bytes(big)
    learn(a, "/d/site-dict.txt", big, host="www.fleet.test")
    live = dcz_get(b, "/mctest/page?size=200000", big, host=host)
    assert live.content_encoding == "dcz" and dcz_decode(live.body, big) == mctest_body(200000)


def test_mc_492_14_evicted_from_the_store(fleet):
    """A dictionary the store lost (evicted) and the other server never saw: the normal
    negotiation."""
    store, (a, b) = fleet
    host = "evict.fleet.test"
    data = a.files["app.v3.js"]
    (a.htdocs / "dict" / "app.v3.js").write_bytes(data)
    learn(a, "/d/app.v3.js", data, host=host)
    origin_tag = hashlib.sha256(fleet_origin(host).encode()).hexdigest()[:16]
    head = ("mcd1-" + hashlib.sha256(data).hexdigest() + "@" + origin_tag).encode()
    key = b"mc-cache:" + head.hex().encode()
    assert memcache_cmd(store.port, b"delete %s\r\n" % key).startswith(b"DELETED")
    r = dcz_get(b, "/d/app.v2.js", data, host=host)
    assert r.status == 200 and r.content_encoding == "zstd", r
    assert decode(r.body, "zstd") == b.files["app.v2.js"]


def memcache_gets(store) -> int:
    for line in memcache_cmd(store.port, b"stats\r\n").decode().splitlines():
        if line.startswith("STAT cmd_get "):
            return int(line.split()[2])
    raise AssertionError("no cmd_get in memcached's stats")


def test_mc_492_16_unknown_hashes_spare_the_store(fleet):
    """A client that names a dictionary nobody offered, again and again: the store is asked
    once per child, not once per request (misses are remembered for a few seconds)."""
    store, (_, b) = fleet
    before = memcache_gets(store)
    for _ in range(12):
        r = dcz_get(b, "/d/app.v2.js", b"never offered anywhere", host="miss.fleet.test")
        assert r.status == 200 and r.content_encoding == "zstd"
    asked = memcache_gets(store) - before
    assert 1 <= asked <= len(b.child_pids()), (asked, b.child_pids())


def memcache_cmd(port: int, line: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(line)
        return c.recv(4096)


@pytest.mark.log_allow(r"MC00270")
def test_mc_492_10_tampered_store_entry(fleet):
    store, (a, b) = fleet
    host = "tamper.fleet.test"
    data = a.files["app.v3.js"]
    (a.htdocs / "dict" / "app.v3.js").write_bytes(data)
    learn(a, "/d/app.v3.js", data, host="tamper.fleet.test")
    # mod_socache_memcache's key: the module's namespace ("mc-cache"), a colon, the key in hex
    key = b"mc-cache:" + ("mcd1-" + hashlib.sha256(data).hexdigest() + "-0").encode().hex().encode()
    assert memcache_cmd(store.port, b"get %s\r\n" % key).startswith(b"VALUE"), "no such entry"
    evil = b"X" * 1000
    # memcached's text protocol: replace the first chunk with other bytes
    assert memcache_cmd(store.port, b"set %s 0 0 %d\r\n%s\r\n" % (key, len(evil), evil)) \
        .startswith(b"STORED")
    # (app.v1.js was deleted by the deploy of test 09)
    r = dcz_get(b, "/d/app.v2.js", data, host=host)
    assert r.status == 200 and r.content_encoding != "dcz"
    assert decode(r.body, r.content_encoding) == b.files["app.v2.js"]
    assert "MC00270" in b.error_log.read_text()
