# SPDX-License-Identifier: Apache-2.0
"""Seeds of the codec targets, for make_seeds.py: fuzz_encoder_roundtrip and fuzz_decoder read
their input through libFuzzer's FuzzedDataProvider, which takes integers from the end of the
input and bytes from the front; `Provider` lays out an input so the target reads exactly the
codec, levels, chunks and flushes a seed names (fuzz_accept_encoding's control bytes use it
too). It mirrors FuzzedDataProvider.h of LLVM 14 and the order of Consume* calls in those
targets: change them together. Reference streams for fuzz_decoder come from python's zlib and
the brotli and zstd command-line tools."""
import random
import shutil
import subprocess
import zlib


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
