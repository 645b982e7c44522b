# SPDX-License-Identifier: Apache-2.0
"""The soak's whole traffic (part of soak.py): the well-formed kinds of soak_requests.py plus
request bodies (post), corrupt bodies and bombs (postbad), clients that abort (abort),
malformed Accept-Encoding (badae), the heavy requests every client sends first (primers), and
the weight of every kind."""
from __future__ import annotations

import hashlib
import random
import time

from mc_bodies import mctest_body, text_body
from mc_decode import DecodeError, StreamDecoder
from mc_drop_in import bomb, encode, zstd_request_compressor
from soak_client import (CheckFailed, Client, Resp, build_request, check_body, dechunk_prefix,
                         first_diff, read_body, read_head)
from soak_requests import AE_ALL, AE_ALL_WEIGHTED, Requests
from soak_server import BIG_DOCS, MIB, stream_cgi_body

POST_CLOSE = False  # --post-close


class Traffic(Requests):
    """What every worker needs: the expected bytes and the request generators (inherited by
    fork, so built once in the parent)."""

    def __init__(self, docs: dict[str, bytes], etags: dict[tuple[str, str, str | None], str]):
        super().__init__(docs, etags)
        self.page = docs["page.html"]
        # request bodies: (name, plain, {coding: encoded})
        plains = {"empty": b"", "x": b"x", "css": docs["style.css"], "page": docs["page.html"],
                  "text64k": text_body(65536), "mct1m": mctest_body(MIB),
                  "b64": docs["big-b64.txt"][:300000]}
        self.post_bodies = [(n, p, {c: encode(p, c) for c in ("gzip", "br", "zstd")})
                            for n, p in plains.items()]
        gz = encode(self.page, "gzip")
        br = encode(self.page, "br")
        zs = encode(self.page, "zstd")
        zs_sum = zstd_request_compressor(3, write_checksum=True).compress(self.page)
        mid = len(gz) // 2
        self.bad_bodies = [  # (name, coding, body, expected status)
            ("gzip-flipped", "gzip", gz[:mid] + bytes([gz[mid] ^ 0xFF]) + gz[mid + 1:], 400),
            ("gzip-bad-crc", "gzip", gz[:-8] + bytes([gz[-8] ^ 1]) + gz[-7:], 400),
            ("gzip-truncated", "gzip", gz[:-20], 400),
            ("gzip-trailing", "gzip", gz + b"GARBAGE", 400),
            ("gzip-not-gzip", "gzip", self.page[:3000], 400),
            # 0x03: a 256 KiB window, then bytes that are no valid meta-block
            ("br-garbage", "br", b"\x03" + b"\xff" * 63, 400),
            # 0xff: a 16 MiB window, over MultiCompressInflateWindow's 1 MiB default
            ("br-window-16m", "br", b"\xff" * 64, 413),
            ("br-truncated", "br", br[:-5], 400),
            ("zstd-bad-magic", "zstd", b"\x29" + zs[1:], 400),
            ("zstd-truncated", "zstd", zs[:-7], 400),
            ("zstd-bad-checksum", "zstd", zs_sum[:-1] + bytes([zs_sum[-1] ^ 0x55]), 400),
            ("gzip-bomb-16m", "gzip", bomb("gzip", 16), 413),
            ("br-bomb-64m", "br", bomb("br", 64), 413),
            ("zstd-bomb-256m", "zstd", bomb("zstd", 256), 413),
        ]

    def k_post(self, cl: Client, rng: random.Random):
        name, plain, enc = rng.choices(self.post_bodies, (3, 3, 4, 4, 3, 0.3, 0.5))[0]
        coding = rng.choice(("gzip", "br", "zstd"))
        data = enc[coding]
        mode = rng.random()
        hdrs: list[tuple[str, str]] = [("Content-Encoding", coding)]
        if POST_CLOSE:
            hdrs.append(("Connection", "close"))
        ae, rcoding = rng.choice(AE_ALL_WEIGHTED)
        hdrs += self.ae_headers(ae)
        path = "/echo/x?ct=text/plain" if rng.random() < 0.7 else "/echo/x"
        if "ct=" not in path:
            rcoding = None  # application/octet-stream is not compressed
        chunks = None
        if mode < 0.35:
            step = rng.choice([333, 4096, 65536])
            chunks = [data[i:i + step] for i in range(0, len(data), step)]
            r = cl.request("POST", path, hdrs, chunks=chunks)
        else:
            r = cl.request("POST", path, hdrs, body=data)
        sha = hashlib.sha256(plain).hexdigest()

        def check():
            n = check_body(r, rcoding if len(plain) >= 256 or "ct=" not in path else None,
                           plain, ce_any=(len(plain) < 256 and "ct=" in path),
                           vary=None if "ct=" not in path else True)
            if r.get("x-mctest-sha256") != sha or r.get("x-mctest-request-ce") != "-":
                raise CheckFailed(f"echo headers {r.headers}")
            return n
        return r, check, ("POST", path, hdrs + [("X-Body", f"{name} {coding} "
                                                 f"{'chunked' if chunks else 'length'}")])

    def k_postbad(self, cl: Client, rng: random.Random):
        name, coding, data, status = rng.choice(self.bad_bodies)
        hdrs = [("Content-Encoding", coding)]
        path = "/echo-lim/x?mode=sum"
        cl.last = ("POST", path, hdrs, name)
        c = Client(cl.port)
        c.connect()
        try:
            head = build_request("POST", path, hdrs, len(data), close=True)
            try:
                c.sock.sendall(head + data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # answered before it read everything
            st, h, wire, _ = read_head(c.rf)
            body, bw, _ = read_body(c.rf, "POST", st, h)
            r = Resp(st, h, body, wire + bw)
        finally:
            c.close()

        def check():
            if r.status != status:
                raise CheckFailed(f"{name}: status {r.status}, expected {status}")
            return 0
        return r, check, ("POST", path, hdrs + [("X-Body", name)])

    def primers(self, rng: random.Random) -> list[tuple[str, object]]:
        """The heaviest requests: every client sends them at the start of the warm-up, all at
        once, so the server's memory high-water marks (allocators, thread stacks, the cache)
        are reached before the RSS baseline rather than at a random moment later."""
        compressing = [a for a in AE_ALL if a[1] is not None and a[0] is not None]

        def big_doc(cl: Client, rng: random.Random):
            name = rng.choice(list(BIG_DOCS))
            prefix = rng.choice(["/d/", "/f/", "/c/"])
            ae, coding = rng.choice(compressing)
            path = prefix + name
            r = cl.request("GET", path, self.ae_headers(ae))
            return r, lambda: check_body(r, coding, self.docs[name]), ("GET", path, ae)

        def big_shape(cl: Client, rng: random.Random):
            ae, coding = rng.choice(compressing)
            path = "/shapes/x?shape=big&mb=4&ct=text/plain"
            r = cl.request("GET", path, self.ae_headers(ae))
            return r, lambda: check_body(r, coding, self.mct[:4 * MIB]), ("GET", path, ae)

        def big_post(cl: Client, rng: random.Random):
            name, plain, enc = next(b for b in self.post_bodies if b[0] == "mct1m")
            coding = rng.choice(("gzip", "br", "zstd"))
            ae, rcoding = rng.choice(compressing)
            hdrs = [("Content-Encoding", coding)] + self.ae_headers(ae)
            if POST_CLOSE:
                hdrs.append(("Connection", "close"))
            path = "/echo/x?ct=text/plain"
            r = cl.request("POST", path, hdrs, body=enc[coding])
            return r, lambda: check_body(r, rcoding, plain), ("POST", path, hdrs)

        out = [("static", big_doc), ("shapes", big_shape), ("post", big_post)]
        rng.shuffle(out)
        return out

    def k_abort(self, cl: Client, rng: random.Random):
        """A client that goes away: after a few KB of a large response, or halfway through
        its request body. Not a completed response: what was read must decode to a prefix."""
        c = Client(cl.port)
        c.connect()
        ae, coding = rng.choice([a for a in AE_ALL_WEIGHTED if a[1] is not None] + [(None, None)])
        reset = rng.random() < 0.5
        try:
            form = rng.random()
            if form < 0.15:
                name, plain, enc = rng.choice(self.post_bodies[4:])
                cl.last = ("POST-abort", "/echo/x", [], name)
                data = enc["gzip"]
                c.sock.sendall(build_request("POST", "/echo/x", [("Content-Encoding", "gzip")],
                                             len(data)) + data[:len(data) // 2])
                time.sleep(0.001)
                return None, None, ("POST-abort", "/echo/x", [])
            if form < 0.55:
                name = rng.choice(list(BIG_DOCS))
                path, expected = rng.choice(["/d/", "/f/", "/c/"]) + name, self.docs[name]
            elif form < 0.9:
                mb = rng.choice([1, 2, 4])
                path, expected = f"/shapes/x?shape=big&mb={mb}&ct=text/plain", self.mct[:mb * MIB]
            else:
                path, expected = "/cgi/stream.sh?5_0.05_t", stream_cgi_body(5)
            cl.last = ("GET-abort", path, self.ae_headers(ae), "")
            c.sock.sendall(build_request("GET", path, self.ae_headers(ae)))
            st, h, wire, _ = read_head(c.rf)
            want = rng.choice([1, 2048, 4096, 16384])
            got = b""
            while len(got) < want:
                piece = c.rf.read1(want - len(got))
                if not piece:
                    break
                got += piece
            if st != 200:
                raise CheckFailed(f"abort {path}: status {st}")
            ce = next((v.lower() for k, v in h if k == "content-encoding"), None)
            if ce != coding:
                raise CheckFailed(f"abort {path}: Content-Encoding {ce!r}, expected {coding!r}")
            te = next((v.lower() for k, v in h if k == "transfer-encoding"), "")
            if "chunked" in te:
                got = dechunk_prefix(got)
            try:
                prefix = StreamDecoder(ce).feed(got)
            except DecodeError as e:
                raise CheckFailed(f"abort {path}: prefix does not decode: {e}")
            if not expected.startswith(prefix):
                raise CheckFailed(f"abort {path}: decoded prefix differs at "
                                  f"{first_diff(prefix, expected)}")
            return None, None, ("GET-abort", path, self.ae_headers(ae))
        finally:
            c.close(reset=reset)

    def k_badae(self, cl: Client, rng: random.Random):
        form = rng.random()
        status = 200
        if form < 0.35:  # random bytes: VCHAR, SP, HTAB and obs-text
            alphabet = bytes([9, *range(32, 127), *range(128, 256)])
            n = rng.choice([1, 5, 40, 300, 2000])
            val = bytes(rng.choice(alphabet) for _ in range(n)).strip(b" \t")
            ae = [val or b"x"]
        elif form < 0.55:  # weird q-values
            toks = []
            for _ in range(rng.randrange(1, 8)):
                t = rng.choice(["gzip", "br", "zstd", "deflate", "*", "identity", "x-gzip",
                                "GZIP", "bR", "zstd ", "", "compress", "a" * 70])
                q = rng.choice(["", ";q=1", ";q=0", ";q=0.5", ";q=1.0000", ";q=-1", ";q=NaN",
                                ";q=1e3", ";q=.5", ";q=0.", ";Q=0.001", ";q=0.9999",
                                ";q==1", ";;q=0.5", ";q=0.5;q=0", ";q=\"0.5\"", ";q",
                                ";q=99999999999999999999", ";q=0x1", ";q= 0.5", " ;q=1 "])
                toks.append(t + q)
            ae = [rng.choice([", ", ",", " ,  ", ",,"]).join(toks)]
        elif form < 0.7:  # ~8 KB of tokens, under LimitRequestFieldSize
            toks = []
            while sum(len(t) + 2 for t in toks) < 7900:
                toks.append(rng.choice(["gzip", "br", "zstd", "deflate",
                                        "x-%d" % rng.randrange(10**6),
                                        "enc%d;q=0.%d" % (rng.randrange(1000), rng.randrange(10))]))
            ae = [", ".join(toks)[:8000]]
        elif form < 0.8:  # many header lines
            ae = [rng.choice(["gzip", "br;q=0.5", "zstd;q=0", "", "*", ";;", "x"])
                  for _ in range(rng.randrange(2, 40))]
        elif form < 0.88:  # over LimitRequestFieldSize (8190): httpd answers 400 itself
            ae = ["gzip, " + "a" * 9000]
            status = 400
        else:  # NUL/CTL in the value: httpd rejects it (400) or the module ignores it
            ae = [b"gzip\x01br\x7f" + bytes([rng.randrange(1, 32)]) + b"zstd"]
            status = -1
        name = rng.choice(["page.html", "style.css", "small.html", "tiny.html"])
        prefix = rng.choice(["/s/", "/d/"])
        path = prefix + name
        hdrs = self.ae_headers(ae)
        r = cl.request("GET", path, hdrs)

        def check():
            if status == 400 or (status == -1 and r.status == 400):
                if r.status != 400:
                    raise CheckFailed(f"status {r.status}, expected 400 for an oversized header")
                return 0
            return check_body(r, None, self.docs[name], ce_any=True)
        return r, check, ("GET", path, [(k, v if isinstance(v, str) else repr(v)) for k, v in hdrs])


KINDS = {  # kind: weight (per 1000 requests)
    "static": 420, "shapes": 180, "head": 60, "range": 60, "cond": 70, "post": 80,
    "postbad": 6, "badae": 100, "abort": 20, "cgi": 4,
}
