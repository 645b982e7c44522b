#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Bodies that will not shrink (MultiCompressMinSaving): a 1 MB random body under text/plain
should cost at most 1.1x what plain Apache costs to serve it, while the 88 KB HTML page still
compresses.

Three Apaches from bench/servers.py, the same but for: `plain` (no module), `ours`
(mod_multicompress, `AddOutputFilterByType MULTICOMPRESS`, MultiCompressMinSaving at its default)
and `ours-off` (the same with `MultiCompressMinSaving Off`: what every request cost before). Each
gets `ab -k -n N -c 8` of the random file with Chrome's Accept-Encoding, in rounds of alternating
order; CPU µs/request = the server's utime+stime (/proc) over the run / N; the median of the
rounds is reported. Then one request of the HTML page to `ours` shows it is still compressed.

    /usr/bin/python3 bench/min_saving.py [--module PATH] [-n N] [--rounds R]
"""
from __future__ import annotations

import argparse
import http.client
import os
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
ACCEPT = "gzip, deflate, br, zstd"  # what Chrome sends
TARGET = 1.1


def fetch(port: int, name: str) -> tuple[str | None, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("GET", f"/{name}", skip_accept_encoding=True)
        conn.putheader("Accept-Encoding", ACCEPT)
        conn.endheaders()
        r = conn.getresponse()
        return r.getheader("Content-Encoding"), len(r.read())
    finally:
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", default=str(DEFAULT_MODULE))
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    module = str(Path(args.module).resolve())
    if not Path(module).exists():
        sys.exit(f"{module} missing: cmake --preset release && cmake --build --preset release "
                 "--target mod_multicompress")
    tmp = Path(tempfile.mkdtemp(prefix="mc-min-saving-"))
    tmp.chmod(0o755)  # the children run as the server user
    doc = tmp / "htdocs"
    doc.mkdir()
    (doc / "random.txt").write_bytes(os.urandom(1_000_000))
    shutil.copy(STATIC / "page.html", doc / "page.html")
    shutil.copy(STATIC / "small.html", doc / "small.html")  # what servers.py asks to see it up
    for p in doc.iterdir():
        p.chmod(0o644)
        os.utime(p, (time.time() - 1000, time.time() - 1000))
    variants = {
        "plain": dict(variant="plain"),
        "ours": dict(variant="multicompress", module_path=module),
        "ours-off": dict(variant="multicompress", module_path=module,
                         extra_conf=["MultiCompressMinSaving Off"]),
    }
    started = {}
    load0 = open("/proc/loadavg").read().split()[:3]
    t0 = time.time()
    runs: dict[str, list[float]] = {name: [] for name in variants}
    codings: dict[str, str | None] = {}
    try:
        for name, kw in variants.items():
            port = servers.free_ports(1)[0]
            s = servers.Apache(kw.pop("variant"), str(tmp / name), str(doc),
                               {("identity", 0): port}, label=name, **kw)
            started[name] = (s, port)  # before start(): stopped in finally if it fails
            s.start()
        for rnd in range(args.rounds):
            order = list(started) if rnd % 2 == 0 else list(reversed(list(started)))
            for name in order:
                s, port = started[name]
                url = f"http://127.0.0.1:{port}/random.txt"
                ab = ["ab", "-q", "-k", "-c", "8", "-H", f"Accept-Encoding: {ACCEPT}"]
                subprocess.run(ab + ["-n", "200", url], capture_output=True, check=True,
                               timeout=300)
                c0 = s.cpu_seconds()
                subprocess.run(ab + ["-n", str(args.n), url], capture_output=True, check=True,
                               timeout=900)
                runs[name].append(1e6 * (s.cpu_seconds() - c0) / args.n)
        for name, (_, port) in started.items():
            codings[name] = fetch(port, "random.txt")[0]
        page = {name: fetch(port, "page.html") for name, (_, port) in started.items()}
    finally:
        for s, _ in started.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    load1 = open("/proc/loadavg").read().split()[:3]
    median = {name: sorted(v)[args.rounds // 2] for name, v in runs.items()}
    ratio = median["ours"] / median["plain"]
    md = ["# A body that will not shrink (MultiCompressMinSaving)", "",
          f"`bench/min_saving.py -n {args.n} --rounds {args.rounds}` on "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t0))}, load average "
          f"{' '.join(load0)} at the start, {' '.join(load1)} at the end. Three Apaches "
          "(bench/servers.py: event MPM, 4 × 80 threads), the same but for the module: `plain`, "
          "`ours` (`AddOutputFilterByType MULTICOMPRESS`, MultiCompressMinSaving's default), "
          "`ours-off` (`MultiCompressMinSaving Off`). `ab -k -c 8` of a 1 MB random file "
          f"(text/plain) with `Accept-Encoding: {ACCEPT}`, rounds in alternating order; the "
          f"median of the rounds. Target: ours ≤ {TARGET} × plain.", "",
          "| server | CPU µs/req (median) | × plain | Content-Encoding | runs (µs/req) |",
          "|---|---:|---:|---|---|"]
    for name in variants:
        md.append(f"| {name} | {median[name]:.1f} | {median[name] / median['plain']:.3f} | "
                  f"{codings.get(name) or 'identity'} | "
                  + " / ".join(f"{x:.1f}" for x in runs[name]) + " |")
    md += ["", "The 88 KB page (`page.html`), one request each:", "",
           "| server | Content-Encoding | bytes |", "|---|---|---:|"]
    md += [f"| {name} | {ce or 'identity'} | {n} |" for name, (ce, n) in page.items()]
    met = ratio <= TARGET and page["ours"][0] is not None
    md += ["", f"ours / plain = {ratio:.3f} (target ≤ {TARGET}); the page "
           f"{'compresses' if page['ours'][0] else 'does NOT compress'}: "
           f"{'met' if met else 'NOT met'}."]
    print("\n".join(md), flush=True)
    out = Path(args.out)
    (out / "min_saving.md").write_text("\n".join(md) + "\n")
    print(f"wrote {out / 'min_saving.md'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
