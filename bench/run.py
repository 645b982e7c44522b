#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/run: the side-by-side server benchmark, in one command.

    bench/run --quick    # about 2 minutes once built: the CI smoke test (no timing assertions)
    bench/run --full     # every corpus file, more levels, longer runs (~20-25 minutes)

Builds the module (Release), fetches the corpus, starts on free 127.0.0.1 ports Apache (Debian's
mpm_event sizing, EnableSendfile Off, EnableMMAP On) with mod_deflate, with mod_brotli, with
mod_multicompress, Apache serving precompressed files as plain files, and nginx with gzip +
ngx_brotli; the same again over TLS + HTTP/2 (a certificate made at bench time) and, for what
sendfile changes, with EnableSendfile On; checks that every body decodes to the original; drives
each with wrk (HTTP/1.1) or h2load (TLS + HTTP/2); measures requests/s, server CPU per request,
bytes per response and RSS growth under 256 slow downloads; writes bench/results/{results.md,
results.json,chart.png,corpus.md}. Exits non-zero only on failures (a server that does not
start, a wrong body, non-2xx responses under load), never on timings. Every server it starts is
stopped by PID on exit, error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import corpus  # noqa: E402
import h2  # noqa: E402
import report  # noqa: E402
import servers  # noqa: E402
import slow_clients  # noqa: E402
from live import MID, MODE_LABEL, OURS, PROTOS, SMALL, LiveRuns, WRK_LUA  # noqa: E402
from once import (ONCE_DURATION, ONCE_ROUNDS, PRECOMPRESS_TOOL, STRONG,  # noqa: E402
                  CompressOnce)
from prepare import Interrupted, build, ensure_deps, fetch, host, log, versions  # noqa: E402

# The RSS test's body: corpus files concatenated (distinct content, ~1.7 MB, ~350 KB gzipped), so
# a stream outlasts what the kernel and the server buffer and its encoder stays in use.
RSS_FILE = "stream.txt"
RSS_PARTS = ["react-dom.development.js", "bootstrap.min.css", "db.json", "apache_pb.svg"]
# Servers in the RSS test get a fixed 64 KiB socket send buffer (Apache SendBufferSize, nginx
# listen sndbuf=): with autotuning, loopback send buffers grow to 4 MB and swallow a whole
# compressed body, so an event-driven server finishes each response at once and the test would
# measure the kernel, not the server. Their Apaches run 4 x 80 threads ("wide"): Debian's 150
# workers could not hold 256 streams at once.
RSS_SEND_BUFFER = 65536


