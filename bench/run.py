#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/run: the side-by-side benchmark of issue 5, in one command.

    bench/run --quick    # < 2 minutes, the CI smoke test (no timing assertions)
    bench/run --full     # every corpus file, more levels, longer runs (~15 minutes)

Builds the module (Release), fetches the corpus, starts on free 127.0.0.1 ports Apache with
mod_deflate, with mod_brotli, with mod_multicompress, Apache serving precompressed files as plain
files, and nginx with gzip + ngx_brotli; checks that every server's compressed body decodes to the
original; drives each with wrk; measures requests/s, server CPU per request, bytes per response
and RSS growth under 256 slow downloads; writes bench/results/{results.md,results.json,chart.png,
corpus.md}. Exits non-zero only on failures (a server that does not start, a wrong body, wrk
errors), never on timings. Every server it starts is stopped by PID on exit, error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import corpus  # noqa: E402
import report  # noqa: E402
import servers  # noqa: E402
import slow_clients  # noqa: E402

# (Debian package, how to tell it is there)
APT_DEPS = [
    ("apache2", "/usr/sbin/apache2"),
    ("apache2-dev", "/usr/bin/apxs"),
    ("nginx", "/usr/sbin/nginx"),
    ("libnginx-mod-http-brotli-filter", servers.NGINX_BROTLI),
    ("wrk", "/usr/bin/wrk"),
    ("cmake", "/usr/bin/cmake"),
    ("g++", "/usr/bin/g++"),
    ("pkg-config", "/usr/bin/pkg-config"),
    ("zlib1g-dev", "/usr/include/zlib.h"),
    ("libbrotli-dev", "/usr/include/brotli/encode.h"),
    ("libzstd-dev", "/usr/include/zstd.h"),
    ("libdeflate-dev", "/usr/include/libdeflate.h"),
    ("libbenchmark-dev", "/usr/include/benchmark/benchmark.h"),
    ("npm", "/usr/bin/npm"),
    ("python3-matplotlib", "py:matplotlib"),
    ("python3-brotli", "py:brotli"),
    ("python3-zstandard", "py:zstandard"),
    # corpus files from Debian packages
    ("python3-dev", "/usr/share/doc/python3/python-policy.html"),
    ("valgrind", "/usr/share/doc/valgrind/html/licenses.html"),
    ("apache2-data", "/usr/share/apache2/icons/apache_pb.svg"),
]

MID = "manual.html"     # the mid-size HTML of the targets
SMALL = "small.html"    # the 2.5 KB page
# The RSS test's body: corpus files concatenated (distinct content, ~1.7 MB, ~350 KB gzipped), so
# a stream outlasts what the kernel and the server buffer and its encoder stays in use.
RSS_FILE = "stream.txt"
RSS_PARTS = ["react-dom.development.js", "bootstrap.min.css", "db.json", "apache_pb.svg"]
# Servers in the RSS test get a fixed 64 KiB socket send buffer (Apache SendBufferSize, nginx
# listen sndbuf=): with autotuning, loopback send buffers grow to 4 MB and swallow a whole
# compressed body, so an event-driven server finishes each response at once and the test would
# measure the kernel, not the server.
RSS_SEND_BUFFER = 65536

# Compress once (issue 6): a sidecar hit and a cache hit of mod_multicompress against the same
# strong-level bytes served by plain Apache as plain files ("precompressed"). The strong levels
# are the precompress tool's and MultiCompressCacheLevel's defaults.
ONCE_FILES = [MID, "jquery.min.js", "bootstrap.min.css"]
ONCE_CODINGS = ["zstd", "br", "gzip"]
ONCE_QUICK = [(MID, "zstd")]
STRONG = {"zstd": 19, "br": 11, "gzip": 9}
ONCE_DIR = "once"          # under the docroot: static/ (files + sidecars), cache/ (files only)
ONCE_NOTE = "mcsource"     # MultiCompressNote source NAME, logged by the verification vhost
ONCE_TARGET = 0.9          # issue 6: >= 0.9x precompressed req/CPU-s
# Each (file, coding) is measured in rounds, alternating the order precompressed, sidecar, cache
# and the reverse, so a load that drifts during the runs weighs on all of them alike; each row sums
# its rounds: 4 runs of 1 s in --quick, 4 of 2 s in --full (--duration sets the run length).
ONCE_ROUNDS = 4
ONCE_DURATION = {"quick": 1, "full": 2}
ONCE_SERVERS = ["precompressed", "ours-sidecar", "ours-cache", "precompressed (cache bytes)"]
PRECOMPRESS_TOOL = os.path.join("mod_multicompress", "tools", "multicompress-precompress")

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


class Interrupted(Exception):
    pass


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------
def _present(check: str) -> bool:
    if check.startswith("py:"):
        try:
            __import__(check[3:])
            return True
        except ImportError:
            return False
    return os.path.exists(check)


