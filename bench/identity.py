#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What loading the module costs a response it does not compress (the target: identity <= 1.02x
plain Apache), and what AddOutputFilterByType costs, measured side by side.

Four Apaches from bench/servers.py, the same but for: `plain` (no module), `ours`
(mod_multicompress, `AddOutputFilterByType MULTICOMPRESS`), `ours-no-filter` (the module loaded,
its hooks run, no filter attached) and `deflate` (stock mod_deflate attached the same way). Each
gets `ab -k -n N -c 8` of the same file without Accept-Encoding, in rounds of alternating
order; CPU µs/request = the server's utime+stime (/proc) over the run / N; the median of the
rounds is reported (other work on the machine only adds time to single runs).

    /usr/bin/python3 bench/identity.py [--module PATH] [-n N] [--rounds R] [--files a,b]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import servers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "tests" / "integration" / "htdocs" / "static"
DEFAULT_MODULE = ROOT / "build" / "release" / "mod_multicompress" / "httpd" / "mod_multicompress.so"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", default=str(DEFAULT_MODULE))
    ap.add_argument("-n", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--files", default="small.html,page.html")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    module = str(Path(args.module).resolve())
    if not Path(module).exists():
        sys.exit(f"{module} missing: cmake --preset release && cmake --build --preset release "
                 "--target mod_multicompress")
    files = args.files.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="mc-identity-"))
    tmp.chmod(0o755)  # the children run as the server user
    doc = tmp / "htdocs"
    doc.mkdir()
    for f in files:
        shutil.copy(STATIC / f, doc / f)
    variants = {
        "plain": dict(variant="plain"),
        "ours": dict(variant="multicompress", module_path=module),
        "ours-no-filter": dict(variant="plain",
                               extra_conf=[f"LoadModule multicompress_module {module}"]),
        "deflate": dict(variant="deflate"),
    }
    started = {}
    load0 = open("/proc/loadavg").read().split()[:3]
    t0 = time.time()
    runs: dict[str, dict[str, list[float]]] = {name: {f: [] for f in files} for name in variants}
    try:
        for name, kw in variants.items():
            port = servers.free_ports(1)[0]
            s = servers.Apache(kw.pop("variant"), str(tmp / name), str(doc),
                               {("identity", 0): port}, label=name, **kw)
            s.start()  # stopped in finally, also when start() fails
            started[name] = (s, port)
        for f in files:
            for rnd in range(args.rounds):
                order = list(started) if rnd % 2 == 0 else list(reversed(list(started)))
                for name in order:
                    s, port = started[name]
                    url = f"http://127.0.0.1:{port}/{f}"
                    subprocess.run(["ab", "-q", "-k", "-n", "500", "-c", "8", url],
                                   capture_output=True, check=True, timeout=120)
                    c0 = s.cpu_seconds()
                    subprocess.run(["ab", "-q", "-k", "-n", str(args.n), "-c", "8", url],
                                   capture_output=True, check=True, timeout=600)
                    runs[name][f].append(1e6 * (s.cpu_seconds() - c0) / args.n)
    finally:
        for s, _ in started.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    load1 = open("/proc/loadavg").read().split()[:3]
    md = ["# An uncompressed response with the module loaded", "",
          f"`bench/identity.py -n {args.n} --rounds {args.rounds}` on "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t0))}, load average "
          f"{' '.join(load0)} at the start, {' '.join(load1)} at the end. Four Apaches "
          "(bench/servers.py: event MPM in Debian's sizing, 2 × 25 threads, EnableSendfile "
          "Off), the same but for the module: `plain`, "
          "`ours` (`AddOutputFilterByType MULTICOMPRESS`, the filter decides identity: no "
          "Accept-Encoding), `ours-no-filter` (module loaded, no filter attached), `deflate` "
          "(stock mod_deflate attached the same way). `ab -k -c 8` without Accept-Encoding, "
          "rounds in alternating order; the median of the rounds. Target: ours ≤ 1.02 × plain.",
          "", "| file | server | CPU µs/req (median) | × plain | runs (µs/req) |",
          "|---|---|---:|---:|---|"]
    for f in files:
        base = sorted(runs["plain"][f])[args.rounds // 2]
        for name in variants:
            v = sorted(runs[name][f])[args.rounds // 2]
            line = (f"| `{f}` | {name} | {v:.1f} | {v / base:.3f} | "
                    + " / ".join(f"{x:.1f}" for x in runs[name][f]) + " |")
            md.append(line)
            print(line, flush=True)
    out = Path(args.out)
    (out / "identity.md").write_text("\n".join(md) + "\n")
    print(f"wrote {out / 'identity.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
