#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the handwritten seed inputs into corpus/<target>/seed-*.

The text targets take plain text (header values, config lines). fuzz_encoder_roundtrip and
fuzz_decoder read their input through libFuzzer's FuzzedDataProvider, which takes integers from the
end of the input and bytes from the front; `Provider` (seeds_codec.py, with those two targets'
seeds) lays out an input so the target reads exactly the codec, levels, chunks and flushes a seed
names. It mirrors FuzzedDataProvider.h of LLVM 14 and the order of Consume* calls in those two
targets: change them together. Reference streams for fuzz_decoder come from python's zlib and
the brotli and zstd command-line tools.

Usage: tests/fuzz/make_seeds.py   (rewrites the seed-* files; minimized fuzz finds are kept)
"""
import gzip
import hashlib
import hmac
import pathlib
import random
import zlib

from seeds_codec import Provider, decoder_seeds, roundtrip_seeds

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