def ensure_deps() -> None:
    missing = [pkg for pkg, check in APT_DEPS if not _present(check)]
    if not missing:
        return
    log(f"installing Debian packages: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, timeout=600)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                   check=True, env=env, timeout=1200, stdout=subprocess.DEVNULL)
    still = [pkg for pkg, check in APT_DEPS if not _present(check)]
    if still:
        raise RuntimeError(f"still missing after apt-get install: {' '.join(still)}")


def build(build_dir: str, with_module: bool) -> tuple[str | None, str | None]:
    """Configures and builds (Release); returns (module .so, bench_encoders) paths."""
    log(f"building in {build_dir} (Release)")
    cfg = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
           "-DMC_BUILD_TESTS=OFF", f"-DMC_BUILD_MODULE={'ON' if with_module else 'OFF'}"]
    # Only what the bench needs (the module, the precompress tool for the sidecars, not the
    # tests), so --quick stays short on a fresh checkout.
    targets = ["mc_core"] + (["mod_multicompress", "multicompress-precompress"]
                             if with_module else [])
    if os.path.exists("/usr/include/benchmark/benchmark.h"):
        targets.append("bench_encoders")
    for cmd in (cfg, ["cmake", "--build", build_dir, "-j2", "--target", *targets]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{(r.stdout + r.stderr)[-4000:]}")
    so = os.path.join(build_dir, "mod_multicompress", "httpd", "mod_multicompress.so")
    enc = os.path.join(build_dir, "bench", "bench_encoders")
    if with_module and not os.path.isfile(so):
        raise RuntimeError(f"build succeeded but {so} is missing")
    return (so if with_module else None), (enc if os.path.isfile(enc) else None)


def versions() -> dict[str, str]:
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            return (r.stdout + r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"

    def dpkg(pkg):
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                           text=True)
        return r.stdout.strip() or "?"

    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "?"
    return {
        "mod_multicompress": git,
        "apache2": first_line([servers.APACHE_BIN, "-v"]).replace("Server version: ", ""),
        "nginx": first_line([servers.NGINX_BIN, "-v"]).replace("nginx version: ", ""),
        "ngx_brotli": dpkg("libnginx-mod-http-brotli-filter"),
        "zlib": dpkg("zlib1g"),
        "brotli": dpkg("libbrotli1"),
        "zstd": dpkg("libzstd1"),
        "wrk": dpkg("wrk"),
    }


def host(load_start: float) -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{os.cpu_count()} CPUs ({model}), {platform.system()} {platform.release()}, "
            f"1-minute load average {load_start:.2f} at the start, "
            f"{os.getloadavg()[0]:.2f} at the end")


# ---------------------------------------------------------------------------------------------
def compress(coding: str, level: int, data: bytes) -> bytes:
    if coding == "gzip":
        c = zlib.compressobj(level, zlib.DEFLATED, 31, 8)
        return c.compress(data) + c.flush()
    if coding == "br":
        import brotli
        return brotli.compress(data, quality=level)
    import zstandard
    return zstandard.ZstdCompressor(level=level).compress(data)


def decode(coding: str, body: bytes) -> bytes:
    if coding == "identity":
        return body
    if coding == "gzip":
        d = zlib.decompressobj(31)
        out = d.decompress(body)
        if not d.eof or d.unused_data:
            raise ValueError("gzip stream not properly terminated")
        return out
    if coding == "br":
        import brotli
        return brotli.decompress(body)
    import zstandard
    d = zstandard.ZstdDecompressor().decompressobj()
    out = d.decompress(body)
    if not d.eof:
        raise ValueError("zstd frame not finished")
    return out


