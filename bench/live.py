# SPDX-License-Identifier: Apache-2.0
"""bench/run's throughput runs: which (mode, file, coding, level, server) are measured, the
servers behind them, the check of every body before timing, and the load (wrk over HTTP/1.1,
h2load over TLS + HTTP/2) in rounds of alternating server order."""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict

import h2
import nginx_server
import servers
from prepare import compress, decode, fetch, log
# LIBFLOOR: bench/floor/mod_mc_libfloor.c in plain Apache, a handler that answers with the
# library's one call for the file and nothing else (`MCLibFloor CODING LEVEL`), beside ours on
# every live row at the default levels: what a live response costs any module in this Apache,
# measured in the same rounds (the limit adds bench_encoders' hot-loop time of the call instead).
from report import LIBFLOOR

MID = "manual.html"              # the mid-size HTML of the targets
SMALL = "small.html"             # the 2.5 KB page
STYLESHEET = "font-awesome.min.css"   # the mid-size stylesheet (31 KB)
OURS = "mod_multicompress"
# Protocol modes. h1: HTTP/1.1 in Debian's defaults (EnableSendfile Off, EnableMMAP On), the
# headline; h1-sendfile: the same with EnableSendfile On; h2: TLS + HTTP/2 (sendfile cannot
# apply under TLS).
PROTOS = ["h1", "h1-sendfile", "h2"]
MODE_LABEL = {
    "h1": "HTTP/1.1, EnableSendfile Off (Debian's default)",
    "h1-sendfile": "HTTP/1.1, EnableSendfile On",
    "h2": "TLS + HTTP/2",
}
H2_MIN_SIZE = 30 * 1024          # --full: TLS + HTTP/2 rows for files this large (+ SMALL)
DEFAULTS = {("identity", 0), ("gzip", 6), ("br", 4), ("zstd", 3)}
# Plain Apache at its cheapest (EnableMMAP Off, and EnableSendfile On where sendfile can apply)
# serving the br-4 copy (within a few % of the gzip-6 one's size): Apache's own cost of sending
# those bytes, the floor's base for the gzip-6 and br-4 rows.
NOMMAP = "precompressed (no mmap)"
SLOW_SIZE = 512 * 1024   # live rows of files this large run with 2 connections
SENDFILE_FILES = {"jquery.min.js", "bootstrap.min.css"}   # with MID: the compress-once files

WRK_LUA = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"lat_p50_us":%.0f,"lat_p99_us":%.0f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(99)))
end
"""


class LoadTimeout(RuntimeError):
    """A load generator that had to be killed: that run counts nothing (a warning)."""


# Rows served as plain files (by plain Apache or nginx): no Vary expected, copies under pre/.
FILE_ROWS = ("precompressed", "nginx (static)", NOMMAP)


def skey(server: str, proto: str) -> str:
    """The name of the server instance behind a row's server in a mode ("nginx (static)" is a
    port of the mode's nginx)."""
    base = {"nginx (static)": "nginx", NOMMAP: "precompressed-nommap",
            LIBFLOOR: "libfloor"}.get(server, server)
    return base if proto == "h1" else f"{base}@{proto}"


