# SPDX-License-Identifier: Apache-2.0
"""mod_multicompress against nginx + ngx_brotli / gzip on one file and coding, at several
wrk connection counts, in alternating rounds: a quick A/B for what bench/run's full
table shows.

Starts bench/servers.py's Apache with the module (event MPM, 4 x 80 threads) and its nginx
(2 workers) on a docroot holding FILE, then per round and connection count runs `wrk -t1 -cN
-dSs` against each server in alternating order (forward, reverse, ...) and sums the requests and
the servers' CPU seconds (utime+stime of all their processes). With more connections than cores,
Apache compresses that many bodies at once in its threads, taking turns on the cores; nginx's two
workers each compress one body at a time whatever the connection count.

    /usr/bin/python3 bench/vs_nginx.py --module build/release/.../mod_multicompress.so \\
        --file bench-corpus/bootstrap.min.css --coding br-4 [--connections 2,8] [--rounds 4]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import servers  # noqa: E402

STATIC = HERE.parent / "tests" / "integration" / "htdocs" / "static"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--coding", default="br-4", help="br-N or gzip-N (default br-4)")
    ap.add_argument("--connections", default="2,8")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=2, help="per wrk run")
    args = ap.parse_args()
    coding, level = args.coding.rsplit("-", 1)
    key = (coding, int(level))
    conns = [int(c) for c in args.connections.split(",")]
    name = Path(args.file).name
    tmp = Path(tempfile.mkdtemp(prefix="mc-vs-nginx-"))
    tmp.chmod(0o755)  # the workers run as www-data
    docroot = tmp / "htdocs"
    docroot.mkdir()
    shutil.copy(STATIC / "small.html", docroot / "small.html")  # the servers' start probe
    shutil.copy(args.file, docroot / name)
    srvs: dict[str, servers.Server] = {}
    try:
        srvs["mod_multicompress"] = servers.Apache(
            "multicompress", str(tmp / "apache"), str(docroot),
            {key: servers.free_ports(1)[0]}, module_path=str(Path(args.module).resolve()))
        srvs["nginx"] = servers.Nginx(str(tmp / "nginx"), str(docroot),
                                      {key: servers.free_ports(1)[0]})
        for s in srvs.values():
            s.start()  # stopped in finally, also when start() fails
        tally = {(n, c): [0.0, 0] for n in srvs for c in conns}
        cells = [(n, c) for c in conns for n in srvs]
        for r in range(args.rounds):
            for n, c in cells if r % 2 == 0 else cells[::-1]:
                s = srvs[n]
                url = f"http://127.0.0.1:{s.ports[key]}/{name}"
                cpu0 = s.cpu_seconds()
                out = subprocess.run(["wrk", "-t1", f"-c{c}", f"-d{args.seconds}s", "-H",
                                      f"Accept-Encoding: {coding}", url],
                                     capture_output=True, text=True, check=True).stdout
                m = re.search(r"(\d+) requests in", out)
                if m is None or re.search(r"Non-2xx", out):
                    raise RuntimeError(f"wrk against {n}: {out[-500:]}")
                tally[(n, c)][0] += s.cpu_seconds() - cpu0
                tally[(n, c)][1] += int(m.group(1))
        for c in conns:
            us = {n: tally[(n, c)][0] / max(tally[(n, c)][1], 1) * 1e6 for n in srvs}
            print(f"{name} {args.coding} -c{c}: mod_multicompress {us['mod_multicompress']:.0f} "
                  f"µs CPU/req, nginx {us['nginx']:.0f} µs CPU/req, req/CPU-s × nginx "
                  f"{us['nginx'] / us['mod_multicompress']:.2f}")
    finally:
        for s in srvs.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