def fetch(port: int, path: str, encoding: str) -> tuple[int, dict[str, str], bytes]:
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": encoding})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.mode == "quick"
        self.duration = args.duration or (1 if self.quick else 3)
        # Seconds per server and case, split into rounds in alternating order (measure_group):
        # --full 3 runs of 1 s, --quick 1 of 1 s.
        self.rounds = args.rounds or (1 if self.quick else 3)
        self.round_s = max(1, round(self.duration / self.rounds))
        self.once_duration = args.duration or ONCE_DURATION[args.mode]
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
        self.pre_variants: list[tuple[str, int]] = []
        self.wrk: subprocess.Popen | None = None
        # compress once (issue 6)
        self.once: list[dict] = []
        self.once_server: servers.Apache | None = None
        self.once_writer = ""
        self.sidecars: dict[tuple[str, str], bytes] = {}
        self.gzip6_bytes: dict[str, int] = {}
        self.probes = 0

    # --- plan ------------------------------------------------------------------------------
    def plan(self, files: list[str], have_ours: bool) -> list[tuple[str, str, int, str]]:
        """(file, coding, level, server) for every throughput run."""
        by_coding = {
            "gzip": ["mod_deflate", "mod_multicompress", "nginx", "precompressed"],
            "br": ["mod_brotli", "mod_multicompress", "nginx", "precompressed"],
            "zstd": ["mod_multicompress", "precompressed"],
            "identity": ["precompressed", "mod_multicompress"],
        }
        if self.quick:
            tp_files = [MID, SMALL]
            main = [("identity", 0), ("gzip", 6), ("br", 4), ("zstd", 3)]
            extra: list[tuple[str, int]] = []
        else:
            tp_files = files
            main = [("identity", 0), ("gzip", 6), ("br", 4), ("br", 5), ("zstd", 3)]
            extra = [("gzip", 1), ("gzip", 9), ("br", 1), ("br", 11), ("zstd", 1), ("zstd", 5),
                     ("zstd", 6), ("zstd", 9), ("zstd", 19)]
        runs = []
        for f in tp_files:
            for coding, level in main + (extra if f == MID else []):
                servers_for = list(by_coding[coding])
                if coding == "identity" and not self.quick and f in (MID, SMALL):
                    servers_for.append("nginx")   # nginx's own uncompressed baseline
                for s in servers_for:
                    if s == "mod_multicompress" and not have_ours:
                        continue
                    runs.append((f, coding, level, s))
        return runs

    def rss_plan(self, have_ours: bool) -> list[tuple[str, str, int]]:
        if self.quick:
            # One stream set only (zstd starts fastest): 256 brotli streams of stream.txt can
            # take 20-40 s to start on a loaded 2-core machine.
            return [("mod_multicompress", "zstd", 3) if have_ours else ("mod_deflate", "gzip", 6)]
        plan = [("mod_deflate", "gzip", 6), ("mod_brotli", "br", 4)]
        if have_ours:
            plan += [("mod_multicompress", "gzip", 6), ("mod_multicompress", "br", 4),
                     ("mod_multicompress", "zstd", 3)]
        return plan + [("nginx", "gzip", 6), ("nginx", "br", 4)]

    # --- setup -----------------------------------------------------------------------------
    def url(self, server: str, file: str, coding: str, level: int) -> tuple[int, str]:
        srv = self.servers[server]
        if server == "precompressed":
            port = srv.ports[("identity", 0)]
            if coding == "identity":
                return port, "/" + file
            return port, f"/pre/{coding}-{level}/{file}.{servers.PRE_EXT[coding]}"
        return srv.ports[(coding, level if coding != "identity" else 0)], "/" + file

    def setup_servers(self, runs, module_path: str | None, docroot: str) -> None:
        keys: dict[str, set] = {name: set() for name in
                                ("mod_deflate", "mod_brotli", "nginx", "precompressed")}
        if module_path:
            keys["mod_multicompress"] = set()
        # Every server also gets its default variants, so the decode check covers all files.
        keys["mod_deflate"].add(("gzip", 6))
        keys["mod_brotli"].add(("br", 4))
        keys["nginx"] |= {("gzip", 6), ("br", 4), ("identity", 0)}
        keys["precompressed"].add(("identity", 0))
        if module_path:
            keys["mod_multicompress"] |= {("gzip", 6), ("br", 4), ("zstd", 3), ("identity", 0)}
        for f, coding, level, s in runs:
            if s != "precompressed":
                keys[s].add((coding, level))
        self.servers = self.make_servers(keys, module_path, docroot, "", None)
        for name, srv in self.servers.items():
            log(f"starting {name} on ports {sorted(srv.ports.values())}")
            srv.start()

    def make_servers(self, keys: dict[str, set], module_path: str | None, docroot: str,
                     prefix: str, send_buffer: int | None) -> dict[str, servers.Server]:
        ports = iter(servers.free_ports(sum(len(v) for v in keys.values())))
        out: dict[str, servers.Server] = {}
        for name, ks in keys.items():
            pmap = {k: next(ports) for k in sorted(ks)}
            wd = os.path.join(self.tmp, prefix + name)
            if name == "nginx":
                out[name] = servers.Nginx(wd, docroot, pmap, send_buffer)
            else:
                variant = {"mod_deflate": "deflate", "mod_brotli": "brotli",
                           "mod_multicompress": "multicompress", "precompressed": "plain"}[name]
                out[name] = servers.Apache(variant, wd, docroot, pmap, module_path, send_buffer)
        return out

    def precompress(self, docroot: str, variants: set[tuple[str, int]]) -> None:
        for coding, level in sorted(variants):
            d = os.path.join(docroot, "pre", f"{coding}-{level}")
            os.makedirs(d, exist_ok=True)
            for name, data in self.originals.items():
                with open(os.path.join(d, f"{name}.{servers.PRE_EXT[coding]}"), "wb") as f:
                    f.write(compress(coding, level, data))

    # --- checks and measurements -----------------------------------------------------------
    def verify(self, server: str, file: str, coding: str, level: int) -> int | None:
        """Fetches once, checks headers and that the body decodes to the original; returns the
        body length (bytes on the wire per response, headers excluded)."""
        key = (server, file, coding, level)
        if key in self.body_bytes:
            return self.body_bytes[key]
        port, path = self.url(server, file, coding, level)
        what = f"{server} {file} {coding}-{level}"
        try:
            status, headers, body = fetch(port, path, coding)
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
        if coding != "identity" and server != "precompressed" \
                and "accept-encoding" not in headers.get("vary", "").lower():
            self.warnings.append(f"{what}: no Vary: Accept-Encoding")
        self.body_bytes[key] = len(body)
        return len(body)

    def verify_all(self, files: list[str]) -> None:
        """Every file from every server in its default variants (and every precompressed copy
        at the default levels); the other levels are checked when measured."""
        defaults = {("identity", 0), ("gzip", 6), ("br", 4), ("zstd", 3)}
        for name, srv in self.servers.items():
            keys = ({("identity", 0)} | (set(self.pre_variants) & defaults)
                    if name == "precompressed" else set(srv.ports) & defaults)
            for coding, level in sorted(keys):
                for f in files:
                    self.verify(name, f, coding, level)

    def run_wrk(self, port: int, path: str, encoding: str, connections: int,
                duration: int | None = None) -> dict:
        duration = duration or self.duration
        cmd = ["wrk", f"-t{self.args.wrk_threads}", f"-c{connections}",
               f"-d{duration}s", "--timeout", "10s", "-s", os.path.join(self.tmp, "wrk.lua"),
               "-H", f"Accept-Encoding: {encoding}", f"http://127.0.0.1:{port}{path}"]
        self.wrk = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, start_new_session=True)
        try:
            out, _ = self.wrk.communicate(timeout=duration + 30)
        except subprocess.TimeoutExpired:
            self.wrk.kill()
            self.wrk.communicate()
            raise RuntimeError(f"wrk did not finish: {' '.join(cmd)}")
        finally:
            self.wrk = None
        for line in out.splitlines():
            if line.startswith("WRKJSON "):
                return json.loads(line[8:])
        raise RuntimeError(f"no wrk summary from {' '.join(cmd)}:\n{out[-2000:]}")

    def load(self, srv: servers.Server, port: int, path: str, coding: str, conns: int,
             duration: int | None = None) -> tuple[dict, float]:
        """One wrk run; returns wrk's summary and the server CPU seconds it took."""
        cpu0 = srv.cpu_seconds()
        w = self.run_wrk(port, path, coding, conns, duration)
        return w, srv.cpu_seconds() - cpu0

    def measure_group(self, group: list[tuple[str, str, int, str]]) -> list[dict]:
        """The servers of one (file, coding, level), measured in self.rounds rounds of
        self.round_s seconds each, in alternating order (forward, reverse, ...), so a load that
        drifts during the runs (a shared machine) weighs on every server alike; each case sums
        its rounds."""
        cases, active = [], []
        for file, coding, level, server in group:
            case = {"file": file, "coding": coding, "level": level, "server": server}
            case["body_bytes"] = self.verify(server, file, coding, level)
            cases.append(case)
            if case["body_bytes"] is not None:
                active.append(case)
        tally = {id(c): {"requests": 0, "seconds": 0.0, "bytes": 0, "cpu": 0.0, "p50": [],
                         "p99": [], "errors": dict.fromkeys(
                             ("connect", "read", "write", "status", "timeout"), 0)}
                 for c in active}
        for r in range(self.rounds):
            for case in active if r % 2 == 0 else active[::-1]:
                coding, level = case["coding"], case["level"]
                srv = self.servers[case["server"]]
                port, path = self.url(case["server"], case["file"], coding, level)
                # br 10-11 and zstd 16+ take ~0.2 s of CPU per 88 KB: with 8 connections
                # sharing 2 cores few requests would complete in a short run.
                slow = (coding == "br" and level >= 10) or (coding == "zstd" and level >= 16)
                case["connections"] = min(2, self.args.connections) if slow \
                    else self.args.connections
                w, cpu = self.load(srv, port, path, coding, case["connections"], self.round_s)
                t = tally[id(case)]
                t["requests"] += w["requests"]
                t["seconds"] += w["duration_us"] / 1e6
                t["bytes"] += w["bytes"]
                t["cpu"] += cpu
                t["p50"].append(w["lat_p50_us"])
                t["p99"].append(w["lat_p99_us"])
                for k in t["errors"]:
                    t["errors"][k] += w[k]
        for case in active:
            t = tally[id(case)]
            rss, anon = self.servers[case["server"]].rss_bytes()
            reqs, secs, cpu = t["requests"], t["seconds"], t["cpu"]
            case.update({
                "requests": reqs,
                "rounds": self.rounds,
                "seconds": secs,
                "server_rss_after": rss,
                "server_anon_rss_after": anon,
                "server_cpu_s": cpu,
                "req_per_s": reqs / secs if secs else None,
                "cpu_us_per_req": cpu / reqs * 1e6 if reqs else None,
                "req_per_cpu_s": reqs / cpu if cpu > 0 else None,
                "wrk_bytes_per_req": t["bytes"] / reqs if reqs else None,
                "latency_p50_us": sorted(t["p50"])[len(t["p50"]) // 2],
                "latency_p99_us": max(t["p99"]),
                "errors": t["errors"],
            })
            what = f"{case['server']} {case['file']} {case['coding']}-{case['level']}"
            if reqs == 0:   # a timing outcome (e.g. a loaded machine), not a failure
                self.warnings.append(f"{what}: no request completed in {secs:.0f} s")
            if t["errors"]["status"]:
                self.failures.append(
                    f"{what}: {t['errors']['status']} non-2xx/3xx responses under load")
            if sum(t["errors"][k] for k in ("connect", "read", "write", "timeout")):
                self.warnings.append(f"{what}: wrk socket errors {case['errors']}")
        return cases

    # --- compress once (issue 6) -----------------------------------------------------------
    def once_plan(self, have_ours: bool) -> list[tuple[str, str]]:
        """(file, coding) of the sidecar / cache / precompressed comparison."""
        if not have_ours or self.args.no_once:
            return []
        if self.quick:
            return list(ONCE_QUICK)
        return [(f, c) for f in ONCE_FILES for c in ONCE_CODINGS]

    def write_sidecars(self, docroot: str, plan: list[tuple[str, str]], tool: str | None) -> None:
        """Copies the files into once/static (where their sidecars are written, with the
        project's precompress tool when it is built, else with Python's writers at the same
        levels) and once/cache (no sidecars: served through the cache)."""
        static = os.path.join(docroot, ONCE_DIR, "static")
        cache = os.path.join(docroot, ONCE_DIR, "cache")
        for d in (static, cache):
            os.makedirs(d, exist_ok=True)
        files = sorted({f for f, _ in plan})
        codings = [c for c in ONCE_CODINGS if any(pc == c for _, pc in plan)]
        for f in files:
            for d in (static, cache):
                shutil.copyfile(os.path.join(docroot, f), os.path.join(d, f))
        levels = ",".join(f"{c}={STRONG[c]}" for c in codings)
        if tool:
            cmd = [tool, "--no-progress", "-j2", "-e", ",".join(codings), "-l", levels, static]
            log(f"writing sidecars ({levels}) with {' '.join(cmd)}")
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} exited with {r.returncode}:\n"
                                   f"{(r.stdout + r.stderr)[-2000:]}")
            self.once_writer = f"`multicompress-precompress -e {','.join(codings)} -l {levels}`"
        else:
            log(f"writing sidecars ({levels}) with Python's writers "
                f"(no {PRECOMPRESS_TOOL} in the build directory)")
            for f in files:
                src = os.path.join(static, f)
                st = os.stat(src)
                for c in codings:
                    side = f"{src}.{servers.PRE_EXT[c]}"
                    with open(side, "wb") as out:
                        out.write(compress(c, STRONG[c], self.originals[f]))
                    os.utime(side, ns=(st.st_atime_ns, st.st_mtime_ns))   # fresh: same mtime
            self.once_writer = f"Python zlib/brotli/zstandard ({levels})"
        for f, c in plan:
            side = os.path.join(static, f"{f}.{servers.PRE_EXT[c]}")
            if not os.path.isfile(side):
                raise RuntimeError(f"no sidecar {side} was written")
            with open(side, "rb") as fh:
                self.sidecars[(f, c)] = fh.read()
        for f in files:
            self.gzip6_bytes[f] = len(compress("gzip", 6, self.originals[f]))

    def make_once_server(self, module_path: str, docroot: str) -> servers.Apache:
        """mod_multicompress with MultiCompressStatic On over once/static and MultiCompressCache
        On (shmcb, the default store) over once/cache. Two virtual hosts with the same directory
        configuration and the same cache: "once" is measured (no access log, like every server
        here), "once-verify" logs the source note for the checks."""
        ports = servers.free_ports(2)
        pmap = {("once", 0): ports[0], ("once-verify", 0): ports[1]}
        wd = os.path.join(self.tmp, "ours-once")
        base = os.path.join(docroot, ONCE_DIR)
        extra = [
            f"MultiCompressNote source {ONCE_NOTE}",
            f"<Directory {base}/static>",
            "    MultiCompressStatic On",
            "</Directory>",
            f"<Directory {base}/cache>",
            "    MultiCompressCache On",
            *[f"    MultiCompressCacheLevel {c} {STRONG[c]}" for c in ONCE_CODINGS],
            "</Directory>",
        ]
        fmt = f"%{{{ONCE_NOTE}}}n %>s %B %{{Content-Encoding}}o %U%q"
        vhost = {("once-verify", 0): [f'CustomLog {wd}/access.log "{fmt}"']}
        return servers.Apache("multicompress", wd, docroot, pmap, module_path, extra_conf=extra,
                              vhost_conf=vhost, mods=["socache_shmcb"],
                              label="mod_multicompress (compress once)")

    def once_probe(self, path: str, coding: str) -> tuple[str, int, dict, bytes]:
        """GET from the compress-once server's logging virtual host; returns the source its
        access log gives (sidecar, cache, live, identity), the status, headers and body."""
        srv = self.once_server
        self.probes += 1
        tag = f"?probe={self.probes}"
        status, headers, body = fetch(srv.ports[("once-verify", 0)], path + tag, coding)
        # httpd writes the line after the response, so it may come a moment later.
        log_path = os.path.join(srv.workdir, "access.log")
        deadline = time.monotonic() + 5.0
        while True:
            try:
                with open(log_path, errors="replace") as f:
                    for line in f:
                        parts = line.split()
                        if parts and parts[-1].endswith(tag):
                            return parts[0], status, headers, body
            except FileNotFoundError:
                pass
            if time.monotonic() > deadline:
                return "(no access log line)", status, headers, body
            time.sleep(0.05)

    def once_check(self, what: str, file: str, coding: str, status: int, headers: dict,
                   body: bytes, expect: bytes | None = None) -> bool:
        if status != 200:
            self.failures.append(f"{what}: HTTP {status}")
            return False
        ce = headers.get("content-encoding", "identity")
        if ce != coding:
            self.failures.append(f"{what}: Content-Encoding {ce!r}, expected {coding!r}")
            return False
        try:
            plain = decode(coding, body)
        except Exception as e:  # noqa: BLE001 - any decoder error is a failed check
            self.failures.append(f"{what}: body does not decode: {e}")
            return False
        if plain != self.originals[file]:
            self.failures.append(f"{what}: decoded body differs from the original "
                                 f"({len(plain)} vs {len(self.originals[file])} bytes)")
            return False
        if expect is not None and body != expect:
            self.failures.append(f"{what}: {len(body)} bytes, not the {len(expect)} bytes "
                                 "expected")
            return False
        return True

    def once_prepare(self, file: str, coding: str, docroot: str) -> dict[str, tuple]:
        """Checks each way of serving the strong bytes once (decodes to the original; the
        source note says sidecar / cache, not live) and warms the cache up until the strong
        copy has landed. Returns {server: (Server, port, path, body bytes)} for the ones that
        passed."""
        level = STRONG[coding]
        ext = servers.PRE_EXT[coding]
        side = self.sidecars[(file, coding)]
        pre = self.servers["precompressed"]
        pre_port = pre.ports[("identity", 0)]
        once = self.once_server
        port = once.ports[("once", 0)]
        tag = f"{file} {coding}-{level}"
        units: dict[str, tuple] = {}

        # precompressed: the sidecar file itself, served by plain Apache as a plain file.
        path = f"/{ONCE_DIR}/static/{file}.{ext}"
        st, h, body = fetch(pre_port, path, coding)
        if self.once_check(f"precompressed {tag} ({path})", file, coding, st, h, body, side):
            units["precompressed"] = (pre, pre_port, path, len(body))

        # ours-sidecar: the note on the logging vhost, then the body on the measured one.
        path = f"/{ONCE_DIR}/static/{file}"
        src, st, h, body = self.once_probe(path, coding)
        what = f"ours-sidecar {tag}"
        if self.once_check(what, file, coding, st, h, body):
            if src != "sidecar":
                self.failures.append(f"{what}: source note {src!r}, expected 'sidecar'")
            elif self.once_check(what, file, coding, st, h, body, side):
                st, h, body = fetch(port, path, coding)
                if self.once_check(what + " (measured vhost)", file, coding, st, h, body, side):
                    units["ours-sidecar"] = (once, port, path, len(body))

        # ours-cache: the first request is a miss (live); the background thread then stores
        # the strong copy. Poll until a hit returns it.
        path = f"/{ONCE_DIR}/cache/{file}"
        what = f"ours-cache {tag}"
        t0 = time.monotonic()
        limit = 30.0 if self.quick else 90.0
        seen: list[str] = []
        live_len = None
        cache_body = None
        while True:
            src, st, h, body = self.once_probe(path, coding)
            if not self.once_check(what, file, coding, st, h, body):
                break
            if not seen or seen[-1] != src:
                seen.append(src)
            if src == "live" and live_len is None:
                live_len = len(body)
            # The strong copy: the sidecar's bytes (same core, same level), or at least not the
            # size of the live-level copy that the miss stored.
            if src == "cache" and (body == side or (live_len is not None and len(body) != live_len)):
                cache_body = body
                break
            if time.monotonic() - t0 > limit:
                self.failures.append(f"{what}: no hit on the strong copy after {limit:.0f} s "
                                     f"(sources seen: {' → '.join(seen)}; live body {live_len} B, "
                                     f"last {len(body)} B, sidecar {len(side)} B)")
                break
            time.sleep(0.2)
        if cache_body is not None:
            if seen[0] != "live":
                self.warnings.append(f"{what}: the first request was {seen[0]!r}, not a miss")
            log(f"     {what}: {' → '.join(seen)} in {time.monotonic() - t0:.1f} s "
                f"(live {live_len} B → cached {len(cache_body)} B"
                f"{', = sidecar' if cache_body == side else ', ≠ sidecar ' + str(len(side)) + ' B'})")
            st, h, body = fetch(port, path, coding)
            if self.once_check(what + " (measured vhost)", file, coding, st, h, body, cache_body):
                units["ours-cache"] = (once, port, path, len(body))
                if cache_body != side:
                    # Compare with plain Apache serving these very bytes too.
                    d = os.path.join(docroot, ONCE_DIR, "pre-cache", coding)
                    os.makedirs(d, exist_ok=True)
                    for sub in (os.path.dirname(d), d):
                        os.chmod(sub, 0o755)
                    name = f"{file}.{ext}"
                    with open(os.path.join(d, name), "wb") as f:
                        f.write(cache_body)
                    os.chmod(os.path.join(d, name), 0o644)
                    ppath = f"/{ONCE_DIR}/pre-cache/{coding}/{name}"
                    st, h, body = fetch(pre_port, ppath, coding)
                    if self.once_check(f"precompressed (cache bytes) {tag}", file, coding, st, h,
                                       body, cache_body):
                        units["precompressed (cache bytes)"] = (pre, pre_port, ppath, len(body))
        return units

    def once_measure(self, file: str, coding: str, units: dict[str, tuple]) -> list[dict]:
        level = STRONG[coding]
        order = [n for n in ONCE_SERVERS if n in units]
        tot = {n: {"requests": 0, "seconds": 0.0, "cpu": 0.0, "status": 0, "socket": 0}
               for n in order}
        rounds = ONCE_ROUNDS
        for rnd in range(rounds):
            for n in order if rnd % 2 == 0 else order[::-1]:
                srv, port, path, _ = units[n]
                w, cpu = self.load(srv, port, path, coding, self.args.connections,
                                   self.once_duration)
                t = tot[n]
                t["requests"] += w["requests"]
                t["seconds"] += w["duration_us"] / 1e6
                t["cpu"] += cpu
                t["status"] += w["status"]
                t["socket"] += sum(w[k] for k in ("connect", "read", "write", "timeout"))
        # Still served from the sidecar / the cache after the load?
        for n, want in (("ours-sidecar", "sidecar"), ("ours-cache", "cache")):
            if n in units:
                src, st, _, body = self.once_probe(units[n][2], coding)
                if src != want or len(body) != units[n][3]:
                    self.warnings.append(f"{n} {file} {coding}-{level}: after the runs the source "
                                         f"is {src!r} with {len(body)} B (was {want!r}, "
                                         f"{units[n][3]} B)")
        rows = []
        for n in order:
            t = tot[n]
            reqs, secs, cpu = t["requests"], t["seconds"], t["cpu"]
            body = units[n][3]
            g6 = self.gzip6_bytes[file]
            row = {
                "file": file, "coding": coding, "level": level, "server": n,
                "path": units[n][2], "rounds": rounds, "connections": self.args.connections,
                "requests": reqs, "seconds": secs, "server_cpu_s": cpu,
                "req_per_s": reqs / secs if secs else None,
                "cpu_us_per_req": cpu / reqs * 1e6 if reqs else None,
                "req_per_cpu_s": reqs / cpu if cpu > 0 else None,
                "body_bytes": body, "gzip6_bytes": g6, "saved_vs_gzip6": 1 - body / g6,
                "comparator": None, "x_precompressed": None,
            }
            what = f"{n} {file} {coding}-{level}"
            if reqs == 0:
                self.warnings.append(f"{what}: no request completed")
            if t["status"]:
                self.failures.append(f"{what}: {t['status']} non-2xx/3xx responses under load")
            if t["socket"]:
                self.warnings.append(f"{what}: {t['socket']} wrk socket errors")
            rows.append(row)
        by = {r["server"]: r for r in rows}
        for r in rows:
            comp = None
            if r["server"] == "ours-sidecar":
                comp = "precompressed"
            elif r["server"] == "ours-cache":
                comp = "precompressed (cache bytes)" if "precompressed (cache bytes)" in by \
                    else "precompressed"
            a = by.get(comp) if comp else None
            r["comparator"] = comp
            if a and a.get("req_per_cpu_s") and r.get("req_per_cpu_s"):
                r["x_precompressed"] = r["req_per_cpu_s"] / a["req_per_cpu_s"]
        for r in rows:
            log(f"     {file:18} {coding}-{level:<3} {r['server']:27} "
                f"{report._f(r['req_per_s']):>7} req/s {report._f(r['cpu_us_per_req'], '{:.1f}'):>7}"
                f" µs CPU/req {report._f(r['req_per_cpu_s']):>6} req/CPU-s "
                f"×{report._f(r['x_precompressed'], '{:.2f}'):>5} {r['body_bytes']:>6} B "
                f"({r['saved_vs_gzip6'] * 100:.1f}% smaller than gzip-6)")
        return rows

    def run_once(self, plan: list[tuple[str, str]], docroot: str) -> None:
        n = 3 * len(plan) * ONCE_ROUNDS
        log(f"compress once (issue 6): {len(plan)} file/coding pairs, ~{n} wrk runs of "
            f"{self.once_duration} s")
        for f, coding in plan:
            units = self.once_prepare(f, coding, docroot)
            if not units:
                continue
            self.once += self.once_measure(f, coding, units)

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

    def run_encoders(self, exe: str, corpus_dir: str, files: list[str]) -> None:
        sub = os.path.join(self.tmp, "encoder-inputs")
        os.makedirs(sub, exist_ok=True)
        for f in files:
            os.symlink(os.path.join(corpus_dir, f), os.path.join(sub, f))
        out = os.path.join(self.tmp, "bench_encoders.json")
        cmd = [exe, f"--corpus={sub}", f"--levels={'quick' if self.quick else 'full'}",
               f"--benchmark_min_time={0.02 if self.quick else 0.1}",
               "--benchmark_format=json", f"--benchmark_out={out}", "--benchmark_out_format=json"]
        log("running bench_encoders")
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=900)
        if r.returncode != 0:
            self.failures.append(f"bench_encoders failed: {r.stderr[-1000:]}")
            return
        with open(out) as f:
            self.encoders = json.load(f).get("benchmarks", [])

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

        runs = self.plan(files, module_path is not None)
        rss_plan = self.rss_plan(module_path is not None)
        self.pre_variants = sorted({(c, lvl) for _, c, lvl, _ in runs if c != "identity"})
        self.precompress(docroot, set(self.pre_variants))
        once_plan = self.once_plan(module_path is not None)
        if once_plan:
            tool = os.path.join(args.build_dir, PRECOMPRESS_TOOL)
            self.write_sidecars(docroot, once_plan, tool if os.access(tool, os.X_OK) else None)
        for dirpath, dirnames, filenames in os.walk(self.tmp):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
            for n in filenames:
                os.chmod(os.path.join(dirpath, n), 0o644)

        self.setup_servers(runs, module_path, docroot)
        if once_plan:
            self.once_server = self.make_once_server(module_path, docroot)
            log(f"starting {self.once_server.label} on ports "
                f"{sorted(self.once_server.ports.values())}")
            self.once_server.start()
        log("checking that every server's bodies decode to the originals")
        self.verify_all(files)
        if self.failures:
            log(f"{len(self.failures)} failed checks; see results.md")

        groups: dict[tuple, list] = {}
        for run in runs:
            groups.setdefault(run[:3], []).append(run)
        log(f"{len(runs)} cases, each {self.rounds} wrk run(s) of {self.round_s} s in "
            "alternating order")
        i = 0
        for group in groups.values():
            for case in self.measure_group(group):
                i += 1
                self.cases.append(case)
                log(f"[{i}/{len(runs)}] {case['file']:26} {report.variant(case):9} "
                    f"{case['server']:18} {report._f(case.get('req_per_s')):>7} req/s "
                    f"{report._f(case.get('cpu_us_per_req'), '{:.1f}'):>8} µs CPU/req "
                    f"{report._f(case.get('body_bytes')):>8} B")

        if once_plan:
            self.run_once(once_plan, docroot)
            self.once_server.stop()

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
                                        RSS_SEND_BUFFER)[s]
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

        if encoder_exe and not args.no_encoders:
            self.run_encoders(encoder_exe, docroot,
                              [MID, SMALL] if self.quick else files)

        for name, srv in self.servers.items():
            for line in srv.error_lines()[:5]:
                self.warnings.append(f"{name} error log: {line.strip()}")
        if self.once_server is not None:
            for line in self.once_server.error_lines()[:5]:
                self.warnings.append(f"{self.once_server.label} error log: {line.strip()}")

        report.add_ratios(self.cases)
        report.add_limits(self.cases, self.encoders)
        sizes = {r["name"]: r["size"] for r in records}
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
            "rss_file": f"{RSS_FILE} = {' + '.join(RSS_PARTS)}",
            "rss_send_buffer": RSS_SEND_BUFFER,
            "once_writer": self.once_writer,
            "once_rounds": ONCE_ROUNDS,
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
        others = list(self.rss_servers.items())
        if self.once_server is not None:
            others.append((self.once_server.label, self.once_server))
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
                      help="CI smoke test: 2 files, default levels, 1 s runs (< 2 min once built)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="every file, more levels, 3 s runs (~15 min)")
    p.add_argument("--duration", type=int,
                   help="seconds per wrk run (default 1 quick, 3 full; compress once: 1, 2)")
    p.add_argument("--rounds", type=int,
                   help="wrk runs per server and case, in alternating server order, that share "
                        "--duration (default 1 quick, 3 full)")
    p.add_argument("--connections", type=int, default=8, help="wrk connections (default 8)")
    p.add_argument("--wrk-threads", type=int, default=1, help="wrk threads (default 1)")
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
                   help="skip the compress-once comparison (sidecar and cache hits, issue 6)")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (configs, logs)")
    args = p.parse_args()
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
        for name, srv in bench.servers.items():
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
