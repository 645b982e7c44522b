# SPDX-License-Identifier: Apache-2.0
"""mod_multicompress against nginx + ngx_brotli / gzip on one file and coding, at several wrk
connection counts, in alternating rounds: a quick A/B for what bench/run's full table shows, and
with --perf where each server's CPU per response goes; with --plain, plain Apache sending the
same bytes as a file: what Apache itself costs per response at each connection count; with
--lib-floor, plain Apache plus bench/floor/mod_mc_libfloor.so, a handler that answers with the
library's one call and nothing else (both bodies decoded and checked against FILE): the least a
live response of this coding costs inside this Apache (for zstd-N, which nginx lacks, the
reference of the ratios instead of nginx).

Starts bench/servers.py's Apache with the module (event MPM in Debian's sizing, 2 x 25 threads,
EnableSendfile Off and EnableMMAP On as Debian ships them; --sendfile turns sendfile on) and its
nginx (2 workers) on a docroot holding FILE, then per round and connection count runs `wrk -t1
-cN -dSs` against each server in alternating order (forward, reverse, ...) and sums the requests
and the servers' CPU seconds (utime+stime of all their processes).

--perf OUT.md: afterwards one more run per server (at the first connection count) under `perf
record -e cpu-clock -g -p <the server's processes>`; the self samples, scaled to the CPU µs per
response that /proc gave for that run, are written per library and per symbol for both servers
side by side, so the difference per response shows where it is.

    /usr/bin/python3 bench/vs_nginx.py --module build/release/.../mod_multicompress.so \\
        --file bench-corpus/font-awesome.min.css --coding br-4 [--connections 16] [--rounds 4] \\
        [--perf bench/results/br4-vs-nginx.md]
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import h2  # noqa: E402
import nginx_server  # noqa: E402
import servers  # noqa: E402
from prepare import decode  # noqa: E402  (every body checked as bench/run checks it)

# bench/profile.py (perf report parsing, libraries grouped), by path: "profile" is also a
# module of Python's standard library.
_spec = importlib.util.spec_from_file_location("mc_profile", HERE / "profile.py")
mc_profile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mc_profile)

STATIC = HERE.parent / "tests" / "integration" / "htdocs" / "static"


def wrk(url: str, coding: str, conns: int, seconds: int,
        headers: tuple[str, ...] = ()) -> int:
    """Requests completed by `wrk -t1` (http://) or `h2load -t1 -m1` (https://, HTTP/2), with
    `Accept-Encoding: coding` and `headers` ("Name: value") on every request."""
    if url.startswith("https://"):
        port_path = url.split("//", 1)[1].split(":", 1)[1]
        port, path = port_path.split("/", 1)
        proc, parse = h2.load(int(port), "/" + path, coding, conns, seconds,
                              headers=headers)
        out, _ = proc.communicate(timeout=seconds + 60)
        w = parse(out)
        if w["status"] or w["failed"]:
            raise RuntimeError(f"h2load against {url}: {out[-500:]}")
        return w["requests"]
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "-H",
                          f"Accept-Encoding: {coding}",
                          *[a for h in headers for a in ("-H", h)], url],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+) requests in", out)
    if m is None or re.search(r"Non-2xx", out):
        raise RuntimeError(f"wrk against {url}: {out[-500:]}")
    return int(m.group(1))


def perf_run(srv: servers.Server, url: str, coding: str, conns: int, seconds: int,
             data: Path, headers: tuple[str, ...] = ()
             ) -> tuple[float, dict[str, float], list[tuple[float, str, str]]]:
    """One wrk run under perf; returns (CPU µs per response, {group: µs}, [(µs, dso, sym)])."""
    perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g",
                             "-o", str(data), "-p", ",".join(map(str, srv.pids()))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        time.sleep(0.5)
        cpu0 = srv.cpu_seconds()
        n = wrk(url, coding, conns, seconds, headers)
        us = (srv.cpu_seconds() - cpu0) / max(n, 1) * 1e6
    finally:
        perf.send_signal(2)
        perf.wait(60)
    groups, syms = mc_profile.perf_report(data)
    total = sum(p for p, _, _ in syms) or 1.0
    return (us, {g: us * p / 100 for g, p in groups.items()},
            [(us * p / total, d, s) for p, d, s in syms])


def perf_markdown(command: str, results: dict[str, tuple]) -> str:
    """One column per server; the difference is the first server's minus the last's."""
    names = list(results)
    first, last = names[0], names[-1]
    lines = [f"{command}: one run per server under `perf record -e cpu-clock -F 4000 -g -p "
             "<its processes>`; µs = share of the self samples × the CPU µs per response /proc "
             "gave for that run.", "",
             "| | " + " | ".join(names) + f" | {first} − {last} |",
             "|---|" + "---:|" * (len(names) + 1),
             "| CPU µs per response | " + " | ".join(f"{results[n][0]:.0f}" for n in names)
             + f" | {results[first][0] - results[last][0]:+.0f} |"]
    groups = sorted({g for r in results.values() for g in r[1]},
                    key=lambda g: -max(r[1].get(g, 0) for r in results.values()))
    for g in groups:
        vals = [results[n][1].get(g, 0.0) for n in names]
        if max(vals) >= 1.0:
            lines.append(f"| {g} | " + " | ".join(f"{v:.0f}" for v in vals)
                         + f" | {vals[0] - vals[-1]:+.0f} |")
    lines += ["", "Symbols (µs per response, self time), largest spread first:", "",
              "| symbol | library | " + " | ".join(names) + " |",
              "|---|---|" + "---:|" * len(names)]
    per: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0] * len(names))
    for i, n in enumerate(names):
        for us, dso, sym in results[n][2]:
            per[(sym, "kernel" if dso.startswith("[kernel") else dso)][i] += us
    for (sym, dso), vals in sorted(per.items(), key=lambda kv: -(max(kv[1]) - min(kv[1])))[:30]:
        lines.append(f"| `{sym}` | {dso} | " + " | ".join(f"{v:.1f}" for v in vals) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--coding", default="br-4",
                    help="br-N or gzip-N (default br-4); zstd-N with --lib-floor (nginx has no "
                         "zstd: the library floor is then the reference)")
    ap.add_argument("--connections", default="16")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=2, help="per wrk run")
    ap.add_argument("--sendfile", action="store_true", help="EnableSendfile On in Apache")
    ap.add_argument("--tls", action="store_true",
                    help="TLS + HTTP/2 (h2load -m1) instead of HTTP/1.1 (wrk)")
    ap.add_argument("--mmap-off", action="store_true",
                    help="also the module's Apache with EnableMMAP Off")
    ap.add_argument("--alt-module", metavar="SO",
                    help="also an Apache with this build of the module (e.g. an adapter change); "
                    "the Apache started second has come out 3-7 %% ahead whichever build it ran "
                    "(results/br4-stylesheet.md): run again with the two builds' places swapped")
    ap.add_argument("--plain", action="store_true",
                    help="also plain Apache (no module, EnableMMAP Off) sending the body ours "
                         "sends as a file (FILE.gz / FILE.br, AddEncoding): Apache's own cost "
                         "per response at each connection count")
    ap.add_argument("--lib-floor", metavar="SO", nargs="?", const=servers.LIBFLOOR_MODULE,
                    help="also plain Apache plus bench/floor's mod_mc_libfloor.so (default: the "
                         "bench build's), which answers with the library's one call and nothing "
                         "else: the least a live response of this coding costs in this Apache")
    ap.add_argument("--warm", metavar="FILE",
                    help="before the rounds, every server sends FILE with the same coding for "
                         "2 s (the state a server serving a whole site is in: glibc's heap "
                         "thresholds, the module's block cache)")
    ap.add_argument("--perf", metavar="OUT.md", help="profile one more run per server")
    ap.add_argument("--perf-seconds", type=int, default=5)
    ap.add_argument("--perf-keep", metavar="DIR", help="keep the perf.data files here")
    args = ap.parse_args()
    coding, level = args.coding.rsplit("-", 1)
    key = (coding, int(level))
    if coding == "zstd" and not args.lib_floor:
        ap.error("zstd needs --lib-floor: nginx has no zstd to compare with")
    lib_floor = servers.libfloor_conf(args.lib_floor) if args.lib_floor else None
    if args.lib_floor and lib_floor is None:
        ap.error(f"--lib-floor: {args.lib_floor} is not built (bench/run builds it)")
    conns = [int(c) for c in args.connections.split(",")]
    name = Path(args.file).name
    tmp = Path(tempfile.mkdtemp(prefix="mc-vs-nginx-"))
    tmp.chmod(0o755)  # the workers run as www-data
    docroot = tmp / "htdocs"
    docroot.mkdir()
    shutil.copy(STATIC / "small.html", docroot / "small.html")  # the servers' start probe
    shutil.copy(args.file, docroot / name)
    warm = Path(args.warm).name if args.warm else None
    if warm:
        shutil.copy(args.warm, docroot / warm)
    srvs: dict[str, servers.Server] = {}
    try:
        tls = h2.make_certificate(str(tmp / "tls")) if args.tls else None
        scheme = "https" if tls else "http"
        ports = iter(servers.free_ports(6))
        module = str(Path(args.module).resolve())
        srvs["mod_multicompress"] = servers.Apache(
            "multicompress", str(tmp / "apache"), str(docroot), {key: next(ports)},
            module_path=module, sendfile=args.sendfile, tls=tls)
        if args.mmap_off:
            srvs["EnableMMAP Off"] = servers.Apache(
                "multicompress", str(tmp / "apache-nommap"), str(docroot), {key: next(ports)},
                module_path=module, sendfile=args.sendfile, mmap=False, tls=tls)
        if args.alt_module:
            srvs["alt module"] = servers.Apache(
                "multicompress", str(tmp / "apache-alt"), str(docroot), {key: next(ports)},
                module_path=str(Path(args.alt_module).resolve()), sendfile=args.sendfile,
                tls=tls)
        if args.plain:
            plain_root = tmp / "htdocs-plain"  # its own: nginx's gzip_static must not see it
            plain_root.mkdir()
            shutil.copy(STATIC / "small.html", plain_root / "small.html")
            if warm:
                shutil.copy(args.warm, plain_root / warm)
            srvs["plain Apache"] = servers.Apache(
                "plain", str(tmp / "apache-plain"), str(plain_root), {key: next(ports)},
                sendfile=args.sendfile, mmap=False, tls=tls)
        if args.lib_floor:
            floor_root = tmp / "htdocs-floor"  # the body is the handler's, not a sidecar's
            floor_root.mkdir()
            for f in [STATIC / "small.html", Path(args.file)] + ([Path(args.warm)] if warm else []):
                shutil.copy(f, floor_root / f.name)
            srvs["library floor"] = servers.Apache(
                "plain", str(tmp / "apache-libfloor"), str(floor_root), {key: next(ports)},
                sendfile=args.sendfile, tls=tls,
                extra_conf=lib_floor + [f"MCLibFloor {coding} {level}"])
        if coding != "zstd":
            srvs["nginx"] = nginx_server.Nginx(str(tmp / "nginx"), str(docroot),
                                               {key: next(ports)}, tls=tls)
        ref = "nginx" if "nginx" in srvs else "library floor"
        for s in srvs.values():
            s.start()  # stopped in finally, also when start() fails
        paths = {n: name for n in srvs}

        def fetch(n: str, head: Path | None = None) -> bytes:
            """FILE from server n with Accept-Encoding: coding, as sent (headers into head)."""
            return subprocess.run(
                ["curl", "-sfk", *(["-D", str(head)] if head else []),
                 "-H", f"Accept-Encoding: {coding}",
                 f"{scheme}://127.0.0.1:{srvs[n].ports[key]}/{name}"],
                capture_output=True, check=True, timeout=60).stdout

        if args.plain:
            suffix = "." + servers.PRE_EXT[coding]
            head = tmp / "plain-head.txt"
            body = fetch("mod_multicompress", head)
            if not re.search(rf"(?mi)^content-encoding: *{coding}\s*$", head.read_text()):
                raise RuntimeError(f"ours did not send {coding}: {head.read_text()[:500]}")
            (plain_root / (name + suffix)).write_bytes(body)
            (plain_root / (name + suffix)).chmod(0o644)
            paths["plain Apache"] = name + suffix
        if args.lib_floor:  # both decode to the file; their lengths are printed side by side
            original = Path(args.file).read_bytes()
            sizes = {}
            for n in ("mod_multicompress", "library floor"):
                got = fetch(n)
                if decode(coding, got) != original:
                    raise RuntimeError(f"{n}: the {coding} body does not decode to {name}")
                sizes[n] = len(got)
            print(f"(library floor sends {sizes['library floor']} bytes, ours "
                  f"{sizes['mod_multicompress']})")
        if warm:
            for s in srvs.values():
                wrk(f"{scheme}://127.0.0.1:{s.ports[key]}/{warm}", coding, 16, 2)
        tally = {(n, c): [0.0, 0] for n in srvs for c in conns}
        cells = [(n, c) for c in conns for n in srvs]
        for r in range(args.rounds):
            for n, c in cells if r % 2 == 0 else cells[::-1]:
                s = srvs[n]
                cpu0 = s.cpu_seconds()
                reqs = wrk(f"{scheme}://127.0.0.1:{s.ports[key]}/{paths[n]}", coding, c,
                           args.seconds)
                tally[(n, c)][0] += s.cpu_seconds() - cpu0
                tally[(n, c)][1] += reqs
        for c in conns:
            us = {n: tally[(n, c)][0] / max(tally[(n, c)][1], 1) * 1e6 for n in srvs}
            print(f"{name} {args.coding} -c{c}: " + ", ".join(
                f"{n} {us[n]:.0f} µs CPU/req ({us[ref] / us[n]:.2f}× {ref} req/CPU-s)"
                for n in srvs))
            if args.plain:  # what the module adds to Apache's own cost at this count
                print(f"  mod_multicompress − plain Apache: "
                      f"{us['mod_multicompress'] - us['plain Apache']:.0f} µs")
        if args.plain:
            print(f"(plain Apache sends the {len(body)} bytes ours sent, as {paths['plain Apache']})")
        if args.perf:
            results = {}
            for n, s in srvs.items():
                url = f"{scheme}://127.0.0.1:{s.ports[key]}/{paths[n]}"
                results[n] = perf_run(s, url, coding, conns[0], args.perf_seconds,
                                      tmp / f"perf-{n}.data")
            command = (f"`bench/vs_nginx.py --file {name} --coding {args.coding} --connections "
                       f"{conns[0]}{' --tls' if tls else ''}` (Debian's mpm_event sizing, "
                       f"EnableSendfile {'On' if args.sendfile else 'Off'}"
                       f"{'; TLS + HTTP/2, h2load -m1' if tls else '; HTTP/1.1, wrk'})")
            Path(args.perf).write_text(perf_markdown(command, results))
            if args.perf_keep:
                Path(args.perf_keep).mkdir(parents=True, exist_ok=True)
                for n in srvs:
                    shutil.copy(tmp / f"perf-{n}.data",
                                Path(args.perf_keep) / f"perf-{n.replace(' ', '-')}.data")
            print(f"wrote {args.perf}")
    finally:
        for s in srvs.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
