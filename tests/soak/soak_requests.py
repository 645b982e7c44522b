# SPDX-License-Identifier: Apache-2.0
"""The soak's well-formed traffic (part of soak.py): the Accept-Encoding cases with the coding
each must get, and the request kinds static, head, range, cond, shapes and cgi, each with the
exact bytes its response must decode to; plus the ETags the cond kind sends back."""
from __future__ import annotations

import random

from mc_bodies import mctest_body
from soak_client import CheckFailed, Client, ce_of, check_body, check_vary
from soak_server import BIG_DOCS, COMPRESSIBLE, MIB, SIDE_DOCS, STATIC_DOCS, stream_cgi_body


# ---------------------------------------------------------------------------------------------
# Accept-Encoding cases: (value, expected coding or None for identity)

# /s/: zstd br gzip (test_200_negotiation's table, kept in sync by hand)
AE_DEFAULT = [
    (None, None), ("gzip", "gzip"), ("br", "br"), ("zstd", "zstd"), ("deflate", None),
    ("compress, sdch", None), ("", None), ("identity", None), ("gzip;q=0", None),
    ("gzip;q=0.000", None), ("gzip;q=0.0000", None), ("br, gzip;q=0.0000", "br"),
    ("gzip;q=1.0001, br;q=0.1", "br"), ("gzip;q=1.5, br;q=0.1", "br"),
    ("zstd;q=0.001, gzip;q=0.002", "gzip"), ("gzip;q=0.5, br;q=0.9, zstd;q=0.1", "br"),
    ("*", "zstd"), ("*;q=0", None), ("*;q=0, gzip", "gzip"), ("*, zstd;q=0", "br"),
    ("*, zstd;q=0, br;q=0", "gzip"), ("gzip;q=0.5, *;q=0.6", "zstd"),
    ("identity;q=0", None), ("identity;q=0, *", "zstd"), ("identity, gzip;q=0.5", None),
    ("x-gzip", "gzip"), ("gzip, gzip;q=0", None), ("br;q=0.2, br;q=0.9, gzip;q=0.5", "gzip"),
    ("ZSTD;Q=0.5, gzip;q=0.4", "zstd"), ("  gzip ;  q=0.5 ,br ; q=0.6  ", "br"),
    ("gzip\t;\tq=1", "gzip"), (" , ,br, ,", "br"), ("gzip, br, zstd", "zstd"),
    ("gzip, deflate, br", "br"), ("gzip, deflate, br, zstd", "zstd"),
    ("gzip;q=abc, br", "br"), ("@@@, gzip", "gzip"), (";;;,,,", None), ("gzip;q=", None),
    ("\"gzip\", br", "br"), ("br;level=5", "br"), ("gz ip, b r", None),
]
# every other location: zstd br gzip deflate
AE_ALL = [
    (None, None), ("gzip", "gzip"), ("br", "br"), ("zstd", "zstd"), ("deflate", "deflate"),
    ("identity", None), ("x-gzip", "gzip"), ("deflate, gzip", "gzip"),
    ("deflate;q=1, gzip;q=0.9", "deflate"), ("*", "zstd"),
    ("*, zstd;q=0, br;q=0, gzip;q=0", "deflate"), ("gzip, deflate, br", "br"),
    ("gzip, deflate, br, zstd", "zstd"), ("br;q=1.0, gzip;q=0.8, *;q=0.1", "br"),
    ("gzip;q=0.5, zstd;q=0.4", "gzip"), ("zstd;q=0, br;q=0, gzip;q=0, deflate;q=0", None),
    ("ZSTD;Q=0.9, Gzip", "gzip"), ("br;q=0.001", "br"), ("deflate, gzip;q=0.999", "deflate"),
    ("*;q=0", None), ("compress", None),
]
# the most common browser values weigh more
AE_ALL_WEIGHTED = AE_ALL + [("gzip, deflate, br, zstd", "zstd")] * 4 + \
    [("gzip, deflate, br", "br")] * 3 + [("gzip", "gzip")] * 2 + [(None, None)] * 2


