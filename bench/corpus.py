# SPDX-License-Identifier: Apache-2.0
"""The benchmark corpus: real files nobody here wrote, taken at bench time from Debian and npm
packages, plus 100 KB of random lowercase letters from a fixed seed. Each file is recorded with
its origin, size and SHA-256."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile


@dataclasses.dataclass(frozen=True)
class Source:
    name: str           # file name served by every server (the extension picks the media type)
    kind: str           # "debian", "npm" or "generated"
    package: str        # Debian package, npm "name@version", or "" for generated
    path: str           # path inside the Debian package or the npm tarball
    note: str           # what it stands for


# npm versions are pinned so the SHA-256 stays the same from run to run.
SOURCES = [
    Source("manual.html", "debian", "python3-dev", "/usr/share/doc/python3/python-policy.html",
           "mid-size HTML manual page (~88 KB)"),
    Source("small.html", "debian", "valgrind", "/usr/share/doc/valgrind/html/licenses.html",
           "small HTML page (~2.5 KB)"),
    Source("jquery.min.js", "npm", "jquery@3.7.1", "package/dist/jquery.min.js",
           "minified JavaScript"),
    Source("bootstrap.min.css", "npm", "bootstrap@5.3.3", "package/dist/css/bootstrap.min.css",
           "minified CSS"),
    Source("font-awesome.min.css", "npm", "font-awesome@4.7.0", "package/css/font-awesome.min.css",
           "mid-size minified CSS (~31 KB)"),
    Source("react-dom.development.js", "npm", "react-dom@18.3.1",
           "package/umd/react-dom.development.js", "large unminified JavaScript (~1 MB)"),
    Source("db.json", "npm", "mime-db@1.52.0", "package/db.json", "JSON"),
    Source("apache_pb.svg", "debian", "apache2-data", "/usr/share/apache2/icons/apache_pb.svg",
           "large SVG"),
    Source("letters.txt", "generated", "", "", "100 KiB of random lowercase letters (seed 20240505)"),
]

LETTERS_SIZE = 100 * 1024
LETTERS_SEED = 20240505


def random_letters(n: int, seed: int) -> bytes:
    """The same 64-bit LCG as bench_encoders.cc, so both see the same bytes on any Python."""
    x = seed
    out = bytearray(n)
    mask = (1 << 64) - 1
    for i in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & mask
        out[i] = 97 + ((x >> 33) % 26)
    return bytes(out)


def _dpkg_version(pkg: str) -> str:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "?"


def _npm_pack(specs: list[str], dest: str) -> dict[str, dict]:
    """Runs `npm pack` for the pinned specs; returns {spec: npm's JSON record}."""
    r = subprocess.run(["npm", "pack", "--json", "--pack-destination", dest, *specs],
                       cwd=dest, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"npm pack failed: {r.stderr.strip()[-2000:]}")
    records = json.loads(r.stdout)
    out = {}
    for spec, rec in zip(specs, records):
        out[spec] = rec
    return out


def fetch(dest_dir: str) -> list[dict]:
    """Puts every corpus file into dest_dir; returns one record per file."""
    os.makedirs(dest_dir, exist_ok=True)
    records = []
    npm_specs = [s.package for s in SOURCES if s.kind == "npm"]
    with tempfile.TemporaryDirectory(prefix="mc-bench-npm-") as tmp:
        packed = _npm_pack(npm_specs, tmp) if npm_specs else {}
        for src in SOURCES:
            target = os.path.join(dest_dir, src.name)
            if src.kind == "debian":
                if not os.path.isfile(src.path):
                    raise RuntimeError(f"{src.path} is missing (Debian package {src.package}; "
                                       "is /usr/share/doc excluded by dpkg path-exclude?)")
                shutil.copyfile(src.path, target)
                origin = f"Debian `{src.package}` {_dpkg_version(src.package)}: `{src.path}`"
            elif src.kind == "npm":
                rec = packed[src.package]
                with tarfile.open(os.path.join(tmp, rec["filename"])) as tar:
                    member = tar.extractfile(src.path)
                    if member is None:
                        raise RuntimeError(f"{src.path} not in {rec['filename']}")
                    data = member.read()
                with open(target, "wb") as f:
                    f.write(data)
                origin = f"npm `{src.package}` (`npm pack`, {rec['integrity'][:20]}…): `{src.path}`"
            else:
                with open(target, "wb") as f:
                    f.write(random_letters(LETTERS_SIZE, LETTERS_SEED))
                origin = (f"generated: {LETTERS_SIZE} bytes a–z, 64-bit LCG "
                          f"(6364136223846793005, 1442695040888963407), seed {LETTERS_SEED}")
            with open(target, "rb") as f:
                data = f.read()
            records.append({
                "name": src.name,
                "origin": origin,
                "note": src.note,
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            })
    return records


def write_markdown(records: list[dict], path: str) -> None:
    lines = ["# Benchmark corpus", "",
             "Fetched by `bench/run` at bench time; nothing here was written for this project "
             "except the seeded random letters.", "",
             "| file | what | bytes | SHA-256 | origin |", "|---|---|---:|---|---|"]
    for r in records:
        lines.append(f"| `{r['name']}` | {r['note']} | {r['size']} | `{r['sha256']}` | "
                     f"{r['origin']} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
