# SPDX-License-Identifier: Apache-2.0
"""Smoke subset under every MPM: event (the main server), worker and prefork."""
import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_server import start_main
from test_600_streaming import stream_first_line
from test_800_concurrency import run_concurrently


@pytest.fixture(scope="module", params=["event", "worker", "prefork"])
def mpm_server(request, env, main):
    if request.param == "event":
        yield main
        return
    srv = start_main(env, request.param)
    yield srv
    srv.stop()


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", None])
def test_mc_900_01_encodings(env, mpm_server, coding):
    for name in ("page.html", "data.json"):
        assert_encoded(request(mpm_server.port, "/mc/" + name, coding), coding,
                       static_file(env, name))


def test_mc_900_02_negotiation_and_filters(env, mpm_server):
    page = static_file(env, "page.html")
    port = mpm_server.port
    assert_encoded(request(port, "/mc/page.html", "gzip;q=0.5, br;q=0.9, zstd;q=0"), "br", page)
    assert_encoded(request(port, "/mc-order/page.html", "zstd, br, gzip"), "gzip", page)
    assert_encoded(request(port, "/f-two/page.html", "gzip, zstd"), "zstd", page)
    assert_encoded(request(port, "/dir/sub2/page.html", "zstd, br, gzip"), "gzip", page)
    resp = request(port, "/vary-origin/page.html", "br")
    assert_encoded(resp, "br", page)
    assert sorted(resp.vary_tokens()) == ["accept-encoding", "origin"]


def test_mc_900_03_streaming(mpm_server):
    t_first, t_end, body = stream_first_line(mpm_server.port,
                                             "/cgi-bin/stream.py?sleep=1.5&lines=2", "zstd")
    assert body.count(b"\n") == 2
    assert t_end >= 1.4 and t_first is not None and t_first < 0.8, (t_first, t_end)


def test_mc_900_04_concurrency(env, mpm_server):
    run_concurrently(env, mpm_server.port, n=100, workers=20)
