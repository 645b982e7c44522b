# SPDX-License-Identifier: Apache-2.0
"""Dictionary compression (RFC 9842 `dcz`): a site dictionary for pages, and deltas between
real releases.

Site (bench/dictionary_site.py): the Apache manual (Debian's apache2-doc, installed if missing),
its distinct pages split in halves; a 64 KiB dictionary trained on one half by
`multicompress-precompress --train-dictionary`, the other half served by Apache with the module:
bytes per coding (identity, gzip-6, br-5, br-11, zstd-3, dcz-3, dcz-19) and server CPU per
response (`h2load`).

Releases (bench/dictionary_releases.py): `npm pack` of pinned versions of jquery, react-dom,
bootstrap and lodash (the minified build); per step (old release = dictionary, new = body) and
level: gzip-6, br-11, zstd-N, `zstd -N --patch-from` (with and without checksum), the module's
live dcz body, the deploy-time delta sidecar of `multicompress-precompress`, libzstd's ways of
using the dictionary, and server CPU of dcz-3 against zstd-3 (`ab`).

Targets: see bench/dictionary_report.py. Writes <out>/dictionary.md, dictionary.json and
dictionary.png.

    /usr/bin/python3 bench/dictionary.py [--quick] [--no-site] [--no-releases] [--no-cpu]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import zstandard

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import dictionary_releases as rel  # noqa: E402
import dictionary_report as report  # noqa: E402
import dictionary_site as site_bench  # noqa: E402


def git_rev() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


def cpu_name() -> str:
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model})"


def zstd_version() -> str:
    import re
    r = subprocess.run(["zstd", "-V"], capture_output=True, text=True)
    m = re.search(r"v(\d+\.\d+\.\d+)", r.stdout + r.stderr)
    return m.group(1) if m else "?"


def run_releases(args, meta: dict, levels: list[int], work: Path, n: int) -> list[dict]:
    corpus = rel.fetch_corpus(work)
    meta["corpus"] = [{"package": p, "version": v, "file": r["path"].name, "size": r["size"],
                       "sha256": r["sha256"], "tarball": r["tarball"]}
                      for (p, v), r in corpus.items()]
    lz = rel._LibZstd()
    meta["libzstd"] = lz.version
    scratch = work / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    rows = []
    for pkg, fname, a, b in rel.steps_of(args.quick):
        step = f"{pkg} {a}→{b}"
        old_p, new_p = corpus[(pkg, a)]["path"], corpus[(pkg, b)]["path"]
        o = rel.offline(old_p, new_p, levels)
        var = {str(lv): rel.variants(lz, old_p.read_bytes(), new_p.read_bytes(), lv,
                                     repeat=7 if lv <= 9 else 1) for lv in levels}
        delta = {str(lv): rel.tool_delta(args.tool, old_p, new_p, lv, scratch) for lv in levels}
        rows.append({"step": step, "package": pkg, "file": fname, "old": a, "new": b,
                     "offline": o, "variants": var, "delta": delta})
        print(f"{step}: br-11 {o['br-11']}, " + ", ".join(
            f"patch-from-{lv} {o[f'patch-from-{lv}']}, delta-{lv} {delta[str(lv)]['bytes']}"
            for lv in levels), flush=True)
    srv = rel.start_server(work, args.module, corpus, levels)
    try:
        srv.start()  # stopped in finally, also when start() fails
        for r in rows:
            old_path = corpus[(r["package"], r["old"])]["path"]
            new_path = corpus[(r["package"], r["new"])]["path"]
            old, new = old_path.read_bytes(), new_path.read_bytes()
            old_url = f"/rel/{r['package']}/{r['old']}/{r['file']}"
            new_url = f"/rel/{r['package']}/{r['new']}/{r['file']}"
            r["server"] = {}
            for lv in levels:
                s = rel.dcz_fetch(srv.ports[("zstd", lv)], old_url, new_url, old, new, old_path,
                                  scratch)
                s["ratio_patch"] = round(
                    s["dcz"] / (r["offline"][f"patch-from-{lv}"] + rel.HEADER_LEN), 4)
                r["server"][str(lv)] = s
                print(f"{r['step']} live dcz-{lv}: {s['dcz']} bytes", flush=True)
            if not args.no_cpu:
                r["cpu"] = rel.cpu_compare(srv, srv.ports[("zstd", rel.CPU_LEVEL)], new_url, old,
                                           n, args.c)
                print(f"{r['step']} CPU: dcz-3/zstd-3 {r['cpu']['ratio']:.3f}", flush=True)
        errs = srv.error_lines()
        if errs:
            meta["notes"].append("error_log: " + " | ".join(e.strip() for e in errs[:5]))
    finally:
        srv.stop()
        if not args.keep:
            shutil.rmtree(srv.tmp, ignore_errors=True)  # type: ignore[attr-defined]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=str(ROOT / "build" / "bench-dict"),
                    help="cache of npm tarballs, the training copy, the servers' temp dirs")
    ap.add_argument("--module", default=str(ROOT / "build/debug/mod_multicompress/httpd/"
                                             "mod_multicompress.so"))
    ap.add_argument("--tool", default=str(ROOT / "build/debug/mod_multicompress/tools/"
                                           "multicompress-precompress"))
    ap.add_argument("--quick", action="store_true", help="the latest step per package, fewer "
                    "requests, one round of the site")
    ap.add_argument("-n", type=int, default=None, help="requests per ab run (2000; quick 300)")
    ap.add_argument("-c", type=int, default=4, help="ab concurrency")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU runs")
    ap.add_argument("--no-site", action="store_true", help="skip the Apache manual")
    ap.add_argument("--no-releases", action="store_true", help="skip the npm releases")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--keep", action="store_true", help="keep the servers' temp dirs")
    args = ap.parse_args()
    n = args.n or (300 if args.quick else 2000)
    levels = [3, 19]
    work = Path(args.work).resolve()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    for what, path in (("module", args.module), ("precompress tool", args.tool)):
        if not os.path.isfile(path):
            raise SystemExit(f"dictionary.py: no {what} at {path} (build it first)")

    meta = {"command": " ".join(["bench/dictionary.py", *sys.argv[1:]]),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg()), "cpus": cpu_name(),
            "rev": git_rev(), "n": n, "c": args.c, "levels": levels,
            "zstd_cli": zstd_version(), "python_zstandard": zstandard.__version__,
            "corpus": [], "notes": []}
    site = None
    if not args.no_site:
        site = site_bench.run_site(args.tool, args.module, work, not args.no_cpu,
                                   1 if args.quick else 3, args.keep)
        if site.get("error_log"):
            meta["notes"].append("error_log (site): " + " | ".join(site["error_log"]))
    rows = [] if args.no_releases else run_releases(args, meta, levels, work, n)

    meta["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    (out / "dictionary.json").write_text(json.dumps({"meta": meta, "site": site, "rows": rows},
                                                    indent=1, default=str) + "\n")
    report.write_md(meta, site, rows, levels, out)
    report.write_chart(site, rows, levels, out)
    print(f"wrote {out / 'dictionary.md'}, dictionary.json, dictionary.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
