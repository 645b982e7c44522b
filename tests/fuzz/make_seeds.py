#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the handwritten seed inputs into corpus/<target>/seed-*.

The text targets take plain text (header values, config lines). fuzz_encoder_roundtrip and
fuzz_decoder read their input through libFuzzer's FuzzedDataProvider, which takes integers from the
end of the input and bytes from the front; `Provider` below lays out an input so the target reads
exactly the codec, levels, chunks and flushes a seed names. It mirrors FuzzedDataProvider.h of
LLVM 14 and the order of Consume* calls in those two targets: change them together. Reference
streams for fuzz_decoder come from python's zlib and the brotli and zstd command-line tools.

Usage: tests/fuzz/make_seeds.py   (rewrites the seed-* files; minimized fuzz finds are kept)
"""
import gzip
import hashlib
import hmac
import pathlib
import random
import shutil
import subprocess
import zlib

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"

ACCEPT_ENCODING = {
    "chrome": b"gzip, deflate, br, zstd",
    "firefox": b"gzip, deflate, br",
    "curl": b"deflate, gzip, br, zstd",
    "weights": b"br;q=1.0, gzip;q=0.8, *;q=0.1",
    "q0": b"gzip;q=0",
    "q0-dot": b"gzip;q=0., br",
    "q0-000": b"gzip;q=0.000, br;q=0.001",
    "q-too-precise": b"gzip;q=0.0000, br",
    "q-exponent": b"gzip;q=1e-1, br;q=0.5",
    "q-over-one": b"br;q=1.5, gzip;q=1.000",
    "star": b"*",
    "star-q0": b"*;q=0, gzip",
    "identity-q0": b"identity;q=0",
    "identity-preferred": b"identity;q=1, gzip;q=0.5",
    "case": b"GZIP, Br;Q=0.5, ZsTd;q=0.25",
    "x-gzip": b"x-gzip",
    "duplicate": b"gzip, br, gzip;q=0",
    "tie": b"zstd;q=0.999, br;q=0.999, gzip;q=0.999",
    "ows": b" gzip ;\tq=0.5 ,\tbr ; q=0.7 ",
    "params": b"gzip;level=9;q=0.3, br;foo",
    "quoted-q": b'br;q="0.5", gzip',
    "empty-members": b",,, ,gzip,,",
    "empty": b"",
    "garbage": b"\xff\xfegzip\x01;q=\x80, br",
    "unknown": b"compress, exi, pack200-gzip, aes128gcm",
}

CONFIG = {
    "defaults": b"",
    "encodings": b"MultiCompressEncodings zstd br gzip deflate\n",
    "encodings-dup": b"MultiCompressEncodings gzip br GZIP\n",
    "encodings-bad": b"MultiCompressEncodings identity x-gzip compress\n",
    "levels": b"MultiCompressLevel gzip 9\nMultiCompressLevel br 11\nMultiCompressLevel zstd 19\n",
    "levels-bad": b"MultiCompressLevel gzip 0\nMultiCompressLevel br 12\nMultiCompressLevel zstd -1\n"
                  b"MultiCompressLevel zstd 3x\nMultiCompressLevel zstd 99999999999999999999\n",
    "windows": b"MultiCompressWindow gzip 9\nMultiCompressWindow br 24\nMultiCompressWindow zstd 23\n",
    "windows-bad": b"MultiCompressWindow zstd 24\nMultiCompressWindow gzip 16\nMultiCompressWindow br 9\n",
    "sizes": b"MultiCompressMinLength 1k\nMultiCompressBufferSize 64K\nMultiCompressInflateLimit 10M\n",
    "sizes-bad": b"MultiCompressBufferSize 1\nMultiCompressBufferSize 17M\nMultiCompressMinLength 8G8\n"
                 b"MultiCompressInflateLimit 9999999999999G\n",
    "modes": b"MultiCompressAlterETag Remove\nMultiCompressNoTransform Ignore\n"
             b"MultiCompressNote ratio mc_ratio\nMultiCompressNote encoding mc_enc\n",
    "compat": b"DeflateMemLevel 9\nBrotliCompressionMaxInputBlock 16\nMultiCompressInflateRatio 100 5\n",
    "sections": b"MultiCompressEncodings gzip\nMultiCompressLevel gzip 1\n---\n"
                b"MultiCompressLevel br 7\nMultiCompressAlterETag NoChange\n---\n"
                b"MultiCompressEncodings br zstd\nMultiCompressWindow deflate 12\n",
    "raw-int": b"int 1 9 5\nint -9223372036854775808 9223372036854775807 9223372036854775808\n"
               b"int 5 1 3\nint 0 0 00000000000000000000000000\n",
    "raw-size": b"size 1024 16777216 16M\nsize 0 9223372036854775807 8589934591G\nsize 0 10 k\n",
    "raw-tune": b"tune gzip 6 15 8 0 300\ntune zstd 19 0 0 0 -1\ntune br 11 24 0 24 9223372036854775807\n"
                b"tune deflate -5 100 -3 -7 0\ntune zstd 3 0 0 0 8388609\n",
}

HEADERS = {
    "strong": b'"abc"',
    "weak": b'W/"abc"',
    "suffixed": b'"abc-gzip"',
    "double-suffixed": b'"abc-br-zstd"',
    "list": b'"a-gzip", W/"b-br", *, "c-zstd", "d-deflate"',
    "star": b"*",
    "empty-tag": b'""',
    "unterminated": b'"abc',
    "not-quoted": b"abc",
    "comma-in-tag": b'"a,b-gzip"',
    # After the NUL: the token to look up, then the ETag mode and the coding (read from the end).
    "cache-control": b"no-transform, max-age=0\x00no-transform\x00\x01",
    "vary": b"Accept-Encoding, User-Agent\x00accept-encoding\x00\x02",
    "vary-param": b"Cookie;foo=bar, accept-encoding=x\x00Accept-Encoding\x00\x03",
    "identity": b"identity, ,identity",
    "encoded": b"gzip, identity",
    "zstd-remove": b'"xyz"\x00\x02\x04',
    "br-nochange": b'W/"xyz"\x00\x01\x03',
    "identity-coding": b'"xyz"\x00\x00\x00',
}


class Provider:
    """Lays out an input for LLVM 14's FuzzedDataProvider: integers are read from the end."""

    def __init__(self):
        self.tail = []  # bytes in the order the provider consumes them
        self.front = b""

    def integral(self, lo, hi, value, type_bits=64):
        assert lo <= value <= hi
        rng = hi - lo
        nbytes = 0
        while nbytes * 8 < type_bits and (rng >> (nbytes * 8)) > 0:
            nbytes += 1
        v = value - lo
        self.tail += [(v >> (8 * (nbytes - 1 - i))) & 0xFF for i in range(nbytes)]

    def boolean(self, value):
        self.tail.append(1 if value else 0)

    def pick(self, options, value):
        self.integral(0, len(options) - 1, options.index(value))

    def build(self):
        return self.front + bytes(reversed(self.tail))