class Bench(LiveRuns, CompressOnce):
    def __init__(self, args):
        self.args = args
        self.quick = args.mode == "quick"
        self.duration = args.duration or (1 if self.quick else 3)
        # Seconds per server and case, split into rounds in alternating order (measure_group):
        # --full 3 runs of 1 s, --quick 1 of 1 s.
        self.rounds = args.rounds or (1 if self.quick else 3)
        self.round_s = max(1, round(self.duration / self.rounds))
        self.once_duration = args.duration or ONCE_DURATION[args.mode]
        self.once_rounds = ONCE_ROUNDS[args.mode]
        self.failures: list[str] = []
        self.warnings: list[str] = []
        self.servers: dict[str, servers.Server] = {}
        self.rss_servers: dict[str, servers.Server] = {}
        self.idle_rss: dict[str, dict] = {}
        self.originals: dict[str, bytes] = {}
        self.body_bytes: dict[tuple, int] = {}
        self.cases: list[dict] = []
        self.rss: list[dict] = []
        self.encoders: list[dict] = []
        self.tmp = ""
        self.cert: tuple[str, str] | None = None
        self.pre_variants: list[tuple[str, int]] = []
        self.wrk: subprocess.Popen | None = None
        self.libfloor: list[str] | None = None
        # compress once
        self.once: list[dict] = []
        self.once_servers: dict[str, servers.Apache] = {}
        self.once_writer = ""
        self.sidecars: dict[tuple[str, str], bytes] = {}
        self.gzip6_bytes: dict[str, int] = {}
        self.probes = 0

    def rss_plan(self, have_ours: bool) -> list[tuple[str, str, int]]:
        if self.quick:
            # One stream set only (zstd starts fastest): 256 brotli streams of stream.txt can
            # take 20-40 s to start on a loaded 2-core machine.
            return [(OURS, "zstd", 3) if have_ours else ("mod_deflate", "gzip", 6)]
        plan = [("mod_deflate", "gzip", 6), ("mod_brotli", "br", 4)]
        if have_ours:
            plan += [(OURS, "gzip", 6), (OURS, "br", 4), (OURS, "zstd", 3)]
        return plan + [("nginx", "gzip", 6), ("nginx", "br", 4)]

    def run_rss(self, srv: servers.Server, server: str, coding: str, level: int) -> dict:
        port = srv.ports[(coding, level)]
        # Warm the server up with a few requests of the same kind, then settle.
        for _ in range(4):
            fetch(port, "/" + RSS_FILE, coding)
        time.sleep(0.5)
        r = slow_clients.run(port, "/" + RSS_FILE, coding, srv.rss_bytes,
                             n=self.args.slow_connections, hold=1.0 if self.quick else 3.0,
                             ramp_timeout=20.0 if self.quick else 40.0)
        r.update({"server": server, "coding": coding, "level": level, "file": RSS_FILE})
        what = f"RSS test {server} {coding}-{level}"
        if r["bad_heads"]:
            self.failures.append(f"{what}: {r['connections'] - r['streams_ok'] - r['streams_waiting']}"
                                 f" streams got no compressed 200 (e.g. {r['bad_heads'][:1]})")
        if r["streams_waiting"]:   # a timing outcome on a loaded machine, not a failure
            self.warnings.append(f"{what}: {r['streams_waiting']} streams had no response head "
                                 f"after {r['ramp_s']} s (still being compressed)")
        time.sleep(1.0)  # let the server notice the closed connections before the next test
        return r

    def run_encoders(self, exe: str, corpus_dir: str, files: list[str], tag: str) -> None:
        """One bench_encoders pass; every benchmark keeps its lowest CPU time over the passes.

        bench/run makes two: one before any server starts and one after the RSS runs, so one noisy
        moment on a shared machine cannot set every limit and floor of the report."""
        sub = os.path.join(self.tmp, f"encoder-inputs-{tag}")
        os.makedirs(sub, exist_ok=True)
        for f in files:
            os.symlink(os.path.join(corpus_dir, f), os.path.join(sub, f))
        out = os.path.join(self.tmp, f"bench_encoders-{tag}.json")
        cmd = [exe, f"--corpus={sub}", f"--levels={'quick' if self.quick else 'full'}",
               f"--benchmark_min_time={0.02 if self.quick else 0.05}",
               "--benchmark_format=json", f"--benchmark_out={out}", "--benchmark_out_format=json"]
        log(f"running bench_encoders ({tag})")
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=900)
        if r.returncode != 0:
            self.failures.append(f"bench_encoders ({tag}) failed: {r.stderr[-1000:]}")
            return
        with open(out) as f:
            runs = json.load(f).get("benchmarks", [])
        kept = {b.get("name"): b for b in self.encoders}
        for b in runs:
            old = kept.get(b.get("name"))
            if old is None or b.get("cpu_time", float("inf")) < old.get("cpu_time", float("inf")):
                kept[b.get("name")] = b
        self.encoders = list(kept.values())

    # --- main ------------------------------------------------------------------------------
    def run(self) -> int:
        t_start = time.monotonic()
        load_start = os.getloadavg()[0]   # before the bench's own load
        args = self.args
        if not args.skip_apt:
            ensure_deps()
        module_path, encoder_exe = None, None
        if args.module:
            module_path = os.path.abspath(args.module)
        if not args.no_build:
            so, encoder_exe = build(args.build_dir, with_module=not args.without_ours
                                    and not args.module)
            module_path = module_path or so
        else:
            cand = os.path.join(args.build_dir, "bench", "bench_encoders")
            encoder_exe = cand if os.path.isfile(cand) else None
            if not module_path and not args.without_ours:
                module_path = os.path.join(args.build_dir, "mod_multicompress", "httpd",
                                           "mod_multicompress.so")
        if args.without_ours:
            module_path = None
        if module_path:   # the servers run with their own ServerRoot
            module_path = os.path.abspath(module_path)
        if module_path and not os.path.isfile(module_path):
            raise RuntimeError(f"module not found: {module_path}")

        self.tmp = tempfile.mkdtemp(prefix="mc-bench-")
        os.chmod(self.tmp, 0o755)   # the servers' workers run as www-data
        docroot = os.path.join(self.tmp, "htdocs")
        log(f"work dir {self.tmp}; fetching the corpus")
        records = corpus.fetch(docroot)
        os.makedirs(args.out, exist_ok=True)
        corpus.write_markdown(records, os.path.join(args.out, "corpus.md"))
        files = [r["name"] for r in records]
        for name in files:
            with open(os.path.join(docroot, name), "rb") as f:
                self.originals[name] = f.read()
        with open(os.path.join(self.tmp, "wrk.lua"), "w") as f:
            f.write(WRK_LUA)
        with open(os.path.join(docroot, RSS_FILE), "wb") as f:
            f.write(b"".join(self.originals[p] for p in RSS_PARTS))

        sizes = {r["name"]: r["size"] for r in records}
        self.libfloor = servers.libfloor_conf(os.path.join(args.build_dir, "bench",
                                                           "mod_mc_libfloor.so"))
        runs = self.plan(files, sizes, module_path is not None)
        if args.modes:
            runs = [r for r in runs if r[0] in args.modes]
        if args.files:
            runs = [r for r in runs if r[1] in args.files]
        rss_plan = self.rss_plan(module_path is not None)
        self.precompress(docroot, runs)
        once_plan = self.once_plan(module_path is not None, args.modes or PROTOS)
        if args.files:
            once_plan = [o for o in once_plan if o[1] in args.files]
        protos = [p for p in PROTOS if any(r[0] == p for r in runs + once_plan)]
        if "h2" in protos:
            self.cert = h2.make_certificate(os.path.join(self.tmp, "tls"))
        if once_plan:
            tool = os.path.join(args.build_dir, PRECOMPRESS_TOOL)
            self.write_sidecars(docroot, once_plan, tool if os.access(tool, os.X_OK) else None)
        for dirpath, dirnames, filenames in os.walk(self.tmp):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
            for n in filenames:
                if not (self.cert and os.path.join(dirpath, n) == self.cert[1]):
                    os.chmod(os.path.join(dirpath, n), 0o644)

        encoder_files = []
        if encoder_exe and not args.no_encoders:
            encoder_files = sorted({r[1] for r in runs if r[4] == OURS
                                    and r[2] != "identity"}) or [MID]
            self.run_encoders(encoder_exe, docroot, encoder_files, "before")
        self.setup_servers(runs, protos, module_path, docroot)
        floor = servers.floor_conf(os.path.join(args.build_dir, "bench", "mod_mc_floor.so"))
        for proto in sorted({p for p, _, _ in once_plan}, key=PROTOS.index):
            srv = self.make_once_server(module_path, docroot, proto)
            self.once_servers[proto] = srv
            if floor is not None:   # keyed apart: once_servers[proto] is the module's
                self.once_servers["floor@" + proto] = self.make_floor_server(docroot, proto, floor)
            for s in (srv, self.once_servers.get("floor@" + proto)):
                if s is not None:
                    log(f"starting {s.label} on ports {sorted(s.ports.values())}")
                    s.start()
        log("checking that every server's bodies decode to the originals")
        self.verify_all(files)
        self.warm_up()
        if self.failures:
            log(f"{len(self.failures)} failed checks; see results.md")

        groups: dict[tuple, list] = {}
        for run in runs:
            groups.setdefault(run[:4], []).append(run)
        log(f"{len(runs)} cases, each {self.rounds} run(s) of {self.round_s} s in "
            "alternating order (wrk for HTTP/1.1, h2load for TLS + HTTP/2)")
        i = 0
        for group in groups.values():
            for case in self.measure_group(group):
                i += 1
                self.cases.append(case)
                log(f"[{i}/{len(runs)}] {case['proto']:11} {case['file']:24} "
                    f"{report.variant(case):8} {case['server']:17} "
                    f"{report._f(case.get('req_per_s')):>7} req/s "
                    f"{report._f(case.get('cpu_us_per_req'), '{:.1f}'):>8} µs CPU/req "
                    f"{report._f(case.get('body_bytes')):>8} B")

        if once_plan:
            self.run_once(once_plan, docroot)
            for srv in self.once_servers.values():
                srv.stop()

        for name, srv in self.servers.items():
            rss, anon = srv.rss_bytes()
            self.idle_rss[name] = {"rss": rss, "anon": anon}
        log("RSS at idle after the throughput runs: " + ", ".join(
            f"{n} {v['rss'] / 2**20:.0f} MiB (anon {v['anon'] / 2**20:.0f})"
            for n, v in self.idle_rss.items()))

        if not args.no_rss:
            # A fresh instance per test, so the baseline is not what earlier load left behind.
            for s, coding, level in rss_plan:
                tag = f"rss-{coding}-{level}-"
                srv = self.make_servers({s: {(coding, level)}}, module_path, docroot, tag,
                                        RSS_SEND_BUFFER, sizing="wide")[s]
                self.rss_servers[tag + s] = srv
                srv.start()
                log(f"RSS: {args.slow_connections} slow {coding}-{level} downloads of {RSS_FILE} "
                    f"from a fresh {s} (SendBufferSize {RSS_SEND_BUFFER})")
                try:
                    r = self.run_rss(srv, s, coding, level)
                finally:
                    srv.stop()
                self.rss.append(r)
                log(f"     {r['streams_ok']}/{r['connections']} streams after {r['ramp_s']} s, "
                    f"RSS +{r['rss_growth'] / 2**20:.1f} MiB, anonymous "
                    f"+{r['anon_growth'] / 2**20:.1f} MiB")

        if encoder_files:
            self.run_encoders(encoder_exe, docroot, encoder_files, "after")

        for name, srv in self.servers.items():
            for line in srv.error_lines()[:5]:
                self.warnings.append(f"{name} error log: {line.strip()}")
        for srv in self.once_servers.values():
            for line in srv.error_lines()[:5]:
                self.warnings.append(f"{srv.label} error log: {line.strip()}")

        report.add_ratios(self.cases)
        report.add_limits(self.cases, self.encoders)
        meta = {
            "command": "bench/run " + " ".join(sys.argv[1:]),
            "mode": args.mode,
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "elapsed_s": time.monotonic() - t_start,
            "host": host(load_start),
            "versions": versions(),
            "duration": self.duration,
            "rounds": self.rounds,
            "round_s": self.round_s,
            "connections": args.connections,
            "wrk_threads": args.wrk_threads,
            "modes": {p: MODE_LABEL[p] for p in protos},
            "rss_file": f"{RSS_FILE} = {' + '.join(RSS_PARTS)}",
            "rss_send_buffer": RSS_SEND_BUFFER,
            "once_writer": self.once_writer,
            "once_rounds": self.once_rounds,
            "once_duration": self.once_duration,
            "once_levels": STRONG,
            "failures": self.failures,
            "warnings": self.warnings,
        }
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump({"meta": meta, "corpus": records, "cases": self.cases, "rss": self.rss,
                       "idle_rss": self.idle_rss, "encoders": self.encoders, "once": self.once},
                      f, indent=1)
        with open(os.path.join(args.out, "results.md"), "w") as f:
            f.write(report.markdown(meta, self.cases, self.rss, self.idle_rss, self.encoders,
                                    files, MID, SMALL, self.once, sizes))
        try:
            report.chart(self.cases, files, os.path.join(args.out, "chart.png"),
                         f"requests per server CPU-second ({args.mode}, {meta['date']})")
        except Exception as e:  # noqa: BLE001 - a chart problem is not a benchmark failure
            self.warnings.append(f"chart not written: {e}")
        if not self.quick and args.out == os.path.join(HERE, "results") and not self.failures:
            report.update_readme(os.path.join(HERE, "README.md"), meta, self.cases, self.rss,
                                 MID, SMALL, self.once, sizes)
        log(f"wrote {args.out}/results.md, results.json, chart.png, corpus.md "
            f"in {time.monotonic() - t_start:.0f} s")
        for line in self.failures:
            log(f"FAILED: {line}")
        return 1 if self.failures else 0

    def cleanup(self) -> None:
        if self.wrk is not None and self.wrk.poll() is None:
            self.wrk.kill()
            self.wrk.wait(5)
        others = list(self.rss_servers.items()) + [(s.label, s) for s in self.once_servers.values()]
        for name, srv in list(self.servers.items()) + others:
            try:
                srv.stop()
            except Exception as e:  # noqa: BLE001 - keep stopping the others
                print(f"[bench] stopping {name}: {e}", file=sys.stderr)
        if self.tmp and not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
        elif self.tmp:
            log(f"kept {self.tmp}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="CI smoke test: 3 files, default levels, 1 s runs (~2 min once built)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="every file, more levels, 3 runs of 1 s (~20-25 min)")
    p.add_argument("--duration", type=int,
                   help="seconds per server and case (default 1 quick, 3 full), split into "
                        "--rounds runs; compress once: seconds per run (default 1)")
    p.add_argument("--rounds", type=int,
                   help="runs per server and case, in alternating server order, that share "
                        "--duration (default 1 quick, 3 full)")
    p.add_argument("--connections", type=int, default=16,
                   help="wrk connections / h2load clients of one connection each (default 16)")
    p.add_argument("--wrk-threads", type=int, default=1,
                   help="wrk / h2load threads (default 1)")
    p.add_argument("--slow-connections", type=int, default=256,
                   help="connections of the RSS test (default 256)")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench"))
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--module", help="use this mod_multicompress.so instead of building it")
    p.add_argument("--without-ours", action="store_true",
                   help="leave mod_multicompress out (e.g. while it does not build)")
    p.add_argument("--no-build", action="store_true", help="use what --build-dir has")
    p.add_argument("--skip-apt", action="store_true", help="do not install missing packages")
    p.add_argument("--no-rss", action="store_true", help="skip the slow-download RSS test")
    p.add_argument("--no-encoders", action="store_true", help="skip bench_encoders")
    p.add_argument("--no-once", action="store_true",
                   help="skip the compress-once comparison (sidecar and cache hits)")
    p.add_argument("--modes", type=lambda v: v.split(","),
                   help=f"only these modes, comma-separated ({','.join(PROTOS)}; default all)")
    p.add_argument("--files", type=lambda v: v.split(","),
                   help="only these corpus files (names, comma-separated) in the throughput runs "
                        "and the compress-once comparison")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (configs, logs)")
    args = p.parse_args()
    if args.modes and not set(args.modes) <= set(PROTOS):
        p.error(f"--modes takes {', '.join(PROTOS)}")
    args.out = os.path.abspath(args.out)
    if os.geteuid() != 0:
        print("bench/run: needs root (it starts httpd and nginx as root, workers as www-data)",
              file=sys.stderr)
        return 2

    def on_signal(signum, _frame):
        raise Interrupted(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    bench = Bench(args)
    try:
        return bench.run()
    except Interrupted as e:
        log(f"interrupted ({e}); stopping servers")
        return 130
    except Exception as e:  # noqa: BLE001 - report, stop the servers, exit non-zero
        log(f"FAILED: {e}")
        for name, srv in list(bench.servers.items()) + list(bench.once_servers.items()):
            if srv.proc is not None and srv.proc.poll() is not None:
                log(f"{name} has exited:\n{srv.log_tail()}")
        return 1
    finally:
        # No second Ctrl-C in the middle of stopping the servers.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
