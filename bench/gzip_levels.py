#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""libdeflate's level N against zlib's level N: bytes and CPU on the text files of this machine.

The whole-body path compresses gzip level N with libdeflate's level N (mod_multicompress/core/
src/oneshot.cc); mod_deflate and nginx use zlib's N. This script shows how the two compare, file
by file, on every distinct text file of the machine between 30 KB and 2 MB (JavaScript, CSS,
HTML, JSON, SVG, text and Python under /usr/share/javascript, /usr/share/doc and /usr/lib/python3;
so the set depends on what is installed), for each zlib level against libdeflate's same level and
the next two: on how many files libdeflate sends more bytes, the largest such ratio, the total
bytes and the total CPU time (one thread, one call per file; libdeflate through ctypes, zlib
through Python's zlib module, which is Debian's zlib, window 15, memLevel 8 as mod_deflate).

    /usr/bin/python3 bench/gzip_levels.py [--levels 1-9] [--out bench/results/gzip_levels.md]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import statistics
import time
import zlib

ROOTS = ("/usr/share/javascript", "/usr/share/doc", "/usr/lib/python3")
SUFFIXES = (".js", ".css", ".html", ".json", ".svg", ".txt", ".py")
MIN_SIZE, MAX_SIZE = 30 * 1024, 2 * 1024 * 1024


def text_files() -> list[tuple[str, bytes]]:
    seen: set[bytes] = set()
    found = []
    for root in ROOTS:
        for top, _, names in os.walk(root):
            for name in sorted(names):
                path = os.path.join(top, name)
                if not name.endswith(SUFFIXES) or not os.path.isfile(path):
                    continue
                if not MIN_SIZE <= os.path.getsize(path) <= MAX_SIZE:
                    continue
                with open(path, "rb") as f:
                    data = f.read()
                digest = hashlib.sha256(data).digest()
                if digest not in seen:
                    seen.add(digest)
                    found.append((path, data))
    return found


class Libdeflate:
    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libdeflate.so.0")
        self.lib.libdeflate_alloc_compressor.restype = ctypes.c_void_p
        self.lib.libdeflate_alloc_compressor.argtypes = [ctypes.c_int]
        self.lib.libdeflate_gzip_compress.restype = ctypes.c_size_t
        self.lib.libdeflate_gzip_compress.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        self.compressors = {n: self.lib.libdeflate_alloc_compressor(n) for n in range(1, 13)}

    def gzip(self, data: bytes, level: int) -> tuple[int, float]:
        out = ctypes.create_string_buffer(len(data) + 1024)
        t = time.perf_counter()
        n = self.lib.libdeflate_gzip_compress(self.compressors[level], data, len(data), out,
                                              len(out))
        return n, time.perf_counter() - t


def zlib_gzip(data: bytes, level: int) -> tuple[int, float]:
    t = time.perf_counter()
    c = zlib.compressobj(level, zlib.DEFLATED, 31, 8)
    n = len(c.compress(data)) + len(c.flush())
    return n, time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="1-9", help="zlib levels, e.g. 6 or 1-9")
    ap.add_argument("--out", help="also write the table here")
    args = ap.parse_args()
    lo, _, hi = args.levels.partition("-")
    levels = range(int(lo), int(hi or lo) + 1)
    files = text_files()
    ld = Libdeflate()
    lines = [f"`bench/gzip_levels.py --levels {args.levels}`: {len(files)} distinct text files "
             f"of {MIN_SIZE // 1024} KB–{MAX_SIZE // 1024 // 1024} MB under {', '.join(ROOTS)}; "
             "per libdeflate level: files where it sends more bytes than zlib at the zlib level "
             "(median and largest ratio over all files), total bytes and total CPU time × zlib's.",
             "", "| zlib level | libdeflate level | files with more bytes | median | largest | "
             "total bytes | CPU time |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for z in levels:
        zsizes, ztime = [], 0.0
        for _, data in files:
            n, t = zlib_gzip(data, z)
            zsizes.append(n)
            ztime += t
        for level in (z, z + 1, z + 2):
            if level > 12:
                continue
            ratios, total, spent = [], 0, 0.0
            for (_, data), zn in zip(files, zsizes):
                n, t = ld.gzip(data, level)
                ratios.append(n / zn)
                total += n
                spent += t
            worse = sum(1 for r in ratios if r > 1.0)
            lines.append(f"| {z} | {level} | {worse}/{len(files)} "
                         f"| {statistics.median(ratios):.4f} | {max(ratios):.4f} "
                         f"| {total / sum(zsizes):.4f} | {spent / ztime:.2f} |")
        print("\n".join(lines[-3:]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