EVERY_CODING = ["identity", "gzip", "deflate", "br", "zstd"]


def accept_seed(header, order, allowed, present=True, status=200, body_length=5000, env=(),
                content_type=0, content_encoding=0):
    """An Accept-Encoding value plus the control bytes of fuzz_accept_encoding.cc."""
    p = Provider()
    p.integral(0, 6, len(order))
    for c in order:
        p.pick(EVERY_CODING, c)
    p.integral(0, 255, sum(1 << EVERY_CODING.index(c) for c in allowed))
    p.boolean(present)
    p.pick([100, 200, 203, 204, 206, 304, 404, 500], status)
    for flag in ("content_range", "range"):
        p.boolean(flag in env)
    p.integral(-1, 100000, body_length)
    for flag in ("no-gzip", "no-brotli", "no-zstd", "gzip-only-text/html", "force-gzip"):
        p.boolean(flag in env)
    p.integral(0, 3, content_type)
    p.integral(0, 3, content_encoding)
    return header + b"\x00" + p.build()


def accept_seeds():
    seeds = dict(ACCEPT_ENCODING)
    seeds["control-br-gzip"] = accept_seed(b"gzip, br;q=0.9", ["br", "gzip"], ["gzip", "br"])
    seeds["control-no-brotli"] = accept_seed(b"br, gzip;q=0.5", ["br", "zstd", "gzip"],
                                             ["gzip", "br", "zstd"], env=("no-brotli",))
    seeds["control-force-gzip"] = accept_seed(b"identity", ["zstd"], ["gzip", "zstd"],
                                              env=("force-gzip",))
    seeds["control-absent"] = accept_seed(b"gzip", ["gzip"], ["gzip"], present=False)
    seeds["control-304"] = accept_seed(b"gzip", ["gzip"], ["gzip"], status=304)
    seeds["control-short"] = accept_seed(b"gzip", ["gzip"], ["gzip"], body_length=10)
    seeds["control-html-only"] = accept_seed(b"br, gzip", ["identity", "br", "gzip", "br"],
                                             ["gzip", "br", "identity"],
                                             env=("gzip-only-text/html",), content_type=1)
    seeds["control-encoded"] = accept_seed(b"gzip", ["gzip"], ["gzip"], content_encoding=2)
    return seeds


