# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: the DEFLATE input filter (`SetInputFilter DEFLATE`)
with mctest-echo, which reads the body with ap_get_brigade until EOS. gzip, br and zstd bodies
arrive decoded exactly, without Content-Encoding; a 1 GiB bomb in each coding gets 413 once a limit
is crossed (default ratio limit; ratio raised plus a 10 MiB limit through DeflateInflate* and
MultiCompressInflate*) with bounded server memory and an MC00020 line; corrupt and truncated bodies
get 400."""
import hashlib
import re

import pytest

from mc_bodies import mctest_body, static_file, text_body
from mc_drop_in import (CODINGS, assert_no_crash, bomb, children_rss_kib, encode, post,
                        start_dropin, stop_checked, wait_for_log, zstd_request_compressor)

MIB = 1 << 20

SITE = r"""
<Location /echo/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
</Location>
<Location /echo-raw/>
    SetHandler mctest-echo
</Location>
# mod_deflate's directives: ratio out of the way, 10 MiB inflated at most
<Location /echo-deflate-limit/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
    DeflateInflateRatioLimit 1000000
    DeflateInflateRatioBurst 1000000
    DeflateInflateLimitRequestBody 10485760
</Location>
# ours
<Location /echo-mc-limit/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
    MultiCompressInflateRatio 1000000 1000000
    MultiCompressInflateLimit 10M
</Location>
# no inflate limit of its own: LimitRequestBody limits the inflated body too (mod_deflate),
# and so does DeflateInflateLimitRequestBody 0 (mod_deflate: "0" means LimitRequestBody)
<Location /echo-lrb/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
    LimitRequestBody 5242880
    DeflateInflateRatioLimit 1000000
</Location>
<Location /echo-lrb-deflate0/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
    LimitRequestBody 5242880
    DeflateInflateRatioLimit 1000000
    DeflateInflateLimitRequestBody 0
</Location>
# a low ratio limit refuses ordinary text (ratio 20 and more)
<Location /echo-ratio5/>
    SetHandler mctest-echo
    SetInputFilter DEFLATE
    DeflateInflateRatioLimit 5
    DeflateInflateRatioBurst 1
</Location>
"""

LOG_ALLOW = r"MC0002[0-9]"


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t370", SITE)
    yield s
    stop_checked(s)


def bodies(env) -> dict[str, bytes]:
    return {"page": static_file(env, "page.html"), "text-2m": text_body(2 * MIB),
            "mctest-3m": mctest_body(3 * MIB), "tiny": b"x", "empty": b""}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def assert_echoed(r, plain: bytes) -> None:
    assert r.status == 200, r
    assert r.header("X-Mctest-Length") == str(len(plain))
    assert r.header("X-Mctest-Sha256") == sha(plain)
    assert r.body == plain
    # the input filter removes Content-Encoding, and the compressed length with it
    assert r.header("X-Mctest-Request-CE") == "-", r
    assert r.header("X-Mctest-Request-CL") in ("-", str(len(plain))), r


# ---- decoding

@pytest.mark.parametrize("name", ["page", "text-2m", "mctest-3m", "tiny", "empty"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_01_body_decoded(env, srv, coding, name):
    plain = bodies(env)[name]
    r = post(srv.port, "/echo/x", encode(plain, coding), headers=[("Content-Encoding", coding)])
    assert_echoed(r, plain)


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_02_chunked_body_decoded(env, srv, coding):
    plain = text_body(MIB)
    data = encode(plain, coding)
    pieces = [data[i:i + 1000] for i in range(0, len(data), 1000)]
    r = post(srv.port, "/echo/x", pieces, chunked=True, headers=[("Content-Encoding", coding)])
    assert_echoed(r, plain)


@pytest.mark.parametrize("ce", ["GZIP", "x-gzip", " gzip "])
def test_mc_370_03_gzip_spellings(env, srv, ce):
    plain = static_file(env, "style.css")
    r = post(srv.port, "/echo/x", encode(plain, "gzip"), headers=[("Content-Encoding", ce)])
    assert_echoed(r, plain)


def test_mc_370_04_plain_body_untouched(env, srv):
    plain = static_file(env, "page.html")
    r = post(srv.port, "/echo/x", plain)
    assert r.status == 200 and r.body == plain
    assert r.header("X-Mctest-Request-CL") == str(len(plain))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_05_without_filter_body_stays_encoded(env, srv, coding):
    """Sanity: the decoding is the filter's doing."""
    data = encode(static_file(env, "page.html"), coding)
    r = post(srv.port, "/echo-raw/x", data, headers=[("Content-Encoding", coding)])
    assert r.status == 200 and r.body == data
    assert r.header("X-Mctest-Request-CE") == coding