class Requests:
    """The expected bytes and the generators of the well-formed request kinds (Traffic in
    soak_traffic.py adds request bodies, aborts and malformed headers)."""

    def __init__(self, docs: dict[str, bytes], etags: dict[tuple[str, str, str | None], str]):
        self.docs = docs
        self.etags = etags
        self.mct = mctest_body(4 * MIB + 1)

    # -- helpers
    @staticmethod
    def ae_headers(ae) -> list[tuple[str, str | bytes]]:
        if ae is None:
            return []
        if isinstance(ae, list):
            return [("Accept-Encoding", v) for v in ae]
        return [("Accept-Encoding", ae)]

    @staticmethod
    def compressible(name: str) -> bool:
        return name.rsplit(".", 1)[-1] in COMPRESSIBLE

    def static_expect(self, name: str, coding: str | None) -> tuple[str | None, bool]:
        """(expected coding, Vary expected) for a static document."""
        if not self.compressible(name):
            return None, False
        if len(self.docs[name]) < 256:
            return None, True
        return coding, True

    # -- kinds: each sends its request and returns (response, check, request for the report);
    # check() raises CheckFailed or returns the decoded length. response None: an abort kind,
    # checked already.
    def k_static(self, cl: Client, rng: random.Random):
        big = rng.random() < 0.015
        name = rng.choice(list(BIG_DOCS)) if big else rng.choice(STATIC_DOCS)
        prefix = rng.choices(["/s/", "/d/", "/f/", "/c/", "/p/"], [3, 5, 2, 2, 1])[0]
        if prefix == "/p/" and name not in SIDE_DOCS:
            name = rng.choice(SIDE_DOCS)
        ae, coding = rng.choice(AE_DEFAULT if prefix == "/s/" else AE_ALL_WEIGHTED)
        want, vary = self.static_expect(name, coding)
        path = prefix + name
        r = cl.request("GET", path, self.ae_headers(ae))
        return r, lambda: check_body(r, want, self.docs[name], vary=vary), \
            ("GET", path, self.ae_headers(ae))

    def k_head(self, cl: Client, rng: random.Random):
        if rng.random() < 0.5:
            name = rng.choice(STATIC_DOCS + tuple(BIG_DOCS))
            prefix = rng.choice(["/d/", "/f/", "/c/"])
            ae, coding = rng.choice(AE_ALL_WEIGHTED)
            want, vary = self.static_expect(name, coding)
            path = prefix + name
        else:
            size = rng.choice([0, 100, 5000, 20000, 300000])
            ae, coding = rng.choice(AE_ALL_WEIGHTED)
            want, vary = (coding if size >= 256 else None), True
            path = f"/shapes/x?shape=heap&size={size}&ct=text/plain"
        r = cl.request("HEAD", path, self.ae_headers(ae))

        def check():
            if r.status != 200:
                raise CheckFailed(f"status {r.status}")
            if r.body:
                raise CheckFailed("HEAD with a body")
            if ce_of(r) != want:
                raise CheckFailed(f"HEAD Content-Encoding {ce_of(r)!r}, expected {want!r}")
            check_vary(r, vary)
            return 0
        return r, check, ("HEAD", path, self.ae_headers(ae))

    def k_range(self, cl: Client, rng: random.Random):
        name = rng.choice(["page.html", "style.css", "license.txt", "big-text.txt",
                           "big-b64.txt", "data.json"])
        doc = self.docs[name]
        n = len(doc)
        prefix = rng.choice(["/s/", "/d/", "/f/", "/c/"])
        ae, _ = rng.choice(AE_ALL_WEIGHTED if prefix != "/s/" else AE_DEFAULT)
        form = rng.random()
        if form < 0.6:
            a = rng.randrange(0, n - 1)
            b = min(n - 1, a + rng.randrange(1, 200000))
            rh, parts = f"bytes={a}-{b}", [(a, b)]
        elif form < 0.8:
            k = rng.randrange(1, min(n, 50000))
            rh, parts = f"bytes=-{k}", [(n - k, n - 1)]
        else:
            a = rng.randrange(0, n // 2)
            c = rng.randrange(n // 2 + 200, n)
            rh, parts = f"bytes={a}-{a + 99},{c}-{n - 1}", [(a, a + 99), (c, n - 1)]
        hdrs = self.ae_headers(ae) + [("Range", rh)]
        path = prefix + name
        r = cl.request("GET", path, hdrs)

        def check():
            if r.status != 206:
                raise CheckFailed(f"status {r.status}, expected 206")
            if ce_of(r) is not None:
                raise CheckFailed(f"206 with Content-Encoding {ce_of(r)}")
            if len(parts) == 1:
                a, b = parts[0]
                if r.body != doc[a:b + 1]:
                    raise CheckFailed(f"206 body differs ({len(r.body)} bytes for {rh})")
                cr = r.get("content-range")
                if cr != f"bytes {a}-{b}/{n}":
                    raise CheckFailed(f"Content-Range {cr!r} for {rh}")
            else:
                ct = r.get("content-type") or ""
                if "multipart/byteranges" not in ct:
                    raise CheckFailed(f"Content-Type {ct!r} for {rh}")
                for a, b in parts:
                    want = (b"bytes %d-%d/%d\r\n\r\n" % (a, b, n)) + doc[a:b + 1]
                    if want not in r.body:
                        raise CheckFailed(f"part {a}-{b} missing or wrong in the multipart body")
            return sum(b - a + 1 for a, b in parts)
        return r, check, ("GET", path, hdrs)

    def k_cond(self, cl: Client, rng: random.Random):
        keys = list(self.etags)
        prefix, name, coding = rng.choice(keys)
        etag = self.etags[(prefix, name, coding)]
        ae = {None: None, "gzip": "gzip", "br": "br", "zstd": "zstd", "deflate": "deflate"}[coding]
        doc = self.docs[name]
        form = rng.random()
        if form < 0.6:
            inm, status = etag, 304
        elif form < 0.75:
            inm, status = "W/" + etag, 304
        elif form < 0.85:
            inm, status = '"nomatch-1", ' + etag, 304
        else:
            inm, status = '"nomatch-2"', 200
        hdrs = self.ae_headers(ae) + [("If-None-Match", inm)]
        path = prefix + name
        r = cl.request("GET", path, hdrs)

        def check():
            if status == 200:
                return check_body(r, coding, doc)
            if r.status != 304:
                raise CheckFailed(f"status {r.status}, expected 304 for If-None-Match {inm}")
            if r.body:
                raise CheckFailed("304 with a body")
            if r.get("etag") != etag:
                raise CheckFailed(f"304 ETag {r.get('etag')!r}, expected {etag!r}")
            check_vary(r, True)
            return 0
        return r, check, ("GET", path, hdrs)

    SHAPES = ("heap", "heap", "bytes1", "flush", "file", "mmap", "eosalone", "aftereos", "big",
              "range", "204", "304", "mctest", "mctest")
    SHAPE_WEIGHTS = (6, 6, 3, 3, 4, 4, 4, 2, 0.4, 2, 1, 1, 6, 6)
    SIZES = (0, 1, 100, 255, 256, 257, 1000, 4096, 8191, 8192, 8193, 20000, 65536, 65537,
             100000, 300000, 1000000)
    SIZE_WEIGHTS = (2, 2, 3, 2, 2, 2, 6, 6, 4, 4, 4, 10, 6, 4, 4, 1, 0.3)

    def k_shapes(self, cl: Client, rng: random.Random):
        shape = rng.choices(self.SHAPES, self.SHAPE_WEIGHTS)[0]
        ae, coding = rng.choice(AE_ALL_WEIGHTED)
        size = rng.choices(self.SIZES, self.SIZE_WEIGHTS)[0]
        ct = rng.choice(["text/html", "text/plain"])
        cl_arg = "&cl=1" if rng.random() < 0.3 else ""
        expected = None
        status = 200
        small_ok = False  # size < MinLength: identity or compressed are both fine
        vary: bool | None = True
        if shape == "heap":
            q = f"shape=heap&size={size}&ct={ct}{cl_arg}"
            small_ok = size < 256
        elif shape == "bytes1":
            size = min(size, 5000)
            q = f"shape=bytes1&size={size}&pass={rng.choice([0, 1, 7, 1000])}&ct={ct}{cl_arg}"
            small_ok = size < 256
        elif shape == "flush":
            size = max(size, 1000)
            q = (f"shape=flush&size={size}&parts={rng.choice([2, 3, 10])}"
                 f"&delay={rng.choice([0, 0, 1, 20])}&ct={ct}")
        elif shape in ("file", "mmap"):
            name = rng.choice(["page.html", "style.css", "license.txt", "big-text.txt"])
            doc = self.docs[name]
            off = rng.choice([0, 0, 1, 4097, len(doc) // 3])
            ln = rng.choice([None, None, 1, 300, 40000])
            q = f"shape={shape}&file=soak/{name}&off={off}{cl_arg}"
            if ln is not None:
                q += f"&len={ln}"
            expected = doc[off:] if ln is None else doc[off:off + ln]
            small_ok = len(expected) < 256
            if rng.random() < 0.3:
                q += "&eos=alone"
        elif shape == "eosalone":
            q = f"shape=eosalone&size={size}&chunk={rng.choice([1, 100, 8192, 65536])}&ct={ct}"
            if size > 100000:
                q = q.replace("chunk=1&", "chunk=8192&").replace("chunk=100&", "chunk=8192&")
            small_ok = size < 256
        elif shape == "aftereos":
            # only where the response is compressed: when the module leaves a response alone
            # (identity) the handler's data after EOS reaches the wire, as it does without the
            # module (httpd does not guard against a handler that sends after EOS)
            size = max(size, 300)
            ae, coding = rng.choice([a for a in AE_ALL_WEIGHTED if a[1] is not None])
            q = f"shape=aftereos&size={size}&ct={ct}"
        elif shape == "big":
            mb = rng.choice([1, 1, 2, 4])
            q = f"shape=big&mb={mb}&ct={ct}"
            size = mb * MIB
        elif shape == "range":
            size = max(size, 10)
            q = f"shape=range&size={size}&ct={ct}"
            coding, status, vary = None, 206, None
        elif shape == "204":
            q, status, expected, coding, vary = "status=204", 204, b"", None, None
        elif shape == "304":
            q, status, expected, coding, vary = "status=304", 304, b"", None, True
        else:  # mod_mctest: transient / pool / immortal buckets, flushes, passes
            kind = rng.choice(["heap", "transient", "pool", "immortal"])
            q = (f"size={size}&chunk={rng.choice([1000, 8192, 30000])}&kind={kind}"
                 f"&flush={rng.choice([0, 0, 3])}&pass={rng.choice([0, 1, 4])}")
            if rng.random() < 0.2:
                q += "&eos=alone"
            path = "/mctest/x?" + q
            small_ok = size < 256
        if shape != "mctest":
            path = "/shapes/x?" + q
        if expected is None:
            expected = self.mct[:size]
        r = cl.request("GET", path, self.ae_headers(ae))

        def check():
            if status in (204, 304):
                if r.status != status or r.body:
                    raise CheckFailed(f"status {r.status} body {len(r.body)}B, expected {status}")
                if ce_of(r) is not None:
                    raise CheckFailed(f"{status} with Content-Encoding")
                return 0
            if small_ok:
                return check_body(r, None, expected, ce_any=True, vary=vary, status=status)
            return check_body(r, coding, expected, vary=vary, status=status)
        return r, check, ("GET", path, self.ae_headers(ae))

    def k_cgi(self, cl: Client, rng: random.Random):
        lines = rng.choice([1, 2, 3, 5])
        pause = rng.choice(["0.01", "0.05", "0.2"])
        kind = rng.choice(["t", "e"])
        ae, coding = rng.choice(AE_ALL_WEIGHTED)
        path = f"/cgi/stream.sh?{lines}_{pause}_{kind}"
        r = cl.request("GET", path, self.ae_headers(ae))
        return r, lambda: check_body(r, coding, stream_cgi_body(lines)), \
            ("GET", path, self.ae_headers(ae))


def learn_etags(port: int, docs) -> dict[tuple[str, str, str | None], str]:
    out = {}
    cl = Client(port)
    for prefix in ("/s/", "/d/", "/f/"):
        for name in ("page.html", "style.css", "app.js", "license.txt", "big-text.txt"):
            for coding in (None, "gzip", "br", "zstd", "deflate"):
                if prefix == "/s/" and coding == "deflate":
                    continue
                r = cl.request("GET", prefix + name,
                               [("Accept-Encoding", coding)] if coding else [])
                check_body(r, coding, docs[name])
                etag = r.get("etag")
                if etag:
                    out[(prefix, name, coding)] = etag
    cl.close()
    return out
