#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Soak: one httpd (event MPM, MaxConnectionsPerChild 0) with mod_multicompress, every encoding
enabled, under a bounded time of mixed traffic at concurrency 64.

The traffic, every request built and checked by this script (no wrk: see tests/soak/README.md):
  static    GET of the test documents and of generated 1.5 MB / 3 MB texts, with Accept-Encoding
            values whose expected Content-Encoding is known (test_200's table and more), on
            MULTICOMPRESS locations (default order; all four codings), on DEFLATE+BROTLI_COMPRESS
            +ZSTD attached together, on MultiCompressCache (shmcb) and MultiCompressStatic
            (sidecars) directories
  shapes    mod_mctest_dropin's mctest-shapes (heap, 1-byte buckets, FLUSH with pauses, file and
            mmap buckets, EOS alone, data after EOS, 1-4 MiB in 64 KiB buckets, 206, 204, 304)
            and mod_mctest (transient/pool/immortal buckets, flushes), sizes 0 B to 4 MiB
  head      HEAD: the Content-Encoding and Vary that GET gets, no body
  range     Range (one range, suffix, several ranges): an identity 206 with the exact bytes
  cond      If-None-Match with the altered ETag (strong and W/): 304 with ETag and Vary;
            a non-matching ETag: the full 200
  cgi       a shell CGI that prints lines with pauses (stalls: the compressor must flush)
  post      request bodies in gzip/br/zstd (Content-Length or chunked) to mctest-echo behind
            SetInputFilter DEFLATE, echoed back (compressed again when the client accepts it)
  postbad   corrupt and truncated bodies (400) and decompression bombs (413)
  abort     clients that close (FIN or RST) after a few KB of a large response, or halfway
            through sending a request body
  badae     malformed Accept-Encoding: random bytes, ~8 KB of tokens, odd q-values, several
            header lines, and over LimitRequestFieldSize (400 from httpd itself)

Every completed response is checked: status, Content-Encoding (exactly the expected one, or one
the client accepted where the header is garbage), Vary, Content-Length, and the body decoded
(gzip, deflate, br, zstd with the 8 MiB window limit; strict end of stream) must equal the exact
expected bytes. Aborted responses: what was read must decode to a prefix of the expected bytes.

Passes when: no failed check, no crash line in error_log (and no sanitizer report file), the
children were not replaced, the total RSS of the httpd processes at the end is within
--rss-tolerance (5 %) of the RSS after the warm-up phase, net of what the module's bounded caches
(each child's tier of cache entries and its dictionaries, read from /server-status?auto) took on
meanwhile, the open file descriptors of the httpd
processes did not grow, and at least --min-requests requests completed.

This file is the entry point; the parts: soak_server.py (the site, its documents, the CGI),
soak_client.py (the raw-socket client and the response checks), soak_requests.py and
soak_traffic.py (the request kinds), soak_workers.py (client processes x threads),
soak_measure.py (RSS, fds, error_log and sanitizer reports of the server).

    /usr/bin/python3 tests/soak/soak.py [--seconds 240] [--concurrency 64] [--min-requests 100000]

The build: MC_CONFIG_INI=<build>/tests/integration/config.ini (else the newest build*/ one).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))

import soak_client  # noqa: E402
import soak_traffic  # noqa: E402
import soak_workers  # noqa: E402
from mc_env import McEnv  # noqa: E402
from soak_measure import (bounded_cache_kib, crash_lines, log_summary, quiesce,  # noqa: E402
                          rss_parts_kib, sanitized, sanitizer_reports, server_pids, total_fds,
                          total_rss_kib)