CODINGS = ["gzip", "deflate", "br", "zstd"]
HINTS = ["none", "exact", "guess"]
CHUNKS = [1, 7, 64, 4096, 16384, 65536]
SINKS = ["string", "checking", "varying"]
LEVELS = {"gzip": (1, 9), "deflate": (1, 9), "br": (0, 11), "zstd": (1, 19)}
WINDOWS = {"gzip": (9, 15), "deflate": (9, 15), "br": (10, 24), "zstd": (10, 23)}
MAX_BODY = 64 * 1024
TINY = 2048


def roundtrip_seed(coding, body, level, window=0, mem_level=0, lgblock=0, hint="none",
                   guess=0, one_shot=False, sink_chunk=16384, sink="string", writes=()):
    """writes: (length, flush) pairs with flush in {"none", "sync"}; the rest goes with finish.
    sink: "string" (mc::StringSink), "checking" or "varying" (CheckingSink, fixed or varying)."""
    # The encoding depends on the input length (tiny or not; the body size range), so lay out
    # twice: once to learn the length, once for real.
    size = None
    for _ in range(3):
        p = Provider()
        tiny = size is not None and size <= TINY
        p.pick(CODINGS, coding)
        p.pick(HINTS, hint)
        lo, hi = LEVELS[coding]
        exact = hint == "exact"
        # "rare" unlocks the slow levels without an exact size (see fuzz_encoder_roundtrip.cc).
        rare = not exact and ((coding == "br" and level > 9) or (coding == "zstd" and level > 6))
        p.integral(0, 7, 0 if rare else 1, type_bits=32)
        if coding == "br":
            hi = 11 if tiny and (exact or rare) else 9
        elif coding == "zstd":
            hi = (19 if tiny else 12) if exact else (9 if rare else 6)
        p.integral(lo, hi, min(level, hi), type_bits=32)
        p.boolean(window == 0)
        if window != 0:
            wlo, whi = WINDOWS[coding]
            p.integral(wlo - 2, whi + 2, window, type_bits=32)
        p.integral(0, 10, mem_level, type_bits=32)
        p.boolean(lgblock == 0)
        if lgblock != 0:
            p.integral(15, 25, lgblock, type_bits=32)
        p.integral(0, 7, 0 if one_shot else 1, type_bits=32)
        p.boolean(sink_chunk in CHUNKS)
        if sink_chunk in CHUNKS:
            p.pick(CHUNKS, sink_chunk)
        else:
            p.integral(1, 100000, sink_chunk)
        p.pick(SINKS, sink)
        # What follows the body size: the guessed hint, then the writes.
        after = Provider()
        if hint == "guess":
            after.integral(0, 2 * MAX_BODY, guess)
        pos = 0
        if not one_shot:
            for length, flush in writes:
                after.integral(0, len(body) - pos, length)
                after.pick(["none", "none2", "sync"], "sync" if flush == "sync" else "none")
                pos += length
        # remaining() when the body size is read = body + its own bytes + everything after.
        k = 1
        for _ in range(4):
            rng = min(len(body) + k + len(after.tail), MAX_BODY)
            k_new = max(1, (rng.bit_length() + 7) // 8)
            if k_new == k:
                break
            k = k_new
        p.integral(0, min(len(body) + k + len(after.tail), MAX_BODY), len(body))
        p.front = body
        p.tail += after.tail
        data = p.build()
        if size == len(data):
            return data
        size = len(data)
    return data


def text_body(n, seed=1):
    words = b"<div class=\"item\"><a href=\"/path/to/page\">Compression</a> of the response body" \
            b" with gzip, br and zstd; </div>\n".split(b" ")
    r = random.Random(seed)
    out = bytearray(b"<!DOCTYPE html>\n<html><head><title>seed</title></head><body>\n")
    while len(out) < n:
        out += r.choice(words) + b" "
    return bytes(out[:n])


def random_body(n, seed=2):
    r = random.Random(seed)
    return bytes(r.getrandbits(8) for _ in range(n))


def roundtrip_seeds():
    html = text_body(6000)
    noise = random_body(3000)
    seeds = {
        "gzip-empty": roundtrip_seed("gzip", b"", 6),
        "gzip-1byte": roundtrip_seed("gzip", b"x", 6, hint="exact"),
        "gzip-html-sync": roundtrip_seed("gzip", html, 6, writes=[(100, "sync"), (0, "sync"),
                                                                  (2900, "none"), (1, "sync")]),
        "gzip-w9-mem1": roundtrip_seed("gzip", html, 9, window=9, mem_level=1, sink_chunk=7,
                                       sink="varying",
                                       writes=[(3000, "sync")]),
        # A sink that lends 1 byte at a time, with sync flushes: zlib repeats its flush marker
        # when a flush ends exactly at the end of the output space.
        "gzip-sink1-sync": roundtrip_seed("gzip", html[:2000], 6, sink_chunk=1, sink="checking",
                                          writes=[(100, "sync"), (0, "sync"), (900, "sync")]),
        "deflate-html": roundtrip_seed("deflate", html, 1, hint="guess", guess=100,
                                       writes=[(10, "none"), (10, "sync")]),
        "deflate-oneshot": roundtrip_seed("deflate", noise, 9, one_shot=True, hint="exact"),
        "br-html-sync": roundtrip_seed("br", html, 5, writes=[(1, "sync"), (4000, "sync")]),
        "br-w24-block": roundtrip_seed("br", html, 9, window=24, lgblock=16, sink_chunk=1,
                                       writes=[(500, "sync")]),
        "br-q0-noise": roundtrip_seed("br", noise, 0, sink_chunk=64, sink="varying",
                                      writes=[(1500, "sync")]),
        "br-q11-tiny": roundtrip_seed("br", html[:200], 11, hint="exact"),
        "br-empty-sync": roundtrip_seed("br", b"", 4, writes=[(0, "sync"), (0, "sync")]),
        "zstd-html-sync": roundtrip_seed("zstd", html, 3, sink_chunk=4096, sink="varying", writes=[(1000, "sync"), (1000, "none"),
                                                                  (0, "sync")]),
        "zstd-exact": roundtrip_seed("zstd", html, 12, hint="exact", sink_chunk=4096,
                                     writes=[(5999, "sync")]),
        "zstd-w10": roundtrip_seed("zstd", noise, 1, window=10, sink_chunk=1, sink="checking",
                                   writes=[(2000, "sync")]),
        "zstd-19-tiny": roundtrip_seed("zstd", html[:300], 19, hint="exact"),
        "zstd-9-stream": roundtrip_seed("zstd", html[:1500], 9, writes=[(700, "sync")]),
        "zstd-6-guess": roundtrip_seed("zstd", html[:1000], 6, hint="guess", guess=50,
                                        writes=[(10, "sync")]),
        # The decoder side of the harness once failed on repeated empty flushes (libzstd: "no
        # progress"); keep the shape.
        "zstd-empty-syncs": roundtrip_seed("zstd", b"", 1, writes=[(0, "sync")] * 12),
        "zstd-oneshot-empty": roundtrip_seed("zstd", b"", 3, one_shot=True, hint="exact"),
    }
    return seeds


KINDS = ["raw", "valid", "damaged", "truncated", "trailing", "members"]


def external_compress(coding, data):
    """A stream made by the reference tools (python zlib, the brotli and zstd CLIs)."""
    if coding == "deflate":
        return zlib.compress(data, 6)
    if coding == "gzip":
        c = zlib.compressobj(6, zlib.DEFLATED, 16 + 15)
        return c.compress(data) + c.flush()
    tool = {"br": ["brotli", "-c", "-q", "5"], "zstd": ["zstd", "-c", "-q", "-3"]}[coding]
    if shutil.which(tool[0]) is None:
        return None
    return subprocess.run(tool, input=data, stdout=subprocess.PIPE, check=True).stdout


def decoder_seed(coding, kind, unit, repeat=1, max_output=0, ratio=0, burst=3, sink_chunk=16384,
                 varying=False, writes=(), trailing=b"\x00", members=(), last_skippable=None):
    """Lays out an input for fuzz_decoder.cc. `writes` (piece lengths) only for kind "raw",
    where the stream is `unit` itself; the other kinds feed their stream in one piece. For kind
    "members": `members` is a list of (skippable payload or None before it, body bytes; the last
    member takes the rest), `last_skippable` a payload after them (skippable frames: zstd only);
    the stream is not cut."""
    p = Provider()
    p.pick(CODINGS, coding)
    p.boolean(max_output == 0)
    if max_output:
        p.integral(1, 2 * 1024 * 1024, max_output)
    p.boolean(ratio == 0)
    if ratio:
        p.integral(1, 1000, ratio, type_bits=32)
    p.integral(0, 5, burst, type_bits=32)
    p.integral(1, 100000, sink_chunk)
    p.boolean(varying)
    p.pick(KINDS, kind)
    p.integral(1, 1024, repeat)
    after = Provider()
    front_after = b""
    if kind == "trailing":
        after.integral(0, 255, trailing[0])
        after.integral(0, 16, len(trailing) - 1)
        front_after = trailing[1:]
    if kind == "members":
        body_len = len(unit) * (min(repeat, (1 << 20) // len(unit)) if unit else 1)
        after.integral(1, 4, len(members))

        def skippable(payload):
            nonlocal front_after
            if coding != "zstd":
                assert payload is None
                return
            after.boolean(payload is not None)
            if payload is not None:
                after.integral(0, 255, 7, type_bits=8)
                after.integral(0, 64, len(payload))
                front_after += payload

        done = 0
        for i, (sk, length) in enumerate(members):
            skippable(sk)
            if i + 1 < len(members):
                after.integral(0, body_len - done, length)
                done += length
        skippable(last_skippable)
        after.boolean(False)  # not cut
    pos = 0
    for length in writes:
        assert kind == "raw"
        after.integral(0, len(unit) - pos, length)
        pos += length
    k = 1
    for _ in range(4):
        rng = min(len(unit) + len(front_after) + k + len(after.tail), 16 * 1024)
        k_new = max(1, (rng.bit_length() + 7) // 8)
        if k_new == k:
            break
        k = k_new
    p.integral(0, min(len(unit) + len(front_after) + k + len(after.tail), 16 * 1024), len(unit))
    p.front = unit + front_after
    p.tail += after.tail
    return p.build()


def decoder_seeds():
    html = text_body(3000, seed=3)
    seeds = {
        "gzip-valid": decoder_seed("gzip", "valid", html),
        "deflate-valid-small-sink": decoder_seed("deflate", "valid", html, sink_chunk=1,
                                                 varying=True),
        "br-valid-limit": decoder_seed("br", "valid", html, repeat=100, max_output=100000),
        "zstd-valid-ratio": decoder_seed("zstd", "valid", b"a" * 64, repeat=1024, ratio=20,
                                         burst=0),
        "gzip-bomb-ratio": decoder_seed("gzip", "valid", b"\x00" * 1024, repeat=1024, ratio=200),
        "zstd-trailing": decoder_seed("zstd", "trailing", html, trailing=b"\x28\xb5\x2f\xfd"),
        "gzip-trailing": decoder_seed("gzip", "trailing", html, trailing=b"\x1f\x8b"),
        "br-truncated-raw": decoder_seed("br", "raw", b"\x1b\x03\x00\xf8"),
        "garbage": decoder_seed("zstd", "raw", b"not compressed at all"),
        # Several gzip members / zstd frames with skippable frames (RFC 1952 2.2, RFC 8878 3.1).
        "gzip-members": decoder_seed("gzip", "members", html, repeat=3,
                                     members=[(None, 1000), (None, 0), (None, 0)]),
        "zstd-frames-skippable": decoder_seed("zstd", "members", html, repeat=2,
                                              members=[(b"meta", 2000), (b"", 0)],
                                              last_skippable=b"end"),
        "zstd-only-skippable": decoder_seed("zstd", "members", b"", members=[(b"x", 0)],
                                            last_skippable=b""),
        "zstd-raw-only-skippable": decoder_seed(
            "zstd", "raw", b"\x50\x2a\x4d\x18\x02\x00\x00\x00hi\x5f\x2a\x4d\x18\x00\x00\x00\x00",
            writes=[3, 0, 9]),
        "br-two-streams": decoder_seed("br", "members", html, members=[(None, 100), (None, 0)]),
        "deflate-two-streams": decoder_seed("deflate", "members", html,
                                            members=[(None, 100), (None, 0)]),
    }
    for coding in CODINGS:
        stream = external_compress(coding, html)
        if stream is None:
            continue
        # Reference streams, fed with runs of empty pieces (zero-length buckets) between bytes.
        writes = [0] * 20 + [1] + [0] * 20 + [min(10, len(stream) - 1)] + [0] * 20
        seeds[f"{coding}-reference-empty-pieces"] = decoder_seed(coding, "raw", stream,
                                                                  writes=writes)
        if coding in ("gzip", "zstd"):
            # Reference streams concatenated (`cat a.gz b.gz`), zstd with a skippable frame
            # between, fed in pieces.
            sep = b"\x5a\x2a\x4d\x18\x03\x00\x00\x00abc" if coding == "zstd" else b""
            both = stream + sep + external_compress(coding, b"second member\n")
            writes = [1, 0, len(stream) - 1, 1, 2, 0, 3]
            seeds[f"{coding}-reference-members"] = decoder_seed(coding, "raw", both,
                                                                writes=writes)
    return seeds


# fuzz_cache_entry: values as found in a store under the target's fixed key (mc/cache_entry.h).
ENTRY_KEY = b"mc2-0123456789abcdef0123456789abcdef01234567"
ENTRY_SECRET = b"fuzz fleet secret"
CODING_NUMBER = {"gzip": 1, "deflate": 2, "br": 3, "zstd": 4}


def cache_entry(coding, body, level=11, key=ENTRY_KEY, size=4096, mtime=1_700_000_000_000_000,
                inode=42, secret=None, crc_fix=None):
    """An entry as mc::encode_entry writes it; crc_fix edits the bytes before the CRC."""
    head = b"MCE" + bytes([1, 1 if secret else 0, CODING_NUMBER.get(coding, coding)
                           if isinstance(coding, str) else coding, level, len(key)])
    head += b"".join(v.to_bytes(8, "little") for v in (len(body), size, mtime, inode))
    out = bytearray(head + key + body)
    if crc_fix:
        crc_fix(out)
    out += zlib.crc32(bytes(out)).to_bytes(4, "little")
    if secret:
        out += hmac.new(secret, bytes(out), hashlib.sha256).digest()
    return bytes(out)


def cache_entry_seeds():
    body = gzip.compress(b"<p>hello</p>" * 40, mtime=0)
    seeds = {f"{c}-intact": cache_entry(c, body) for c in CODING_NUMBER}
    seeds["br-mac"] = cache_entry("br", body, secret=ENTRY_SECRET)
    seeds["zstd-other-secret"] = cache_entry("zstd", body, secret=b"another secret")
    seeds["empty-body"] = cache_entry("gzip", b"", level=1)
    good = cache_entry("br", body)
    seeds["truncated-header"] = good[:20]
    seeds["truncated-body"] = good[:len(good) // 2]
    seeds["trailing"] = good + b"\0" * 7
    flipped = bytearray(good)
    flipped[60] ^= 0x10
    seeds["flipped-body"] = bytes(flipped)
    seeds["other-key"] = cache_entry("br", body, key=b"mc2-" + b"f" * 40)
    seeds["other-inode"] = cache_entry("br", body, inode=43)
    seeds["unknown-coding"] = cache_entry(9, body)
    seeds["identity-coding"] = cache_entry(0, body)
    seeds["version-2"] = b"MCE\x02" + good[4:]
    seeds["old-format"] = b"MC1\x05\x03" + body
    seeds["garbage"] = bytes(random.Random(5).randrange(256) for _ in range(200))
    seeds["empty"] = b""
    return seeds


HASHED_NAMES = {
    "webpack": b"/static/main.3f9a1c2b4d5e6f708192.js",
    "cra-chunk": b"/static/js/main.3f9a1c2b.chunk.js",
    "source-map": b"/static/js/main.3f9a1c2b.js.map",
    "parcel": b"/index.1a2b3c4d.js",
    "vite": b"/assets/index-B_1x-9Zq.js",
    "vite-dash-stem": b"/assets/react-dom-CwQ6TZvk.js",
    "vite-letters": b"/assets/index-BxQzkWpL.css",
    "esbuild": b"/chunk-ABCD2345.js",
    "min-js": b"/assets/app-Cm_2kP9x.min.js",
    "bare": b"app.8e0a4f1b.js",
    "plain-min": b"/js/jquery.min.js",
    "plain-version": b"/js/jquery-3.7.1.min.js",
    "plain-words": b"/js/react-dom.development.js",
    "plain-camel": b"/js/jquery.dataTables.min.js",
    "plain-font": b"/fonts/roboto-v30-latin-700italic.ttf",
    "many-dots": b"/a.b.c.d.e.f.0123abcd.g.h.i.j",
    "many-dashes": b"/a-b-c-d-e-f-g-h-i-j-k-l-abcd1234.js",
    "bad-char": b"/a:b/app.3f9a1c2b.js",
    "delta-sidecar": b"/assets/app.3f9a1c2b.js.dcz-0123456789abcdef",
    "empty": b"",
}


def write(target, seeds):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("seed-*"):
        old.unlink()
    for name, data in seeds.items():
        (d / f"seed-{name}").write_bytes(data)


def main():
    write("fuzz_accept_encoding", accept_seeds())
    write("fuzz_config", CONFIG)
    write("fuzz_headers", HEADERS)
    write("fuzz_encoder_roundtrip", roundtrip_seeds())
    write("fuzz_decoder", decoder_seeds())
    write("fuzz_cache_entry", cache_entry_seeds())
    write("fuzz_hashed_name", HASHED_NAMES)


if __name__ == "__main__":
    main()
