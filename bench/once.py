# SPDX-License-Identifier: Apache-2.0
"""bench/run's compress-once comparison: mod_multicompress serving sidecars (`MultiCompressStatic`)
and cache hits (`MultiCompressCache`) against plain Apache serving the very same bytes as plain
files, and nginx serving the same sidecar files (`gzip_static`, `brotli_static`), in each
protocol mode (HTTP/1.1 with sendfile off and on, TLS + HTTP/2)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import servers
from prepare import compress, decode, fetch, log

# The strong levels are the precompress tool's and MultiCompressCacheLevel's defaults.
MID = "manual.html"
ONCE_FILES = [MID, "jquery.min.js", "bootstrap.min.css"]
ONCE_CODINGS = ["zstd", "br", "gzip"]
ONCE_QUICK = [(MID, "br")]
STRONG = {"zstd": 19, "br": 11, "gzip": 9}
ONCE_DIR = "once"          # under the docroot: static/ (files + sidecars), cache/ (files only)
ONCE_NOTE = "mcsource"     # MultiCompressNote source NAME, logged by the verification vhost
# Each (mode, file, coding) is measured in rounds, alternating the order of the servers and the
# reverse, so a load that drifts during the runs weighs on all of them alike; a row sums its
# rounds (--duration sets the run length).
ONCE_ROUNDS = {"quick": 2, "full": 3}
ONCE_DURATION = {"quick": 1, "full": 1}
FLOOR = "floor (access check)"
ONCE_SERVERS = ["precompressed", FLOOR, "ours-sidecar", "ours-cache",
                "precompressed (cache bytes)", "nginx (static)"]
PRECOMPRESS_TOOL = os.path.join("mod_multicompress", "tools", "multicompress-precompress")


class CompressOnce:
    """Mixin of bench/run's Bench: uses its args, quick, tmp, servers, originals, failures,
    warnings, cert, skey(), fetch_any() and load()."""

    def once_plan(self, have_ours: bool, protos: list[str]) -> list[tuple[str, str, str]]:
        """(mode, file, coding) of the sidecar / cache / precompressed comparison."""
        if not have_ours or self.args.no_once:
            return []
        pairs = ONCE_QUICK if self.quick else [(f, c) for f in ONCE_FILES for c in ONCE_CODINGS]
        return [(p, f, c) for p in protos for f, c in pairs]

    def write_sidecars(self, docroot: str, plan: list[tuple[str, str, str]],
                       tool: str | None) -> None:
        """Copies the files into once/static (where their sidecars are written, with the
        project's precompress tool when it is built, else with Python's writers at the same
        levels) and once/cache (no sidecars: served through the cache)."""
        static = os.path.join(docroot, ONCE_DIR, "static")
        cache = os.path.join(docroot, ONCE_DIR, "cache")
        for d in (static, cache):
            os.makedirs(d, exist_ok=True)
        files = sorted({f for _, f, _ in plan})
        codings = [c for c in ONCE_CODINGS if any(pc == c for _, _, pc in plan)]
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
        for _, f, c in plan:
            side = os.path.join(static, f"{f}.{servers.PRE_EXT[c]}")
            if not os.path.isfile(side):
                raise RuntimeError(f"no sidecar {side} was written")
            with open(side, "rb") as fh:
                self.sidecars[(f, c)] = fh.read()
        for f in files:
            self.gzip6_bytes[f] = len(compress("gzip", 6, self.originals[f]))

    def make_once_server(self, module_path: str, docroot: str, proto: str) -> servers.Apache:
        """mod_multicompress with MultiCompressStatic On over once/static and MultiCompressCache
        On (shmcb, the default store) over once/cache. Two virtual hosts with the same directory
        configuration and the same store, each filling its own entries: "once" is measured (no
        access log, like every server here; TLS + HTTP/2 in the h2 mode), "once-verify"
        (HTTP/1.1) logs the source note for the checks."""
        ports = servers.free_ports(2)
        pmap = {("once", 0): ports[0], ("once-verify", 0): ports[1]}
        wd = os.path.join(self.tmp, f"ours-once-{proto}")
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
                              label=f"mod_multicompress (compress once, {proto})",
                              sendfile=proto == "h1-sendfile",
                              tls=self.cert if proto == "h2" else None,
                              plain_ports={("once-verify", 0)})

    def make_floor_server(self, docroot: str, proto: str, conf: list[str]) -> servers.Apache:
        """The `floor (access check)` row's server: plain Apache, configured as the
        `precompressed` one of the mode, plus bench/floor/mod_mc_floor.so, the subrequest lookup
        and access hooks the module runs before it sends any sidecar, and nothing else."""
        wd = os.path.join(self.tmp, f"floor-{proto}")
        return servers.Apache("plain", wd, docroot, {("identity", 0): servers.free_ports(1)[0]},
                              extra_conf=conf, label=f"{FLOOR} ({proto})",
                              sendfile=proto == "h1-sendfile",
                              tls=self.cert if proto == "h2" else None)

    def once_probe(self, proto: str, path: str, coding: str) -> tuple[str, int, dict, bytes]:
        """GET from the compress-once server's logging virtual host; returns the source its
        access log gives (sidecar, cache, live, identity), the status, headers and body."""
        srv = self.once_servers[proto]
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

    def _checked(self, what, proto, file, coding, port, path, expect=None) -> int | None:
        """Fetches once in the mode's protocol; the body length when every check passed."""
        try:
            st, h, body = self.fetch_any(proto, port, path, coding)
        except OSError as e:
            self.failures.append(f"{what}: fetch failed: {e}")
            return None
        return len(body) if self.once_check(what, file, coding, st, h, body, expect) else None

    def once_prepare(self, proto: str, file: str, coding: str, docroot: str) -> dict[str, tuple]:
        """Checks each way of serving the strong bytes once (decodes to the original; the
        source note says sidecar / cache, not live) and warms the cache up until the strong
        copy has landed. Returns {server: (Server, port, path, body bytes)} for the ones that
        passed."""
        level = STRONG[coding]
        ext = servers.PRE_EXT[coding]
        side = self.sidecars[(file, coding)]
        pre = self.servers[self.skey("precompressed", proto)]
        pre_port = pre.ports[("identity", 0)]
        once = self.once_servers[proto]
        port = once.ports[("once", 0)]
        tag = f"[{proto}] {file} {coding}-{level}"
        units: dict[str, tuple] = {}

        # precompressed: the sidecar file itself, served by plain Apache as a plain file.
        path = f"/{ONCE_DIR}/static/{file}.{ext}"
        n = self._checked(f"precompressed {tag} ({path})", proto, file, coding, pre_port, path,
                          side)
        if n is not None:
            units["precompressed"] = (pre, pre_port, path, n)
        # floor: the same file from plain Apache after the access check a sidecar hit needs.
        fl = self.once_servers.get("floor@" + proto)
        if fl is not None:
            fport = fl.ports[("identity", 0)]
            n = self._checked(f"{FLOOR} {tag} ({path})", proto, file, coding, fport, path, side)
            if n is not None:
                units[FLOOR] = (fl, fport, path, n)

        # nginx (static): the same sidecar through gzip_static / brotli_static (no zstd there).
        ngx = self.servers.get(self.skey("nginx", proto))
        if ngx is not None and ("static", 0) in ngx.ports and coding in ("gzip", "br"):
            path = f"/{ONCE_DIR}/static/{file}"
            n = self._checked(f"nginx (static) {tag}", proto, file, coding,
                              ngx.ports[("static", 0)], path, side)
            if n is not None:
                units["nginx (static)"] = (ngx, ngx.ports[("static", 0)], path, n)

        # ours-sidecar: the note on the logging vhost, then the body on the measured one.
        path = f"/{ONCE_DIR}/static/{file}"
        src, st, h, body = self.once_probe(proto, path, coding)
        what = f"ours-sidecar {tag}"
        if self.once_check(what, file, coding, st, h, body):
            if src != "sidecar":
                self.failures.append(f"{what}: source note {src!r}, expected 'sidecar'")
            elif self.once_check(what, file, coding, st, h, body, side):
                n = self._checked(what + " (measured vhost)", proto, file, coding, port, path,
                                  side)
                if n is not None:
                    units["ours-sidecar"] = (once, port, path, n)

        # ours-cache: the first request is a miss (live); the background thread then stores
        # the strong copy. Poll until a hit returns it.
        path = f"/{ONCE_DIR}/cache/{file}"
        what = f"ours-cache {tag}"
        t0 = time.monotonic()
        limit = 30.0 if self.quick else 90.0
        seen: list[str] = []
        live_len = None
        cache_body = None
        first_hit = None
        while True:
            src, st, h, body = self.once_probe(proto, path, coding)
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
            # Or the live copy kept as final: the worker keeps it when the strong level makes no
            # fewer bytes (a strong copy takes well under a second for these files).
            if src == "cache" and first_hit is None:
                first_hit = time.monotonic()
            if first_hit is not None and time.monotonic() - first_hit > limit / 3:
                cache_body = body
                self.warnings.append(f"{what}: the cache kept the live copy ({len(body)} B; "
                                     f"the sidecar is {len(side)} B)")
                break
            if time.monotonic() - t0 > limit:
                self.failures.append(f"{what}: no hit on the strong copy after {limit:.0f} s "
                                     f"(sources seen: {' → '.join(seen)}; live body {live_len} B, "
                                     f"last {len(body)} B, sidecar {len(side)} B)")
                break
            time.sleep(0.2)
        if cache_body is None:
            return units
        if seen[0] != "live":
            self.warnings.append(f"{what}: the first request was {seen[0]!r}, not a miss")
        log(f"     {what}: {' → '.join(seen)} in {time.monotonic() - t0:.1f} s "
            f"(live {live_len} B → cached {len(cache_body)} B"
            f"{', = sidecar' if cache_body == side else ', ≠ sidecar ' + str(len(side)) + ' B'})")
        # A cache entry belongs to the virtual host that filled it: the measured vhost warms
        # its own entry, polled until it returns the same strong copy.
        t1 = time.monotonic()
        while True:
            try:
                body = self.fetch_any(proto, port, path, coding)[2]
            except OSError:
                body = b""
            if body == cache_body or time.monotonic() - t1 > limit:
                break
            time.sleep(0.2)
        n = self._checked(what + " (measured vhost)", proto, file, coding, port, path, cache_body)
        if n is None:
            return units
        units["ours-cache"] = (once, port, path, n)
        if cache_body != side:
            # Compare with plain Apache serving these very bytes too.
            d = os.path.join(docroot, ONCE_DIR, "pre-cache", proto, coding)
            os.makedirs(d, exist_ok=True)
            for sub in (os.path.dirname(os.path.dirname(d)), os.path.dirname(d), d):
                os.chmod(sub, 0o755)
            name = f"{file}.{ext}"
            with open(os.path.join(d, name), "wb") as f:
                f.write(cache_body)
            os.chmod(os.path.join(d, name), 0o644)
            ppath = f"/{ONCE_DIR}/pre-cache/{proto}/{coding}/{name}"
            n = self._checked(f"precompressed (cache bytes) {tag}", proto, file, coding, pre_port,
                              ppath, cache_body)
            if n is not None:
                units["precompressed (cache bytes)"] = (pre, pre_port, ppath, n)
        return units

    def once_measure(self, proto: str, file: str, coding: str,
                     units: dict[str, tuple]) -> list[dict]:
        level = STRONG[coding]
        order = [n for n in ONCE_SERVERS if n in units]
        tot = {n: {"requests": 0, "seconds": 0.0, "cpu": 0.0, "status": 0, "socket": 0}
               for n in order}
        rounds = self.once_rounds
        for rnd in range(rounds):
            for n in order if rnd % 2 == 0 else order[::-1]:
                srv, port, path, _ = units[n]
                w, cpu = self.load(proto, srv, port, path, coding, self.args.connections,
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
                src, st, _, body = self.once_probe(proto, units[n][2], coding)
                if src != want or len(body) != units[n][3]:
                    self.warnings.append(f"{n} [{proto}] {file} {coding}-{level}: after the runs "
                                         f"the source is {src!r} with {len(body)} B (was "
                                         f"{want!r}, {units[n][3]} B)")
        rows = []
        for n in order:
            t = tot[n]
            reqs, secs, cpu = t["requests"], t["seconds"], t["cpu"]
            body = units[n][3]
            g6 = self.gzip6_bytes[file]
            row = {
                "proto": proto, "file": file, "coding": coding, "level": level, "server": n,
                "path": units[n][2], "rounds": rounds, "connections": self.args.connections,
                "requests": reqs, "seconds": secs, "server_cpu_s": cpu,
                "req_per_s": reqs / secs if secs else None,
                "cpu_us_per_req": cpu / reqs * 1e6 if reqs else None,
                "req_per_cpu_s": reqs / cpu if cpu > 0 else None,
                "body_bytes": body, "gzip6_bytes": g6, "saved_vs_gzip6": 1 - body / g6,
                "comparator": None, "x_precompressed": None,
            }
            what = f"{n} [{proto}] {file} {coding}-{level}"
            if reqs == 0:
                self.warnings.append(f"{what}: no request completed")
            if t["status"]:
                self.failures.append(f"{what}: {t['status']} non-2xx/3xx responses under load")
            if t["socket"]:
                self.warnings.append(f"{what}: {t['socket']} socket errors under load")
            rows.append(row)
        by = {r["server"]: r for r in rows}
        for r in rows:
            comp = None
            if r["server"] in ("ours-sidecar", "nginx (static)", FLOOR):
                comp = "precompressed"
            elif r["server"] == "ours-cache":
                comp = "precompressed (cache bytes)" if "precompressed (cache bytes)" in by \
                    else "precompressed"
            a = by.get(comp) if comp else None
            r["comparator"] = comp
            if a and a.get("req_per_cpu_s") and r.get("req_per_cpu_s"):
                r["x_precompressed"] = r["req_per_cpu_s"] / a["req_per_cpu_s"]
        for r in rows:
            x = r["x_precompressed"]
            log(f"     [{proto:11}] {file:18} {coding}-{level:<3} {r['server']:27} "
                f"{r['req_per_s'] or 0:>7.0f} req/s {r['cpu_us_per_req'] or 0:>7.1f} µs CPU/req "
                f"{r['req_per_cpu_s'] or 0:>6.0f} req/CPU-s "
                f"{'× ' + format(x, '.2f') + ' precompressed' if x else '':18} "
                f"{r['body_bytes']:>6} B")
        return rows

    def run_once(self, plan: list[tuple[str, str, str]], docroot: str) -> None:
        log(f"compress once: {len(plan)} (mode, file, coding) cases, {self.once_rounds} runs of "
            f"{self.once_duration} s per server")
        for proto, f, coding in plan:
            units = self.once_prepare(proto, f, coding, docroot)
            if units:
                self.once += self.once_measure(proto, f, coding, units)