from soak_requests import learn_etags  # noqa: E402
from soak_server import STOCK_KINDS, build_documents, make_server, start_wrapper  # noqa: E402
from soak_traffic import KINDS, Traffic  # noqa: E402
from soak_workers import run_phase  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=240, help="total run time (default 240)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="warm-up seconds before the RSS/fd baseline (default 25%%, 8-90 s)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--procs", type=int, default=4, help="client processes (default 4)")
    ap.add_argument("--min-requests", type=int, default=100000)
    ap.add_argument("--rss-tolerance", type=float, default=5.0, help="percent (default 5)")
    ap.add_argument("--rss-slack-mib", type=float, default=0,
                    help="RSS growth up to this many MiB passes whatever the percentage "
                         "(default 0; the short CTest run, whose warm-up is brief, uses 4)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="seconds a request may take before it counts as failed (default 30)")
    ap.add_argument("--keep", action="store_true",
                    help="leave the server running and its directory in place at the end")
    ap.add_argument("--stock", action="store_true",
                    help="the same server with Debian's mod_deflate + mod_brotli instead of the "
                         "module, for a memory comparison: traffic without request bodies "
                         f"(kinds {','.join(STOCK_KINDS)}), checks counted but not failing")
    ap.add_argument("--idle-after", type=float, default=0,
                    help="after the last segment, wait this many seconds idle and report the "
                         "RSS then (default 0: not measured)")
    ap.add_argument("--cores", action="store_true",
                    help="core dumps of crashed children into <server dir>/cores")
    ap.add_argument("--max-mem-free", type=int, default=256,
                    help="httpd's MaxMemFree in KiB (default 256; httpd's own default is 2048): "
                         "what every connection's allocator keeps, times the connections")
    ap.add_argument("--segments", type=int, default=3,
                    help="idle points in the measured part, for the RSS trend (default 3)")
    ap.add_argument("--only", default="",
                    help="comma-separated kinds to send (default: all), to narrow down a finding")
    ap.add_argument("-v", "--verbose", action="store_true", help="RSS and fds every 5 s")
    ap.add_argument("--post-close", action="store_true",
                    help="send request bodies with Connection: close (httpd then skips "
                         "ap_discard_request_body): routes around the keep-alive inflate hang "
                         "found by this soak, to measure everything else")
    args = ap.parse_args()

    soak_traffic.POST_CLOSE = args.post_close
    soak_client.CLIENT_TIMEOUT = args.timeout
    soak_client.STOCK = args.stock
    if args.only or args.stock:
        only = set(args.only.split(",")) if args.only else set(STOCK_KINDS)
        unknown = only - set(KINDS)
        if unknown:
            ap.error(f"unknown kinds {sorted(unknown)}; kinds: {', '.join(KINDS)}")
        for k in list(KINDS):
            if k not in only:
                del KINDS[k]
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    warm = args.warmup if args.warmup is not None else min(90.0, max(8.0, args.seconds * 0.25))
    main_secs = max(1.0, args.seconds - warm)
    procs = max(1, min(args.procs, args.concurrency))
    threads = max(1, args.concurrency // procs)
    conc = procs * threads

    env = McEnv(McEnv.locate_ini().resolve())
    env.gen_dir = env.gen_dir.parent / "soak"
    is_sanitized = sanitized(env)
    if args.cores:
        wrapper = start_wrapper(env)
        env.apache_bin = wrapper
    t_start = time.monotonic()
    docs = build_documents(env)
    srv = make_server(env, docs, args.max_mem_free, args.cores, args.stock)
    srv.start()
    print(f"soak: httpd pid {srv.pid} on 127.0.0.1:{srv.port}, {srv.gen}", flush=True)
    soak_workers.FAIL_DIR = srv.gen / "failed-bodies"
    print(f"soak: seed {seed}, concurrency {conc} ({procs} processes x {threads} threads), "
          f"warm-up {warm:.0f} s, measured {main_secs:.0f} s", flush=True)
    if os.environ.get("LD_PRELOAD"):
        print(f"soak: LD_PRELOAD={os.environ['LD_PRELOAD']} "
              f"ASAN_OPTIONS={os.environ.get('ASAN_OPTIONS', '')}", flush=True)
    failures: list[str] = []
    try:
        etags = learn_etags(srv.port, docs)
        soak_workers.TRAFFIC = Traffic(docs, etags)
        pids0 = server_pids(srv)

        t0 = time.monotonic()
        w_stats, w_wire, w_plain, w_fails = run_phase(srv.port, warm, procs, threads, seed,
                                                      prime=True)
        rss_start, fds_start, pids_start, parts_start = quiesce(srv)
        caches_start = bounded_cache_kib(srv.port)
        print(f"soak: warm-up done in {time.monotonic() - t0:.0f} s, "
              f"{sum(v for k, v in w_stats.items() if k.endswith(':ok'))} requests; "
              f"RSS {rss_start} KiB, fds {fds_start}, pids {pids_start}", flush=True)

        samples = []

        def tick():
            pids = server_pids(srv)
            samples.append((time.monotonic() - t0, total_rss_kib(pids), total_fds(pids)))
            if args.verbose:
                print(f"  t={samples[-1][0]:4.0f}s RSS {samples[-1][1]} KiB fds {samples[-1][2]} "
                      f"{rss_parts_kib(pids)}", flush=True)

        # the measured part in segments, the server idle after each: RSS and fds at every
        # idle point show the trend (a leak grows with every segment)
        t1 = time.monotonic()
        stats, wire, plain, fails = w_stats, w_wire, w_plain, list(w_fails)
        idle_points = [(0, rss_start, fds_start, caches_start)]
        nseg = max(1, args.segments)
        for i in range(nseg):
            s_stats, s_wire, s_plain, s_fails = run_phase(
                srv.port, main_secs / nseg, procs, threads, seed + 1 + i, tick)
            stats.update(s_stats)
            wire.update(s_wire)
            plain.update(s_plain)
            fails.extend(s_fails)
            rss_end, fds_end, pids_end, parts_end = quiesce(srv)
            caches_end = bounded_cache_kib(srv.port)
            done = sum(v for k, v in stats.items() if k.endswith(":ok"))
            idle_points.append((done, rss_end, fds_end, caches_end))
            print(f"soak: segment {i + 1}/{nseg} done, {done} requests so far; idle RSS "
                  f"{rss_end} KiB ({100.0 * (rss_end - rss_start) / max(1, rss_start):+.2f}%), "
                  f"bounded caches {caches_end} KiB, fds {fds_end}", flush=True)
        elapsed = time.monotonic() - t1
        rss_idle = None
        if args.idle_after > 0:
            time.sleep(args.idle_after)
            rss_idle = total_rss_kib(server_pids(srv))
            print(f"soak: {args.idle_after:.0f} s idle after the load: RSS {rss_idle} KiB "
                  f"{rss_parts_kib(server_pids(srv))}", flush=True)
    finally:
        if not args.keep:
            srv.stop()
            if args.cores:
                wrapper.unlink(missing_ok=True)
    log = srv.read_log()

    # ---- summary
    total_ok = sum(v for k, v in stats.items() if k.endswith(":ok"))
    total_fail = sum(v for k, v in stats.items() if k.endswith(":fail"))
    print("\n== soak summary ==")
    print(f"{'kind':10} {'ok':>9} {'failed':>7} {'wire MB':>9} {'decoded MB':>11}")
    for kind in KINDS:
        print(f"{kind:10} {stats[kind + ':ok']:9d} {stats[kind + ':fail']:7d} "
              f"{wire[kind] / 1e6:9.1f} {plain[kind] / 1e6:11.1f}")
    print(f"{'total':10} {total_ok:9d} {total_fail:7d} {sum(wire.values()) / 1e6:9.1f} "
          f"{sum(plain.values()) / 1e6:11.1f}")
    rate = total_ok / max(1e-9, warm + elapsed)
    print(f"requests: {total_ok} completed+aborted-as-planned in {warm + elapsed:.0f} s "
          f"({rate:.0f}/s); every completed response checked")
    if samples:
        print(f"under load: RSS {min(s[1] for s in samples)}-{max(s[1] for s in samples)} KiB, "
              f"fds {min(s[2] for s in samples)}-{max(s[2] for s in samples)}")
    # net of what the module's bounded caches (reported in mod_status) took on meanwhile
    grown = rss_end - rss_start - max(0, caches_end - caches_start)
    growth = 100.0 * grown / max(1, rss_start)
    print(f"RSS (idle, after warm-up -> end): {rss_start} KiB -> {rss_end} KiB; bounded caches "
          f"{caches_start} KiB -> {caches_end} KiB; growth net of them {grown} KiB "
          f"({growth:+.2f}%)"
          + (f"; {args.idle_after:.0f} s later {rss_idle} KiB" if rss_idle is not None else ""))
    print(f"  RSS parts after warm-up {parts_start}, at the end {parts_end}")
    print("  idle points (requests, RSS KiB, fds, bounded caches KiB): " +
          ", ".join(f"({n}, {r}, {f}, {c})" for n, r, f, c in idle_points))
    print(f"fds (idle, after warm-up -> end): {fds_start} -> {fds_end}")
    print(f"server pids: start {pids0}, end {pids_end}")
    print(f"error_log [warn]+ lines: {log_summary(log)}")

    sigs = sorted(((v, k[4:]) for k, v in stats.items() if k.startswith("sig:")), reverse=True)
    if sigs:
        print("failures by kind and error:")
        for v, k in sigs[:40]:
            print(f"  {v:6d}  {k}")
    if soak_client.STOCK:
        # a memory comparison: the expectations are the module's, not mod_deflate's
        print(f"--stock: {total_fail} responses differed from the module's expectations "
              "(not a failure)")
        fails, total_fail = [], 0
    for f in fails[:30]:
        failures.append(f"{f['kind']}: {f['error']}\n    request: {f['request']}\n"
                        f"    response: {f['response']}")
    if total_fail:
        failures.append(f"{total_fail} failed requests")
    crashes = crash_lines(log)
    if crashes:
        failures.append("crash lines in error_log:\n    " + "\n    ".join(crashes[:20]))
    cores = sorted((srv.gen / "cores").glob("core*")) if args.cores else []
    if cores:
        failures.append("core dumps: " + " ".join(map(str, cores)))
    reports = sanitizer_reports(srv)
    if reports:
        failures.append("sanitizer reports: " + " ".join(map(str, reports)))
        for p in reports[:3]:
            print(f"---- {p}\n{p.read_text(errors='replace')[:6000]}")
    if sorted(pids_start) != sorted(pids_end) or sorted(pids0) != sorted(pids_end):
        failures.append(f"server processes changed: {pids0} -> {pids_start} -> {pids_end}")
    if is_sanitized:
        print("RSS not checked: sanitized build (ASan's quarantine holds freed memory)")
    elif growth > args.rss_tolerance and grown > args.rss_slack_mib * 1024:
        failures.append(f"RSS grew {growth:.2f}% (limit {args.rss_tolerance}%"
                        + (f" and {args.rss_slack_mib} MiB" if args.rss_slack_mib else "") + ")")
    if fds_end > fds_start:
        failures.append(f"open fds grew: {fds_start} -> {fds_end}")
    if total_ok < args.min_requests:
        failures.append(f"only {total_ok} requests (minimum {args.min_requests})")
    print(f"time: {time.monotonic() - t_start:.0f} s; server dir {srv.gen}")
    if failures:
        print("\nSOAK FAILED (the server directory stays for a look):\n  " + "\n  ".join(failures))
        return 1
    if not args.keep:
        shutil.rmtree(srv.gen, ignore_errors=True)
    print("\nSOAK PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