class LiveRuns:
    """Mixin of bench/run's Bench: uses its args, quick, tmp, cert, servers, originals,
    body_bytes, pre_variants, failures, warnings, rounds, round_s, wrk and libfloor (the
    LoadModule line of bench/floor's mod_mc_libfloor, or None when it is not built)."""

    skey = staticmethod(skey)

    # --- plan ------------------------------------------------------------------------------
    def plan(self, files: list[str], sizes: dict[str, int],
             have_ours: bool) -> list[tuple[str, str, str, int, str]]:
        """(mode, file, coding, level, server) for every throughput run."""
        by_coding = {
            "gzip": ["mod_deflate", OURS, "nginx", "precompressed"],
            "br": ["mod_brotli", OURS, "nginx", "precompressed"],
            "zstd": [OURS, "precompressed"],
            "identity": ["precompressed", OURS],
        }
        main = [("identity", 0), ("gzip", 6), ("br", 4), ("zstd", 3)]
        # Identity rows of ours and nginx (not needed for a limit) only on these files outside h1.
        id_files = {MID, SMALL, STYLESHEET}
        if self.quick:
            h1_files, h2_files, sf_files = [MID, SMALL], [STYLESHEET], [MID]
            extra: list[tuple[str, int]] = []
        else:
            h1_files = files
            h2_files = [f for f in files if sizes[f] >= H2_MIN_SIZE] + [SMALL]
            # with sendfile: the pages of the targets and the files of the compress-once runs
            sf_files = [f for f in files if f in id_files or f in SENDFILE_FILES]
            extra = [("gzip", 9), ("br", 5), ("br", 11), ("zstd", 19)]
        runs = []

        def add(proto, f, coding, level, names):
            if have_ours and self.libfloor and OURS in names and (coding, level) in DEFAULTS \
                    and coding != "identity":
                names = names + [LIBFLOOR]
            runs.extend((proto, f, coding, level, s) for s in names if have_ours or s != OURS)

        floor_files = set(h2_files) | {MID, SMALL}   # the targets' files and the small page
        for f in h1_files:
            for coding, level in main + (extra if f == MID else []):
                names = by_coding[coding]
                if coding == "identity" and f in (MID, SMALL, STYLESHEET):
                    names = names + ["nginx"]     # nginx's own uncompressed baseline
                if (coding, level) == ("br", 4) and f in floor_files:
                    names = names + [NOMMAP]
                add("h1", f, coding, level, names)
        for f in h2_files:
            for coding, level in main:
                if coding == "identity":   # plain Apache's row is every h2 limit's base
                    names = ["precompressed"] + ([OURS, "nginx"] if f in id_files else [])
                else:
                    names = by_coding[coding] + (["nginx (static)"] if coding != "zstd" else []) \
                        + ([NOMMAP] if coding == "br" else [])
                add("h2", f, coding, level, names)
        for f in sf_files:
            add("h1-sendfile", f, "identity", 0, ["precompressed", OURS])
        return runs

    # --- servers ---------------------------------------------------------------------------
    def url(self, server: str, file: str, coding: str, level: int, proto: str) -> tuple[int, str]:
        srv = self.servers[skey(server, proto)]
        if server in ("precompressed", NOMMAP):
            port = srv.ports[("identity", 0)]
            if coding == "identity":
                return port, "/" + file
            return port, f"/pre/{coding}-{level}/{file}.{servers.PRE_EXT[coding]}"
        if server == "nginx (static)":   # gzip_static / brotli_static find FILE.gz / FILE.br
            return srv.ports[("static", 0)], f"/pre/{coding}-{level}/{file}"
        return srv.ports[(coding, level if coding != "identity" else 0)], "/" + file

    def setup_servers(self, runs, protos: list[str], module_path: str | None,
                      docroot: str) -> None:
        keys: dict[str, set] = defaultdict(set)
        # Every server also gets its default variants, so the decode check covers all files.
        for p in protos:
            keys[skey("precompressed", p)].add(("identity", 0))
            if module_path:
                keys[skey(OURS, p)] |= {("identity", 0)} if p == "h1-sendfile" else DEFAULTS
            if p == "h1-sendfile":
                continue
            keys[skey("mod_deflate", p)].add(("gzip", 6))
            keys[skey("mod_brotli", p)].add(("br", 4))
            keys[skey("nginx", p)] |= {("gzip", 6), ("br", 4), ("identity", 0), ("static", 0)}
        for p, f, coding, level, s in runs:
            if s == NOMMAP:
                keys[skey(s, p)].add(("identity", 0))
            elif s not in FILE_ROWS:
                keys[skey(s, p)].add((coding, level))
        self.servers = self.make_servers(keys, module_path, docroot, "", None)
        for name, srv in self.servers.items():
            srv.start()
        log(f"started {len(self.servers)} servers: " + ", ".join(self.servers))

    def make_servers(self, keys: dict[str, set], module_path: str | None, docroot: str,
                     prefix: str, send_buffer: int | None,
                     sizing: str = "debian") -> dict[str, servers.Server]:
        ports = iter(servers.free_ports(sum(len(v) for v in keys.values())))
        out: dict[str, servers.Server] = {}
        for name, ks in keys.items():
            pmap = {k: next(ports) for k in sorted(ks)}
            base, _, proto = name.partition("@")
            tls = self.cert if proto == "h2" else None
            wd = os.path.join(self.tmp, prefix + name.replace("@", "-"))
            if base == "nginx":
                out[name] = nginx_server.Nginx(wd, docroot, pmap, send_buffer, tls=tls, label=name)
            elif base == "libfloor":
                out[name] = servers.Apache(
                    "plain", wd, docroot, pmap, None, send_buffer, extra_conf=self.libfloor,
                    vhost_conf={k: [f"MCLibFloor {k[0]} {k[1]}"] for k in pmap}, label=name,
                    sizing=sizing, tls=tls, sendfile=proto == "h1-sendfile")
            else:
                nommap = base == "precompressed-nommap"
                variant = {"mod_deflate": "deflate", "mod_brotli": "brotli",
                           OURS: "multicompress", "precompressed": "plain",
                           "precompressed-nommap": "plain"}[base]
                out[name] = servers.Apache(variant, wd, docroot, pmap, module_path, send_buffer,
                                           label=name, sizing=sizing, tls=tls,
                                           sendfile=proto == "h1-sendfile" or nommap,
                                           mmap=not nommap)
        return out

    def precompress(self, docroot: str, runs) -> None:
        """The copies plain Apache and nginx (static) serve: every file at the default levels
        (the decode check covers them all), the other levels only for the files measured."""
        want = {(f, c, lvl) for f in self.originals for c, lvl in DEFAULTS if c != "identity"}
        want |= {(f, c, lvl) for _, f, c, lvl, s in runs
                 if c != "identity" and s in FILE_ROWS}
        self.pre_variants = sorted({(c, lvl) for _, c, lvl in want})
        for name, coding, level in sorted(want):
            d = os.path.join(docroot, "pre", f"{coding}-{level}")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"{name}.{servers.PRE_EXT[coding]}"), "wb") as f:
                f.write(compress(coding, level, self.originals[name]))

    # --- checks ----------------------------------------------------------------------------
    def fetch_any(self, proto: str, port: int, path: str, coding: str):
        """One GET in the mode's protocol: (status, headers, body as sent)."""
        if proto == "h2":
            return h2.fetch(port, path, coding, self.tmp)
        return fetch(port, path, coding)

    def verify(self, server: str, file: str, coding: str, level: int,
               proto: str) -> int | None:
        """Fetches once, checks headers and that the body decodes to the original; returns the
        body length (bytes on the wire per response, headers excluded)."""
        key = (proto, server, file, coding, level)
        if key in self.body_bytes:
            return self.body_bytes[key]
        port, path = self.url(server, file, coding, level, proto)
        what = f"[{proto}] {server} {file} {coding}-{level}"
        try:
            status, headers, body = self.fetch_any(proto, port, path, coding)
        except OSError as e:
            self.failures.append(f"{what}: fetch failed: {e}")
            return None
        if status != 200:
            self.failures.append(f"{what}: HTTP {status}")
            return None
        ce = headers.get("content-encoding", "identity")
        if ce != coding:
            self.failures.append(f"{what}: Content-Encoding {ce!r}, expected {coding!r}")
            return None
        try:
            plain = decode(coding, body)
        except Exception as e:  # noqa: BLE001 - any decoder error is a failed check
            self.failures.append(f"{what}: body does not decode: {e}")
            return None
        if plain != self.originals[file]:
            self.failures.append(f"{what}: decoded body differs from the original "
                                 f"({len(plain)} vs {len(self.originals[file])} bytes)")
            return None
        if coding != "identity" and server not in FILE_ROWS \
                and "accept-encoding" not in headers.get("vary", "").lower():
            self.warnings.append(f"{what}: no Vary: Accept-Encoding")
        self.body_bytes[key] = len(body)
        return len(body)

    def verify_all(self, files: list[str]) -> None:
        """Every file from every server in its default variants (and every precompressed copy
        at the default levels, as plain Apache and nginx's *_static serve them), in every mode;
        the other levels are checked when measured."""
        pre = set(self.pre_variants) & DEFAULTS
        for name, srv in self.servers.items():
            base, _, proto = name.partition("@")
            proto = proto or "h1"
            rows = [({"libfloor": LIBFLOOR}.get(base, base), set(srv.ports) & DEFAULTS)]
            if base in ("precompressed", "precompressed-nommap"):
                rows = [(NOMMAP if base.endswith("nommap") else base, {("identity", 0)} | pre)]
            elif base == "nginx" and ("static", 0) in srv.ports:
                rows.append(("nginx (static)", {(c, lvl) for c, lvl in pre if c != "zstd"}))
            for server, keys in rows:
                for coding, level in sorted(keys):
                    for f in files:
                        self.verify(server, f, coding, level, proto)

    def warm_up(self, tries: int = 6) -> None:
        """Every compressing server sends the largest file `tries` times, each over a new
        connection, at every coding it serves up to level 6, before anything is timed: the
        state a server of a whole site is in. glibc raises a process's mmap and trim thresholds
        once it frees a large mapped block; until then nginx's workers (and Apache's stock
        modules) give their heap back after every response and fault it in again, 2.5-8x the
        CPU of a br-4 response (bench/results/br4-stylesheet.md), and which of nginx's two
        workers got the one request of the decode check decided its mode row by row."""
        largest = max(self.originals, key=lambda f: len(self.originals[f]))
        for name, srv in self.servers.items():
            base, _, proto = name.partition("@")
            proto = proto or "h1"
            if base not in (OURS, "nginx", "mod_deflate", "mod_brotli", "libfloor"):
                continue
            for coding, level in sorted(srv.ports):
                if coding not in ("gzip", "br", "zstd") or level > 6:
                    continue
                for _ in range(tries):
                    try:
                        self.fetch_any(proto, srv.ports[(coding, level)], "/" + largest, coding)
                    except OSError as e:
                        self.warnings.append(f"[{proto}] {base} warm-up: {e}")
                        break

    # --- load ------------------------------------------------------------------------------
    def _run_load(self, proc: subprocess.Popen, cmd_text: str, timeout: float) -> str:
        self.wrk = proc
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise LoadTimeout(f"the load generator did not finish in {timeout:.0f} s: {cmd_text}")
        finally:
            self.wrk = None
        return out

    def run_wrk(self, port: int, path: str, encoding: str, connections: int,
                duration: int) -> dict:
        cmd = ["wrk", f"-t{self.args.wrk_threads}", f"-c{connections}",
               f"-d{duration}s", "--timeout", "10s", "-s", os.path.join(self.tmp, "wrk.lua"),
               "-H", f"Accept-Encoding: {encoding}", f"http://127.0.0.1:{port}{path}"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        out = self._run_load(proc, " ".join(cmd), duration + 30)
        for line in out.splitlines():
            if line.startswith("WRKJSON "):
                return json.loads(line[8:])
        raise RuntimeError(f"no wrk summary from {' '.join(cmd)}:\n{out[-2000:]}")

    def load(self, proto: str, srv: servers.Server, port: int, path: str, coding: str,
             conns: int, duration: int) -> tuple[dict, float]:
        """One run of the mode's load generator; returns its summary and the server CPU
        seconds it took."""
        cpu0 = srv.cpu_seconds()
        if proto == "h2":
            proc, parse = h2.load(port, path, coding, conns, duration, self.args.wrk_threads)
            w = parse(self._run_load(proc, f"h2load -c{conns} {port}{path}", duration + 60))
        else:
            w = self.run_wrk(port, path, coding, conns, duration)
        return w, srv.cpu_seconds() - cpu0

    def measure_group(self, group: list[tuple[str, str, str, int, str]]) -> list[dict]:
        """The servers of one (mode, file, coding, level), measured in self.rounds rounds of
        self.round_s seconds each, in alternating order (forward, reverse, ...), so a load that
        drifts during the runs (a shared machine) weighs on every server alike; each case sums
        its rounds."""
        cases, active = [], []
        for proto, file, coding, level, server in group:
            case = {"proto": proto, "file": file, "coding": coding, "level": level,
                    "server": server}
            case["body_bytes"] = self.verify(server, file, coding, level, proto)
            cases.append(case)
            if case["body_bytes"] is not None:
                active.append(case)
        tally = {id(c): {"requests": 0, "seconds": 0.0, "bytes": 0, "cpu": 0.0, "p50": [],
                         "p99": [], "errors": dict.fromkeys(
                             ("connect", "read", "write", "status", "timeout"), 0)}
                 for c in active}
        for r in range(self.rounds):
            for case in active if r % 2 == 0 else active[::-1]:
                proto, coding, level = case["proto"], case["coding"], case["level"]
                srv = self.servers[skey(case["server"], proto)]
                port, path = self.url(case["server"], case["file"], coding, level, proto)
                # br 10-11 and zstd 16+ take ~0.2 s of CPU per 88 KB, and any live coding of a
                # 1 MB file tens of ms: with many connections sharing 2 cores few requests would
                # complete in a short run, and the ones still in flight when it ends (whose CPU
                # counts, not the request) would weigh on the row.
                slow = (coding == "br" and level >= 10) or (coding == "zstd" and level >= 16) \
                    or (coding != "identity" and case["server"] not in FILE_ROWS
                        and len(self.originals[case["file"]]) >= SLOW_SIZE)
                case["connections"] = min(2, self.args.connections) if slow \
                    else self.args.connections
                try:
                    w, cpu = self.load(proto, srv, port, path, coding, case["connections"],
                                       self.round_s)
                except LoadTimeout as e:
                    self.warnings.append(str(e))
                    continue
                t = tally[id(case)]
                t["requests"] += w["requests"]
                t["seconds"] += w["duration_us"] / 1e6
                t["bytes"] += w["bytes"]
                t["cpu"] += cpu
                if w.get("lat_p50_us") is not None:
                    t["p50"].append(w["lat_p50_us"])
                    t["p99"].append(w["lat_p99_us"])
                for k in t["errors"]:
                    t["errors"][k] += w[k]
        for case in active:
            t = tally[id(case)]
            reqs, secs, cpu = t["requests"], t["seconds"], t["cpu"]
            case.update({
                "requests": reqs,
                "rounds": self.rounds,
                "seconds": secs,
                "server_cpu_s": cpu,
                "req_per_s": reqs / secs if secs else None,
                "cpu_us_per_req": cpu / reqs * 1e6 if reqs else None,
                "req_per_cpu_s": reqs / cpu if cpu > 0 else None,
                "load_bytes_per_req": t["bytes"] / reqs if reqs else None,
                "latency_p50_us": sorted(t["p50"])[len(t["p50"]) // 2] if t["p50"] else None,
                "latency_p99_us": max(t["p99"]) if t["p99"] else None,
                "errors": t["errors"],
            })
            what = f"[{case['proto']}] {case['server']} {case['file']} " \
                   f"{case['coding']}-{case['level']}"
            if reqs == 0:   # a timing outcome (e.g. a loaded machine), not a failure
                self.warnings.append(f"{what}: no request completed in {secs:.0f} s")
            if t["errors"]["status"]:
                self.failures.append(
                    f"{what}: {t['errors']['status']} non-2xx/3xx responses under load")
            if sum(t["errors"][k] for k in ("connect", "read", "write", "timeout")):
                self.warnings.append(f"{what}: socket errors under load {case['errors']}")
        return cases
