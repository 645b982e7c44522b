# SPDX-License-Identifier: Apache-2.0
"""Where a sidecar hit and a cache hit spend what plain Apache sending the same bytes does not:
an A/B of the three in alternating rounds, then one run of each under perf.

Starts bench/servers.py's Apache with the module (Debian's sizing; `--sendfile` for
EnableSendfile On, `--mmap-off` for EnableMMAP Off) with `MultiCompressStatic On` over a
directory holding FILE and its sidecar FILE.<ext> (written with multicompress-precompress at the
tool's default level, or Python's writer), `MultiCompressCache On` over another directory
holding FILE (warmed up until a hit returns the strong copy), plain Apache (same
configuration, no module) serving FILE.<ext> as a plain file, and `floor`: that plain Apache plus
bench/floor/mod_mc_floor.so, the access check a sidecar hit may not skip and nothing else (left
out when the bench build has not built it). Runs `wrk -t1 -cN` against each in
alternating order, then `perf record -e cpu-clock -g -p <its processes>` during one more run
each, and writes CPU µs per response by library and by symbol, side by side (as vs_nginx.py).

    /usr/bin/python3 bench/hits_perf.py --module build/bench/.../mod_multicompress.so \\
        --file bench-corpus/manual.html --coding br [--sendfile] [--tls] [--perf OUT.md] \\
        [--alt-module OTHER.so]

`--tls`: every server speaks TLS with HTTP/2 and the load is `h2load -m1` (as bench/run's h2
mode). `--alt-module`: a second Apache with another build of the module (e.g. before an adapter
change), its sidecar and cache hits measured in the same rounds (`alt-sidecar`, `alt-cache`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import h2  # noqa: E402
import servers  # noqa: E402
import vs_nginx  # noqa: E402  (wrk, perf_run, perf_markdown)
from prepare import compress, decode, fetch  # noqa: E402

STATIC = HERE.parent / "tests" / "integration" / "htdocs" / "static"
STRONG = {"zstd": 19, "br": 11, "gzip": 9}
TOOL = HERE.parent / "build" / "bench" / "mod_multicompress" / "tools" / "multicompress-precompress"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--coding", default="br", choices=sorted(STRONG))
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--sendfile", action="store_true", help="EnableSendfile On")
    ap.add_argument("--mmap-off", action="store_true", help="EnableMMAP Off")
    ap.add_argument("--tls", action="store_true", help="TLS + HTTP/2 (h2load -m1)")
    ap.add_argument("--alt-module", metavar="SO",
                    help="also an Apache with this build of the module, in the same rounds")
    ap.add_argument("--floor-module", metavar="SO", default=servers.FLOOR_MODULE,
                    help="bench/floor's mod_mc_floor.so (default: the bench build's; "
                         "`floor` is left out when it is missing)")
    ap.add_argument("--perf", metavar="OUT.md")
    ap.add_argument("--perf-seconds", type=int, default=5)
    args = ap.parse_args()
    name = Path(args.file).name
    ext = servers.PRE_EXT[args.coding]
    original = Path(args.file).read_bytes()
    tmp = Path(tempfile.mkdtemp(prefix="mc-hits-"))
    srvs: dict[str, servers.Server] = {}
    try:
        doc = tmp / "htdocs"
        for d in ("static", "cache"):
            (doc / d).mkdir(parents=True)
            shutil.copy(args.file, doc / d / name)
        shutil.copy(STATIC / "small.html", doc / "small.html")   # the servers' start probe
        if TOOL.exists():
            subprocess.run([str(TOOL), "--no-progress", "-e", args.coding, "-l",
                            f"{args.coding}={STRONG[args.coding]}", str(doc / "static")],
                           check=True, capture_output=True)
        else:
            (doc / "static" / f"{name}.{ext}").write_bytes(
                compress(args.coding, STRONG[args.coding], original))
            st = os.stat(doc / "static" / name)
            os.utime(doc / "static" / f"{name}.{ext}", ns=(st.st_atime_ns, st.st_mtime_ns))
        side = (doc / "static" / f"{name}.{ext}").read_bytes()
        servers.readable_by_workers(tmp)
        ports = iter(servers.free_ports(4))
        tls = h2.make_certificate(str(tmp / "tls")) if args.tls else None
        scheme = "https" if tls else "http"

        def get(port: int, path: str):
            return (h2.fetch(port, path, args.coding, str(tmp)) if tls
                    else fetch(port, path, args.coding))

        conf = [f"<Directory {doc}/static>", "    MultiCompressStatic On", "</Directory>",
                f"<Directory {doc}/cache>", "    MultiCompressCache On",
                f"    MultiCompressCacheLevel {args.coding} {STRONG[args.coding]}", "</Directory>"]
        common = {"sendfile": args.sendfile, "mmap": not args.mmap_off, "tls": tls}
        ours = servers.Apache("multicompress", str(tmp / "ours"), str(doc), {("once", 0): next(ports)},
                              module_path=str(Path(args.module).resolve()), extra_conf=conf,
                              mods=["socache_shmcb"], **common)
        plain = servers.Apache("plain", str(tmp / "plain"), str(doc), {("identity", 0): next(ports)},
                               **common)
        srvs = {"ours": ours, "plain": plain}
        if (floor := servers.floor_conf(args.floor_module)) is not None:
            srvs["floor"] = servers.Apache("plain", str(tmp / "floor"), str(doc),
                                           {("identity", 0): next(ports)}, label="floor",
                                           extra_conf=floor, **common)
        if args.alt_module:
            srvs["alt"] = servers.Apache(
                "multicompress", str(tmp / "alt"), str(doc), {("once", 0): next(ports)},
                module_path=str(Path(args.alt_module).resolve()), extra_conf=conf,
                mods=["socache_shmcb"], **common)
        for s in srvs.values():
            s.start()   # stopped in finally, also when start() fails
        pp = plain.ports[("identity", 0)]
        units = {"precompressed": (plain, pp, f"/static/{name}.{ext}")}
        if "floor" in srvs:   # the same file, after the access check a sidecar hit needs
            units["floor"] = (srvs["floor"], srvs["floor"].ports[("identity", 0)],
                              f"/static/{name}.{ext}")
        for label in ("ours", "alt"):
            if label in srvs:
                s = srvs[label]
                units[f"{label}-sidecar"] = (s, s.ports[("once", 0)], f"/static/{name}")
                units[f"{label}-cache"] = (s, s.ports[("once", 0)], f"/cache/{name}")
        deadline = time.monotonic() + 60
        for n in [u for u in units if u.endswith("-cache")]:
            # the miss stores the live copy; the strong copy follows off the request path
            while True:
                _, h, body = get(units[n][1], units[n][2])
                if body == side:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{n}: the cache never returned the strong copy")
                time.sleep(0.2)
        for n, (_, port, path) in units.items():
            st, h, body = get(port, path)
            if st != 200 or h.get("content-encoding") != args.coding or body != side \
                    or decode(args.coding, body) != original:
                raise RuntimeError(f"{n}: HTTP {st}, {h.get('content-encoding')}, "
                                   f"{len(body)} B: not the sidecar's bytes")
        tally = {n: [0.0, 0] for n in units}
        order = list(units)
        for r in range(args.rounds):
            for n in order if r % 2 == 0 else order[::-1]:
                s, port, path = units[n]
                cpu0 = s.cpu_seconds()
                reqs = vs_nginx.wrk(f"{scheme}://127.0.0.1:{port}{path}", args.coding,
                                    args.connections, args.seconds)
                tally[n][0] += s.cpu_seconds() - cpu0
                tally[n][1] += reqs
        us = {n: t[0] / max(t[1], 1) * 1e6 for n, t in tally.items()}
        print(f"{name} {args.coding}-{STRONG[args.coding]} ({len(side)} B), "
              f"{'TLS + HTTP/2, ' if tls else ''}EnableSendfile "
              f"{'On' if args.sendfile else 'Off'}, EnableMMAP {'Off' if args.mmap_off else 'On'}: "
              + ", ".join(f"{n} {us[n]:.1f} µs CPU/req ({us['precompressed'] / us[n]:.2f}× "
                          "precompressed req/CPU-s)" for n in units))
        if args.perf:
            results = {}
            for n in ("ours-sidecar", "ours-cache", "precompressed"):
                s, port, path = units[n]
                results[n] = vs_nginx.perf_run(s, f"{scheme}://127.0.0.1:{port}{path}", args.coding,
                                               args.connections, args.perf_seconds,
                                               tmp / f"perf-{n}.data")
            command = (f"`bench/hits_perf.py --file {name} --coding {args.coding} --connections "
                       f"{args.connections}` ({args.coding}-{STRONG[args.coding]}, {len(side)} B; "
                       f"Debian's mpm_event sizing, EnableSendfile "
                       f"{'On' if args.sendfile else 'Off'}, EnableMMAP "
                       f"{'Off' if args.mmap_off else 'On'})")
            Path(args.perf).write_text(vs_nginx.perf_markdown(command, results))
            print(f"wrote {args.perf}")
    finally:
        for s in srvs.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
