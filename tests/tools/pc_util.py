# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the tests of multicompress-precompress (tests/tools): running the binary,
the sample tree, decoding sidecars and reading the summary."""
import gzip
import os
import random
import re
import subprocess
from pathlib import Path

import brotli
import pytest
import zstandard

SIDE = {"zstd": ".zst", "br": ".br", "gzip": ".gz"}
MAX_ZSTD_WINDOW = 8 * 1024 * 1024  # RFC 9659

# The sample tree: compressible web files, an image (type not selected), a tiny file (below
# --min-size) and an incompressible file of a selected type.
COMPRESSIBLE = [
    "index.html",
    "css/site.css",
    "js/app.js",
    "js/lib/module.mjs",
    "data/config.json",
    "img/logo.svg",
]
IMAGE = "img/photo.png"
TINY = "tiny.txt"
NOISE = "js/noise.js"


def binary() -> str:
    path = os.environ.get("MC_PRECOMPRESS")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("set MC_PRECOMPRESS to the built multicompress-precompress binary "
                    f"(got {path!r})")
    return path


def run(*args, check_rc=0, prefix=(), **kwargs):
    """Runs the tool with stdout/stderr captured (so stderr is not a terminal)."""
    proc = subprocess.run([*prefix, binary(), *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kwargs)
    if check_rc is not None:
        assert proc.returncode == check_rc, (
            f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def words_text(rng: random.Random, n_bytes: int) -> str:
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(400)]
    out, size = [], 0
    while size < n_bytes:
        line = " ".join(rng.choice(vocab) for _ in range(rng.randint(4, 14)))
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def make_tree(root: Path) -> Path:
    rng = random.Random(6)
    text = lambda n: words_text(rng, n)  # noqa: E731
    files = {
        "index.html": "<!doctype html><html><head><title>t</title></head><body>\n"
                      + "".join(f"<p class=\"c{i % 7}\">{text(120)}</p>\n" for i in range(60))
                      + "</body></html>\n",
        "css/site.css": "".join(f".c{i} {{ color: #{i:06x}; margin: {i % 9}px; }}\n"
                                for i in range(400)),
        "js/app.js": "".join(f"function f{i}(x) {{ return x * {i} + {rng.randint(0, 99)}; }}\n"
                             for i in range(300)),
        "js/lib/module.mjs": "".join(f"export const v{i} = {rng.random()!r};\n"
                                     for i in range(200)),
        "data/config.json": "[" + ",".join(f'{{"id": {i}, "name": "{text(20)}"}}'
                                            for i in range(150)) + "]",
        "img/logo.svg": '<svg xmlns="http://www.w3.org/2000/svg">'
                        + "".join(f'<circle cx="{i}" cy="{i * 2}" r="{i % 5}"/>'
                                  for i in range(200)) + "</svg>",
        TINY: "small\n",
    }
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    (root / IMAGE).write_bytes(b"\x89PNG\r\n\x1a\n" + rng.randbytes(6000))
    (root / NOISE).write_bytes(rng.randbytes(5000))
    return root


def decode(coding: str, data: bytes) -> bytes:
    if coding == "gzip":
        return gzip.decompress(data)
    if coding == "br":
        return brotli.decompress(data)
    # As a browser would: refuse windows over 8 MiB (RFC 9659).
    dctx = zstandard.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW)
    return dctx.decompressobj().decompress(data)


def sidecars(root: Path):
    return sorted(p for p in root.rglob("*") if p.suffix in (".zst", ".br", ".gz"))


def snapshot(root: Path):
    """Inode, mtime and ctime of every file: any rewrite, rename or chmod changes one of them."""
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_ctime_ns)
            for p in root.rglob("*") if p.is_file()}


def parse_summary(stdout: str):
    m = re.search(r"^files: (\d+) scanned, (\d+) selected: (\d+) (?:compressed|to compress), "
                  r"(\d+) fresh, (\d+) not smaller, (\d+) too small, (\d+) failed"
                  r"(?:; (\d+) skipped as SSI)?$", stdout, re.M)
    assert m, f"no summary line in:\n{stdout}"
    keys = ["scanned", "selected", "compressed", "fresh", "not_smaller", "too_small", "failed",
            "ssi"]
    summary = dict(zip(keys, (int(g or 0) for g in m.groups())))
    summary["encodings"] = {}
    for row in re.finditer(r"^(zstd|br|gzip|dcz)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(.+?)\s{2,}(.+?)"
                           r"\s+([\d.]+%|-)$", stdout, re.M):
        summary["encodings"][row.group(1)] = {
            "written": int(row.group(2)), "fresh": int(row.group(3)),
            "not_smaller": int(row.group(4)), "failed": int(row.group(5)),
            "original": row.group(6), "sidecars": row.group(7), "ratio": row.group(8)}
    return summary


def no_temp_files(root: Path):
    return not [p for p in root.rglob(".precompress-*")]
