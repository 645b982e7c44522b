# SPDX-License-Identifier: Apache-2.0
"""A deploy-time delta sidecar (`FILE.dcz-HEX16`) served by the module against plain Apache
sending the same bytes as a plain file: requests per server CPU-second in alternating rounds.

Takes two real releases of a bundle (`npm pack`, as bench/dictionary_releases.py: by default
jquery 3.7.0 and 3.7.1, `dist/jquery.min.js`), names them as a bundler would,
`app.<first 8 hex digits of their SHA-256>.js` (the newer one's mtime one second later), and runs
`multicompress-precompress --deltas 1` (its default levels, dcz=19) over them: the newer release
gets `app.NEW.js.dcz-<16 hex of SHA-256(old)>`. Then starts bench/servers.py's Apache (Debian's
mpm_event sizing; `--sendfile` for EnableSendfile On, `--tls` for TLS + HTTP/2) twice:

- `ours`: with the module, `MultiCompressEncodings dcz zstd br gzip`, and over the bundles'
  directory `MultiCompressStatic On` + `MultiCompressUseAsDictionary auto` (as README.md's
  example). The load asks for `app.NEW.js` as Chrome does once it holds the old release:
  `Accept-Encoding: gzip, deflate, br, zstd, dcb, dcz`, `Available-Dictionary: :<base64 SHA-256
  of the old release>:` and `Dictionary-ID: "<its hash>"` (the `id` auto offers).
- `plain`: the same configuration without the module, serving a copy of the delta sidecar,
  `app.NEW.js.dcz`, as a plain file (`AddEncoding dcz .dcz`, so it goes out with the same
  Content-Type and Content-Encoding), with the same request headers.
- `floor`: that plain Apache plus bench/floor/mod_mc_floor.so (`--floor-module`, default the
  bench build's; left out when missing): the subrequest lookup and access hooks the module runs
  for every sidecar hit, and nothing else. floor × plain is the most a hit can reach.

Before the runs: the old release is fetched once from `ours` (it must carry Use-As-Dictionary,
and the module keeps it, as a browser's first visit does); the new one must come back from every
server as `Content-Encoding: dcz`, byte for byte the sidecar file, which decodes (python-zstandard,
the old release as raw-content dictionary, after the 40-byte dcz header that names it) to the new
release; and `ours` has a second, HTTP/1.1 virtual host (same directories, not measured) with
`Header always set X-MC-Source "%{MULTICOMPRESS_SOURCE}e"`, which must say `sidecar` before and
after the runs: the response was the file on disk, nothing was compressed. Then `wrk -t1 -cN`
(or `h2load -t1 -cN -m1`) against each in alternating order, N rounds, server CPU from /proc
(utime+stime of all the server's processes). Prints a markdown section: the command, date,
commit, load average, the table (req/s, CPU µs/req, req/CPU-s, × plain) and the target
(≥ 0.9× plain's req/CPU-s).

    /usr/bin/python3 bench/delta_perf.py \\
        --module build/bench/mod_multicompress/httpd/mod_multicompress.so [--tool PATH] \\
        [--sendfile | --tls] [--rounds 6] [--seconds 2] [--connections 16] \\
        [--alt-module OTHER.so] [--perf OUT.md]

`--alt-module`: one more Apache with another build of the module (e.g. before an adapter
change), measured in the same rounds (`alt`). `--perf OUT.md`: afterwards one more run of
`ours` and `plain` each under `perf record -e cpu-clock -g` (as bench/hits_perf.py), CPU µs per
response by library and by symbol side by side.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dictionary_releases as rel  # noqa: E402  (npm_pack, PACKAGES, dcz header, raw_dict)
import h2  # noqa: E402
import servers  # noqa: E402
import vs_nginx  # noqa: E402  (wrk, perf_run, perf_markdown)

import zstandard  # noqa: E402

ROOT = HERE.parent
STATIC = ROOT / "tests" / "integration" / "htdocs" / "static"
TOOL = ROOT / "build" / "bench" / "mod_multicompress" / "tools" / "multicompress-precompress"
CHROME_AE = "gzip, deflate, br, zstd, dcb, dcz"   # Chrome's Accept-Encoding with dictionaries
TARGET = 0.9


def releases(package: str, work: Path) -> tuple[str, bytes, bytes]:
    """(what they are, old bytes, new bytes): the last two pinned releases of `package`."""
    pkg, member, versions = next(p for p in rel.PACKAGES if p[0] == package)
    out = []
    for ver in versions[-2:]:
        with tarfile.open(rel.npm_pack(f"{pkg}@{ver}", work / "npm")) as tar:
            f = tar.extractfile(member)
            if f is None:
                raise SystemExit(f"delta_perf.py: {member} is not in {pkg}@{ver}")
            out.append(f.read())
    return f"{pkg} {versions[-2]} → {versions[-1]} (`{member[len('package/'):]}`)", out[0], out[1]


def deploy(assets: Path, tool: str, old: bytes, new: bytes) -> tuple[str, str, Path]:
    """Writes both releases under hashed names and runs the tool; returns (old name, new name,
    the new release's delta sidecar against the old one), checked to decode."""
    assets.mkdir(parents=True)
    names = []
    for age, data in enumerate((old, new)):
        p = assets / f"app.{hashlib.sha256(data).hexdigest()[:8]}.js"
        p.write_bytes(data)
        os.utime(p, (1_700_000_000 + age, 1_700_000_000 + age))
        names.append(p.name)
    cmd = [tool, "-q", "--no-progress", "--deltas", "1", "--jobs", "1", str(assets)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    delta = assets / f"{names[1]}.dcz-{hashlib.sha256(old).hexdigest()[:16]}"
    if not delta.is_file():
        raise RuntimeError(f"the tool wrote no {delta.name}")
    check_dcz(delta.name, delta.read_bytes(), old, new)
    return names[0], names[1], delta


def check_dcz(what: str, body: bytes, old: bytes, new: bytes) -> None:
    if body[:8] != rel.DCZ_MAGIC or body[8:rel.HEADER_LEN] != hashlib.sha256(old).digest():
        raise RuntimeError(f"{what}: not a dcz body whose header names the old release")
    d = zstandard.ZstdDecompressor(dict_data=rel.raw_dict(old)).decompressobj()
    if d.decompress(body[rel.HEADER_LEN:]) != new or not d.eof:
        raise RuntimeError(f"{what}: does not decode to the new release")


def git_commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", required=True, help="mod_multicompress.so (a Release build)")
    ap.add_argument("--tool", default=str(TOOL), help=f"multicompress-precompress (default {TOOL})")
    ap.add_argument("--package", default="jquery", choices=[p[0] for p in rel.PACKAGES])
    ap.add_argument("--work", default=str(ROOT / "build" / "bench-dict"),
                    help="where the npm tarballs are kept (as bench/dictionary.py)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--sendfile", action="store_true", help="EnableSendfile On")
    ap.add_argument("--tls", action="store_true", help="TLS + HTTP/2 (h2load -m1)")
    ap.add_argument("--alt-module", metavar="SO",
                    help="also an Apache with this build of the module, in the same rounds")
    ap.add_argument("--floor-module", metavar="SO", default=servers.FLOOR_MODULE,
                    help="bench/floor's mod_mc_floor.so (default: the bench build's; "
                         "`floor` is left out when it is missing)")
    ap.add_argument("--perf", metavar="OUT.md")
    ap.add_argument("--perf-seconds", type=int, default=5)
    ap.add_argument("--perf-keep", metavar="DIR", help="keep the perf.data files here")
    args = ap.parse_args()
    load0 = os.getloadavg()
    what, old, new = releases(args.package, Path(args.work))
    tmp = Path(tempfile.mkdtemp(prefix="mc-delta-"))
    srvs: dict[str, servers.Apache] = {}
    try:
        doc = tmp / "htdocs"
        assets = doc / "assets"
        old_name, new_name, delta = deploy(assets, args.tool, old, new)
        side = delta.read_bytes()
        (assets / f"{new_name}.dcz").write_bytes(side)   # plain Apache's copy
        shutil.copy(STATIC / "small.html", doc / "small.html")   # the servers' start probe
        servers.readable_by_workers(tmp)
        tls = h2.make_certificate(str(tmp / "tls")) if args.tls else None
        scheme = "https" if tls else "http"
        ask = (f"Available-Dictionary: {rel.sf_hash(old)}", f'Dictionary-ID: "{old_name[4:12]}"')
        ports = iter(servers.free_ports(6))
        mods = ["socache_shmcb", "headers"]
        common = {"sendfile": args.sendfile, "tls": tls, "mods": mods}

        def module_server(label: str, so: str) -> servers.Apache:
            wd = tmp / label
            conf = ["MultiCompressEncodings dcz zstd br gzip",
                    # room for the old release as a dictionary (shmcb's default is 512 kB)
                    f"MultiCompressCacheStore shmcb:{wd}/run/mc-store(16777216)",
                    f"<Directory {assets}>", "    MultiCompressStatic On",
                    "    MultiCompressUseAsDictionary auto", "</Directory>"]
            verify = ['Header always set X-MC-Source "%{MULTICOMPRESS_SOURCE}e"']
            return servers.Apache(
                "multicompress", str(wd), str(doc),
                {("ours", 0): next(ports), ("verify", 0): next(ports)},
                module_path=str(Path(so).resolve()), extra_conf=conf,
                vhost_conf={("verify", 0): verify}, plain_ports={("verify", 0)}, **common)

        srvs["plain"] = servers.Apache("plain", str(tmp / "plain"), str(doc),
                                       {("identity", 0): next(ports)},
                                       extra_conf=["AddEncoding dcz .dcz"], **common)
        if (floor := servers.floor_conf(args.floor_module)) is not None:
            srvs["floor"] = servers.Apache("plain", str(tmp / "floor"), str(doc),
                                           {("identity", 0): next(ports)}, label="floor",
                                           extra_conf=["AddEncoding dcz .dcz", *floor], **common)
        srvs["ours"] = module_server("ours", args.module)
        if args.alt_module:
            srvs["alt"] = module_server("alt", args.alt_module)
        for s in srvs.values():
            s.start()   # stopped in finally, also when start() fails
        units = {n: (srvs[n], srvs[n].ports[("identity", 0)], f"/assets/{new_name}.dcz")
                 for n in ("plain", "floor") if n in srvs}
        for label in ("ours", "alt"):
            if label in srvs:
                units[label] = (srvs[label], srvs[label].ports[("ours", 0)],
                                f"/assets/{new_name}")

        def get(port: int, path: str, extra: tuple[str, ...]) -> tuple[int, dict, bytes]:
            if tls:
                return h2.fetch(port, path, CHROME_AE, str(tmp), extra)
            return rel.get(port, path, {"Accept-Encoding": CHROME_AE,
                                        **dict(h.split(": ", 1) for h in extra)})

        def source(label: str) -> str:
            s = srvs[label]
            st, h, body = rel.get(s.ports[("verify", 0)], f"/assets/{new_name}",
                                  {"Accept-Encoding": CHROME_AE,
                                   **dict(h.split(": ", 1) for h in ask)})
            if st != 200 or body != side:
                raise RuntimeError(f"{label} (verify host): HTTP {st}, {len(body)} B: "
                                   "not the delta sidecar's bytes")
            return h.get("x-mc-source", "(none)")

        for label in [u for u in units if u in ("ours", "alt")]:
            _, port, _ = units[label]
            st, h, _ = get(port, f"/assets/{old_name}", ())
            if st != 200 or "use-as-dictionary" not in h:
                raise RuntimeError(f"{label}: GET {old_name}: HTTP {st}, no Use-As-Dictionary")
            if (src := source(label)) != "sidecar":
                raise RuntimeError(f"{label}: MULTICOMPRESS_SOURCE {src!r}, not sidecar")
        for n, (_, port, path) in units.items():
            st, h, body = get(port, path, ask)
            if st != 200 or h.get("content-encoding") != "dcz" or body != side:
                raise RuntimeError(f"{n}: HTTP {st}, Content-Encoding "
                                   f"{h.get('content-encoding')}, {len(body)} B: "
                                   "not the delta sidecar's bytes")
            check_dcz(f"{n} {path}", body, old, new)
        tally = {n: [0.0, 0, 0.0] for n in units}   # CPU s, requests, wall s
        per_round: dict[str, list[float]] = {n: [] for n in units}
        order = list(units)
        for r in range(args.rounds):
            got = {}
            for n in order if r % 2 == 0 else order[::-1]:
                s, port, path = units[n]
                cpu0, t0 = s.cpu_seconds(), time.monotonic()
                reqs = vs_nginx.wrk(f"{scheme}://127.0.0.1:{port}{path}", CHROME_AE,
                                    args.connections, args.seconds, ask)
                cpu = s.cpu_seconds() - cpu0
                tally[n][0] += cpu
                tally[n][1] += reqs
                tally[n][2] += time.monotonic() - t0
                got[n] = reqs / max(cpu, 1e-9)
            for n in units:
                per_round[n].append(got[n] / got["plain"])
        after = {n: source(n) for n in units if n in ("ours", "alt")}
        for n, src in after.items():
            if src != "sidecar":
                raise RuntimeError(f"{n}: after the runs MULTICOMPRESS_SOURCE {src!r}")
        load1 = os.getloadavg()
        print(report(args, what, old_name, new_name, delta.name, len(new), len(side), tally,
                     per_round, load0, load1))
        if args.perf:
            results = {}
            for n in ("ours", "plain"):
                s, port, path = units[n]
                results[n] = vs_nginx.perf_run(s, f"{scheme}://127.0.0.1:{port}{path}",
                                               CHROME_AE, args.connections, args.perf_seconds,
                                               tmp / f"perf-{n}.data", ask)
            Path(args.perf).write_text(vs_nginx.perf_markdown(
                f"`bench/delta_perf.py {mode_args(args)}` ({mode(args)}; the delta sidecar "
                f"{delta.name}, {len(side)} B)", results))
            if args.perf_keep:
                Path(args.perf_keep).mkdir(parents=True, exist_ok=True)
                for n in results:
                    shutil.copy(tmp / f"perf-{n}.data", Path(args.perf_keep) / f"perf-{n}.data")
            print(f"wrote {args.perf}")
    finally:
        for s in srvs.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def mode(args) -> str:
    if args.tls:
        return "TLS + HTTP/2, h2load -m1"
    return f"HTTP/1.1, wrk, EnableSendfile {'On' if args.sendfile else 'Off'}"


def mode_args(args) -> str:
    out = ["--sendfile"] if args.sendfile else []
    out += ["--tls"] if args.tls else []
    out += [f"--rounds {args.rounds}", f"--seconds {args.seconds}",
            f"--connections {args.connections}"]
    if args.package != "jquery":
        out.append(f"--package {args.package}")
    return " ".join(out)


def report(args, what: str, old_name: str, new_name: str, delta_name: str, new_size: int,
           side_size: int, tally: dict, per_round: dict, load0: tuple, load1: tuple) -> str:
    rows = {}
    for n, (cpu, reqs, wall) in tally.items():
        rows[n] = (reqs / max(wall, 1e-9), cpu / max(reqs, 1) * 1e6, reqs / max(cpu, 1e-9))
    what_is = {"plain": f"plain Apache, `{new_name}.dcz` as a plain file",
               "floor": "plain Apache + the sidecar's access check (bench/floor/), the same file",
               "ours": f"the module, `{new_name}` → `{delta_name}`",
               "alt": f"`--alt-module`, `{new_name}` → `{delta_name}`"}
    lines = [f"### {mode(args)}", "",
             f"`/usr/bin/python3 bench/delta_perf.py --module … {mode_args(args)}`  ",
             f"{time.strftime('%Y-%m-%d %H:%M %Z')}, commit `{git_commit()}`, 1/5/15-minute "
             f"load average {' '.join(f'{x:.2f}' for x in load0)} at the start, "
             f"{' '.join(f'{x:.2f}' for x in load1)} at the end; {args.rounds} rounds of "
             f"{args.seconds} s per server, alternating order, {args.connections} "
             f"{'clients' if args.tls else 'connections'}.", "",
             f"Body: {what}, {new_size} B, as its delta sidecar against the older release: "
             f"{side_size} B (`Content-Encoding: dcz`, checked byte for byte, decoded, "
             "`MULTICOMPRESS_SOURCE=sidecar` before and after the runs).", "",
             "| server | serves | req/s | CPU µs/req | req/CPU-s | × plain | × plain per round "
             "(min / median / max) |",
             "|---|---|---:|---:|---:|---:|---|"]
    for n, (rps, us, per_cpu) in rows.items():
        rr = sorted(per_round[n])
        spread = "" if n == "plain" else \
            f"{rr[0]:.2f} / {statistics.median(rr):.2f} / {rr[-1]:.2f}"
        lines.append(f"| {n} | {what_is[n]} | {rps:,.0f} | {us:.1f} | {per_cpu:,.0f} | "
                     f"{per_cpu / rows['plain'][2]:.2f} | {spread} |")
    ratio = rows["ours"][2] / rows["plain"][2]
    verdict = "met" if ratio >= TARGET else "not met"
    lines += ["", f"Target ≥ {TARGET}× plain's req/CPU-s: **{verdict}** ({ratio:.2f}×)."]
    if "floor" in rows:
        lines.append(f"`floor` (the access check every sidecar hit needs, and nothing else): "
                     f"{rows['floor'][2] / rows['plain'][2]:.2f}× plain; ours × floor: "
                     f"{ratio * rows['plain'][2] / rows['floor'][2]:.2f}.")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