# ---- bombs

@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_06_bomb_default_ratio(srv, coding):
    """1 GiB of zeros (1 MB gzip, 190 KB br, 32 KB zstd) against the default ratio limit (200,
    burst 3, as mod_deflate): 413 early, bounded memory, MC00020."""
    data = bomb(coding)
    mark = srv.log_size()
    rss0 = children_rss_kib(srv)
    r = post(srv.port, "/echo/x?mode=sum", data, headers=[("Content-Encoding", coding)])
    assert r.status == 413, r
    log = wait_for_log(srv, mark, "MC00020")
    assert re.search(r"MC00020: request body: .*ratio", log), log
    grown = (children_rss_kib(srv) - rss0) // 1024
    assert grown < 64, f"server RSS grew by {grown} MiB"
    assert_no_crash(srv, mark)


@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("loc", ["/echo-deflate-limit/", "/echo-mc-limit/"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_07_bomb_size_limit(srv, coding, loc):
    """Ratio limit out of the way, 10 MiB limit: 413 as soon as the inflated body passes
    10 MiB (one decode step, 64 KiB, at most past it)."""
    data = bomb(coding)
    mark = srv.log_size()
    rss0 = children_rss_kib(srv)
    r = post(srv.port, loc + "x?mode=sum", data, headers=[("Content-Encoding", coding)])
    assert r.status == 413, r
    log = wait_for_log(srv, mark, "MC00020")
    m = re.search(r"MC00020: request body: inflated body is larger than the configured limit "
                  r"after (\d+) bytes in, (\d+) bytes out", log)
    assert m, log
    out = int(m.group(2))
    assert 10 * MIB < out <= 10 * MIB + MIB, out
    grown = (children_rss_kib(srv) - rss0) // 1024
    assert grown < 64, f"server RSS grew by {grown} MiB"
    assert_no_crash(srv, mark)


@pytest.mark.parametrize("loc", ["/echo-deflate-limit/", "/echo-mc-limit/"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_08_under_size_limit_passes(srv, coding, loc):
    """8 MiB of zeros under the 10 MiB limit (ratio out of the way): accepted whole."""
    r = post(srv.port, loc + "x?mode=sum", bomb(coding, 8), headers=[("Content-Encoding", coding)])
    assert r.status == 200, r
    assert r.header("X-Mctest-Length") == str(8 * MIB)
    assert r.header("X-Mctest-Sha256") == sha(bytes(8 * MIB))


@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("loc", ["/echo-lrb/", "/echo-lrb-deflate0/"])
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_13_limit_request_body_applies_inflated(srv, coding, loc):
    """8 MiB of zeros (8 KB compressed) where LimitRequestBody is 5 MiB: 413."""
    mark = srv.log_size()
    r = post(srv.port, loc + "x?mode=sum", bomb(coding, 8), headers=[("Content-Encoding", coding)])
    assert r.status == 413, r
    assert "larger than the configured limit" in wait_for_log(srv, mark, "MC00020")


@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("coding", CODINGS)
def test_mc_370_09_ratio_limit_directive(srv, coding):
    """DeflateInflateRatioLimit 5 (burst 1) refuses ordinary text that the default accepts."""
    plain = text_body(2 * MIB)
    data = encode(plain, coding)
    ok = post(srv.port, "/echo/x?mode=sum", data, headers=[("Content-Encoding", coding)])
    assert ok.status == 200 and ok.header("X-Mctest-Sha256") == sha(plain)
    mark = srv.log_size()
    r = post(srv.port, "/echo-ratio5/x?mode=sum", data, headers=[("Content-Encoding", coding)])
    assert r.status == 413, r
    assert "ratio" in wait_for_log(srv, mark, "MC00020")


# ---- corrupt and truncated

def corrupt_bodies(env) -> dict[str, tuple[str, bytes]]:
    plain = static_file(env, "page.html")
    gz = encode(plain, "gzip")
    br = encode(plain, "br")
    zs = encode(plain, "zstd")
    zs_sum = zstd_request_compressor(3, write_checksum=True).compress(plain)
    mid = len(gz) // 2
    return {
        "gzip-flipped": ("gzip", gz[:mid] + bytes([gz[mid] ^ 0xFF]) + gz[mid + 1:]),
        "gzip-bad-crc": ("gzip", gz[:-8] + bytes([gz[-8] ^ 1]) + gz[-7:]),
        "gzip-bad-magic": ("gzip", b"\x1f\x8c" + gz[2:]),
        "gzip-truncated": ("gzip", gz[:-20]),
        "gzip-header-only": ("gzip", gz[:10]),
        "gzip-trailing-garbage": ("gzip", gz + b"GARBAGE"),
        "gzip-not-gzip": ("gzip", plain[:3000]),
        # a stream header for a 512 KiB window (within MultiCompressInflateWindow), then junk
        "br-garbage": ("br", b"\x07" + b"\xff" * 63),
        "br-truncated": ("br", br[:-5]),
        "br-trailing-garbage": ("br", br + b"GARBAGE"),
        "zstd-bad-magic": ("zstd", b"\x29" + zs[1:]),
        "zstd-truncated": ("zstd", zs[:-7]),
        "zstd-bad-checksum": ("zstd", zs_sum[:-1] + bytes([zs_sum[-1] ^ 0x55])),
        "zstd-trailing-garbage": ("zstd", zs + b"GARBAGE!"),
    }


CORRUPT = ["gzip-flipped", "gzip-bad-crc", "gzip-bad-magic", "gzip-truncated",
           "gzip-header-only", "gzip-trailing-garbage", "gzip-not-gzip", "br-garbage",
           "br-truncated", "br-trailing-garbage", "zstd-bad-magic", "zstd-truncated",
           "zstd-bad-checksum", "zstd-trailing-garbage"]


@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("case", CORRUPT)
def test_mc_370_10_corrupt_body_400(env, srv, case):
    coding, data = corrupt_bodies(env)[case]
    mark = srv.log_size()
    r = post(srv.port, "/echo/x?mode=sum", data, headers=[("Content-Encoding", coding)])
    assert r.status == 400, r
    assert_no_crash(srv, mark)


@pytest.mark.log_allow(LOG_ALLOW)
@pytest.mark.parametrize("case", ["gzip-truncated", "br-truncated", "zstd-truncated",
                                  "gzip-flipped"])
def test_mc_370_11_corrupt_chunked_400(env, srv, case):
    coding, data = corrupt_bodies(env)[case]
    pieces = [data[i:i + 333] for i in range(0, len(data), 333)]
    r = post(srv.port, "/echo/x?mode=sum", pieces, chunked=True,
             headers=[("Content-Encoding", coding)])
    assert r.status == 400, r


def test_mc_370_12_server_still_serves(env, srv):
    """After all of the above the workers are alive and decode correctly."""
    plain = static_file(env, "page.html")
    for coding in CODINGS:
        r = post(srv.port, "/echo/x", encode(plain, coding), headers=[("Content-Encoding", coding)])
        assert_echoed(r, plain)
    assert_no_crash(srv, 0)
