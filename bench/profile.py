# SPDX-License-Identifier: Apache-2.0
"""Where a compressed response's CPU goes: `perf record -g` of mod_multicompress's
children under `ab -k`, per file and coding, self time grouped by library.

Starts bench/servers.py's Apache (event MPM, 4 children x 80 threads, the module from
--module, one port per coding-level) on a docroot with the test documents, warms it up,
then per (file, coding-level): `perf record -e cpu-clock -g -p <children>` while
`ab -k -n N -c C -H 'Accept-Encoding: <coding>'` runs; the server's CPU seconds (utime+stime of
its processes) over the run give the microseconds per response, and perf's self samples split
them by shared object. cpu-clock (a software clock, 4 kHz) because the VM has no hardware
counters. Writes <out>/profile.md and profile.json.

    /usr/bin/python3 bench/profile.py [--module build/release/.../mod_multicompress.so]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import servers  # noqa: E402

STATIC = ROOT / "tests" / "integration" / "htdocs" / "static"

GROUPS = [  # (group, regex on the shared object's name), first match wins
    ("libbrotlienc", r"libbrotlienc"),
    ("libbrotlicommon", r"libbrotlicommon"),
    ("libz", r"^libz\.so"),
    ("libdeflate", r"libdeflate"),
    ("libzstd", r"libzstd"),
    ("mod_multicompress", r"mod_multicompress"),
    ("libapr / libaprutil", r"libapr"),
    ("httpd (apache2 + mods)", r"^apache2$|^mod_"),
    ("libc", r"^libc\.so|^libc-|^ld-linux"),
    ("libstdc++", r"libstdc\+\+"),
    ("kernel", r"kernel|vmlinux|^\[k"),
]


def group_of(dso: str) -> str:
    for g, rx in GROUPS:
        if re.search(rx, dso):
            return g
    return "other: " + dso


def perf_report(data: Path) -> tuple[dict[str, float], list[tuple[float, str, str]]]:
    out = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children",
                          "--sort", "dso,sym", "-g", "none", "--percent-limit", "0"],
                         capture_output=True, text=True, check=True).stdout
    groups: dict[str, float] = defaultdict(float)
    syms = []
    for line in out.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+(\S+)\s+\[([.kx])\]\s+(.*)$", line)
        if not m:
            continue
        pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
        if kind == "k" or dso.startswith("[kernel"):
            dso = "kernel"
        groups[group_of(dso)] += pct
        syms.append((pct, dso, sym))
    # perf's rounded per-symbol percentages add up to 97-104 %: shares of what was listed
    total = sum(groups.values()) or 1.0
    return {k: 100.0 * v / total for k, v in groups.items()}, syms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", default=str(ROOT / "build/release/mod_multicompress/httpd/"
                                             "mod_multicompress.so"))
    ap.add_argument("--files", default="style.css,page.html")
    ap.add_argument("--codings", default="br-4,gzip-6,zstd-3")
    ap.add_argument("-n", type=int, default=5000)
    ap.add_argument("-c", type=int, default=8)
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite profile.md from <out>/profile.json (shares renormalised)")
    args = ap.parse_args()
    if args.report_only:
        data = json.loads((Path(args.out) / "profile.json").read_text())
        for r in data["runs"]:
            t = sum(r["groups_pct"].values()) or 1.0
            r["groups_pct"] = {k: round(100.0 * v / t, 2) for k, v in r["groups_pct"].items()}
        (Path(args.out) / "profile.json").write_text(json.dumps(data, indent=1))
        write_md(argparse.Namespace(**data["args"]), data["runs"], Path(args.out))
        return 0
    codings = [(c.rsplit("-", 1)[0], int(c.rsplit("-", 1)[1])) for c in args.codings.split(",")]
    files = args.files.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="mc-profile-"))
    tmp.chmod(0o755)    # the children run as www-data
    results = []
    srv = None
    try:
        docroot = tmp / "htdocs"
        docroot.mkdir()
        # A name is a test document; a path (e.g. bench/run's corpus) is copied under its name.
        shutil.copy(STATIC / "small.html", docroot / "small.html")
        for f in files:
            shutil.copy(Path(f) if "/" in f else STATIC / f, docroot / Path(f).name)
        files = [Path(f).name for f in files]
        ports = dict(zip(codings, servers.free_ports(len(codings))))
        srv = servers.Apache("multicompress", str(tmp / "srv"), str(docroot), ports,
                             module_path=args.module)
        srv.start()  # stopped in finally, also when start() fails
        kids = [p for p in srv.pids() if p != srv.proc.pid]
        for f in files:
            for coding, level in codings:
                port = ports[(coding, level)]
                url = f"http://127.0.0.1:{port}/{f}"
                ab = ["ab", "-q", "-k", "-n", str(args.n), "-c", str(args.c), "-H",
                      f"Accept-Encoding: {coding}", url]
                subprocess.run(ab[:3] + ["-n", "500"] + ab[5:], capture_output=True, check=True)
                data = tmp / f"perf-{f}-{coding}.data"
                perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000",
                                         "-g", "-o", str(data), "-p", ",".join(map(str, kids))],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                time.sleep(0.5)
                cpu0 = srv.cpu_seconds()
                t0 = time.monotonic()
                abr = subprocess.run(ab, capture_output=True, text=True, check=True).stdout
                wall = time.monotonic() - t0
                cpu = srv.cpu_seconds() - cpu0
                perf.send_signal(2)
                perf.wait(30)
                m = re.search(r"Total transferred:\s+(\d+)", abr)
                fail = int(re.search(r"Failed requests:\s+(\d+)", abr).group(1))
                non2xx = re.search(r"Non-2xx responses:\s+(\d+)", abr)
                groups, syms = perf_report(data)
                us = 1e6 * cpu / args.n
                r = {"file": f, "bytes": (docroot / f).stat().st_size, "coding": coding,
                     "level": level, "requests": args.n, "concurrency": args.c,
                     "failed": fail, "non2xx": int(non2xx.group(1)) if non2xx else 0,
                     "wall_s": round(wall, 2), "req_per_s": round(args.n / wall),
                     "cpu_us_per_req": round(us, 1),
                     "transferred_per_req": int(m.group(1)) // args.n if m else None,
                     "groups_pct": {k: round(v, 2) for k, v in
                                    sorted(groups.items(), key=lambda kv: -kv[1])},
                     "top_symbols": [(round(p, 2), d, s) for p, d, s in syms[:25]]}
                results.append(r)
                print(f"{f} {coding}-{level}: {us:.0f} µs CPU/req, " + ", ".join(
                    f"{k} {v:.1f}%" for k, v in list(r["groups_pct"].items())[:7]), flush=True)
    finally:
        if srv is not None:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out = Path(args.out)
    (out / "profile.json").write_text(json.dumps({"args": vars(args), "runs": results},
                                                 indent=1))
    write_md(args, results, out)
    print(f"wrote {out / 'profile.md'}")
    return 0


def write_md(args, results: list[dict], out: Path) -> None:
    cols = ["libbrotlienc", "libz", "libdeflate", "libzstd", "mod_multicompress",
            "libapr / libaprutil", "httpd (apache2 + mods)", "libc", "libstdc++", "kernel"]
    md = ["# CPU per compressed response: perf, self time by library", "",
          f"`bench/profile.py` ({time.strftime('%Y-%m-%d', time.gmtime())}): bench/servers.py's "
          "Apache with the module (event MPM, 4 × 80 threads), `ab -k -n "
          f"{args.n} -c {args.c} -H 'Accept-Encoding: <coding>'` per file and coding on the "
          "same 2 shared cores, `perf record -e cpu-clock -F 4000 -g -p <children>` during "
          "the run. µs/req = server utime+stime over the run / requests; a column = that "
          "library's share of the self samples (normalised to 100 %) × µs/req (µs per response spent in it). "
          "The compression library's column is its own compression time; everything else is "
          "what a response costs beyond it.", "",
          "| file | coding | req/s | CPU µs/req | " + " | ".join(cols) + " | other |",
          "|---|---|---:|---:|" + "---:|" * (len(cols) + 1)]
    for r in results:
        g = r["groups_pct"]
        other = 100 - sum(g.get(c, 0) for c in cols)
        md.append(f"| `{r['file']}` ({r['bytes']} B) | {r['coding']}-{r['level']} | "
                  f"{r['req_per_s']} | {r['cpu_us_per_req']:.0f} | " +
                  " | ".join(f"{r['cpu_us_per_req'] * g.get(c, 0) / 100:.0f}" for c in cols) +
                  f" | {r['cpu_us_per_req'] * other / 100:.0f} |")
    md += ["", "Top symbols (self %, per run):", ""]
    for r in results:
        md.append(f"- `{r['file']}` {r['coding']}-{r['level']}: " + "; ".join(
            f"{p:.1f}% {s} ({d})" for p, d, s in r["top_symbols"][:8]))
    (out / "profile.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    sys.exit(main())
