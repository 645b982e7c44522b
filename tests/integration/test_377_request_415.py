# SPDX-License-Identifier: Apache-2.0
"""415 for request bodies in a coding the DEFLATE input filter does not decode.

RFC 9110 §15.5.16: a request whose content coding the server does not support gets 415, with
an Accept-Encoding that names the codings it would have accepted (gzip, deflate, br, zstd). The
handler never runs. mod_deflate hands such a body to the handler still encoded (its input filter
steps aside); so did this module before.

The Content-Encoding list is read as mod_deflate reads it where that is right, and as RFC 9110
says where mod_deflate is not: the last coding is the outermost and the only one removed;
"identity" and empty list members are skipped (mod_deflate skips them, this module passed a body
with "gzip, " on still encoded); x-gzip is gzip (mod_deflate decodes it only in a list).
"""
from __future__ import annotations

import hashlib
import http.client
import re
import time
import zlib

import pytest

from mc_bodies import text_body
from mc_client import request
from mc_drop_in import encode, post, start_dropin, stop_checked

SITE = r"""
<Location /metrics>
    SetHandler multicompress-metrics
</Location>
<Location /echo/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
</Location>
<Location /plain/>
    SetHandler mctest-echo
</Location>
# Another module reads the body before the handler (a mod_lua fixup): the input filter refuses.
<Location /early/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
    LuaHookFixups "@HTDOCS@/early.lua" read_body
</Location>
"""

EARLY_LUA = """
function read_body(r)
    pcall(function() return r:requestbody() end)
    return apache2.DECLINED
end
"""

BODY = text_body(50000)
SHA = hashlib.sha256(BODY).hexdigest()


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t377", SITE, files={"early.lua": EARLY_LUA}, modules=["lua"])
    yield s
    stop_checked(s)


@pytest.mark.parametrize("ce", ["something-unknown", "dcz", "dcb", "compress", "x-compress",
                                "gzip, something-unknown", "br, dcz", "gzip;q=1"])
def test_mc_377_01_unsupported_coding_gets_415(srv, ce):
    r = post(srv.port, "/echo/x?mode=sum", encode(BODY, "gzip"),
             headers=[("Content-Encoding", ce)])
    assert r.status == 415, r
    assert r.header("Accept-Encoding") == "gzip, deflate, br, zstd"
    assert r.header("X-Mctest-Length") is None, "the handler ran"


@pytest.mark.parametrize("ce,coding", [
    ("gzip", "gzip"), ("x-gzip", "gzip"), ("GZIP", "gzip"), ("X-Gzip", "gzip"),
    ("gzip, ", "gzip"), ("gzip,,", "gzip"), ("identity, gzip", "gzip"), ("gzip, identity", "gzip"),
    (" br ", "br"), ("zstd", "zstd"), ("deflate", "deflate"),
])
def test_mc_377_02_decoded_spellings(srv, ce, coding):
    data = encode(BODY, coding) if coding != "deflate" else zlib.compress(BODY)
    r = post(srv.port, "/echo/x?mode=sum", data, headers=[("Content-Encoding", ce)])
    assert r.status == 200, r
    assert r.header("X-Mctest-Sha256") == SHA
    assert r.header("X-Mctest-Request-CE") == "-", "no coding is left for the handler"
    assert r.header("X-Mctest-Request-CL") == str(len(BODY))


@pytest.mark.parametrize("ce,rest", [("br, gzip", "br"), ("something-unknown, gzip",
                                                          "something-unknown"),
                                     ("br, identity, gzip", "br")])
def test_mc_377_03_only_the_outer_coding_is_removed(srv, ce, rest):
    inner = encode(BODY, "br")
    r = post(srv.port, "/echo/x?mode=sum", encode(inner, "gzip"),
             headers=[("Content-Encoding", ce)])
    assert r.status == 200, r
    assert r.header("X-Mctest-Sha256") == hashlib.sha256(inner).hexdigest()
    assert r.header("X-Mctest-Request-CE") == rest


def test_mc_377_04_identity_and_no_body_are_not_refused(srv):
    r = post(srv.port, "/echo/x?mode=sum", BODY, headers=[("Content-Encoding", "identity")])
    assert r.status == 200 and r.header("X-Mctest-Sha256") == SHA
    r = request(srv.port, "/echo/x?mode=sum", headers=[("Content-Encoding", "something-unknown")])
    assert r.status == 200, "no body: nothing to decode"


def test_mc_377_05_without_the_input_filter_nothing_changes(srv):
    data = encode(BODY, "gzip")
    r = post(srv.port, "/plain/x?mode=sum", data, headers=[("Content-Encoding", "dcz")])
    assert r.status == 200
    assert r.header("X-Mctest-Sha256") == hashlib.sha256(data).hexdigest()
    assert r.header("X-Mctest-Request-CE") == "dcz"


def test_mc_377_06_counted(srv):
    def refused() -> int:
        text = request(srv.port, "/metrics").body.decode()
        m = re.search(r'^multicompress_inflate_errors_total\{status="415"\} (\d+)$', text, re.M)
        assert m, text
        return int(m.group(1))

    before = refused()
    assert post(srv.port, "/echo/x", BODY, headers=[("Content-Encoding", "zz")]).status == 415
    deadline = time.monotonic() + 5
    while refused() < before + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert refused() == before + 1


def test_mc_377_07_connection_kept(srv):
    """The refused body is read and thrown away as it came: the connection serves the next
    request."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.request("POST", "/echo/x?mode=sum", body=encode(BODY, "gzip"),
                     headers={"Content-Encoding": "dcz"})
        r = conn.getresponse()
        r.read()
        assert r.status == 415 and r.getheader("Connection") != "close"
        conn.request("POST", "/echo/x?mode=sum", body=encode(BODY, "gzip"),
                     headers={"Content-Encoding": "gzip"})
        r = conn.getresponse()
        r.read()
        assert r.status == 200 and r.getheader("X-Mctest-Sha256") == SHA
    finally:
        conn.close()


def test_mc_377_08_read_before_the_handler(srv):
    mark = srv.log_size()
    r = post(srv.port, "/early/x?mode=sum", encode(BODY, "gzip"),
             headers=[("Content-Encoding", "something-unknown")])
    assert r.status == 415, r
    assert r.header("Accept-Encoding") == "gzip, deflate, br, zstd"
    assert r.header("X-Mctest-Length") is None, "the handler ran"
    assert len([l for l in srv.log_lines(mark) if "MC00330" in l]) == 1
    ok = post(srv.port, "/early/x?mode=sum", encode(BODY, "gzip"),
              headers=[("Content-Encoding", "gzip")])
    assert ok.status == 200
