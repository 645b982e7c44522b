# SPDX-License-Identifier: Apache-2.0
"""Memory side by side with the stock pair: three soaks, one after the other.

  1. stock   -- tests/soak/soak.py --stock: Debian's mod_deflate + mod_brotli, the soak's traffic
                minus request bodies and the mod_mctest_dropin shapes (soak_server.STOCK_KINDS);
  2. same    -- mod_multicompress under exactly those kinds (--only <STOCK_KINDS>);
  3. full    -- mod_multicompress under the soak's full traffic (bodies, bombs, shapes too).

Each run is `soak.py --seconds S --idle-after I -v` against one build's config.ini (default
build/release). This script changes nothing in the soak: it reads the soak's output (the idle
RSS after the warm-up, after every segment and I s after the load, the 5 s samples under load)
and, from the httpd PID the soak prints, samples the total RSS of the server itself once a
second (the parent and its direct children -- the two event MPM children and mod_cgid's
daemon --, the process set the soak sums), so the chart covers the warm-up and the idle tail.

Writes <out>/memory.md (table and targets), memory.json (every number and sample) and
memory.png (RSS over time, one line per run). Optionally (--slow) also N slow compressed
streams against a fresh mod_multicompress (bench/slow_clients.py, as bench/run does).

    /usr/bin/python3 bench/memory.py [--seconds 90] [--idle-after 60] [--config INI] [--slow]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from mc_process import children_of  # noqa: E402

SOAK = ROOT / "tests" / "soak" / "soak.py"
SOAK_SERVER = ROOT / "tests" / "soak" / "soak_server.py"  # where STOCK_KINDS is
PY = "/usr/bin/python3"


def stock_kinds() -> list[str]:
    """soak_server.STOCK_KINDS, read from the source (importing it would pull in the
    harness)."""
    m = re.search(r"^STOCK_KINDS = (\(.*?\))$", SOAK_SERVER.read_text(), re.M)
    if not m:
        raise SystemExit(f"no STOCK_KINDS in {SOAK_SERVER}")
    return list(ast.literal_eval(m.group(1)))


# ---- /proc ---------------------------------------------------------------------------------
def status_kib(pid: int) -> tuple[int, int]:
    rss = anon = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
    except OSError:
        pass
    return rss, anon


def tree_kib(pid: int) -> tuple[int, int] | None:
    """(RSS, anonymous RSS) in KiB of pid and its direct children, None once pid is gone."""
    if not os.path.exists(f"/proc/{pid}"):
        return None
    rss = anon = 0
    for p in [pid, *children_of(pid)]:
        r, a = status_kib(p)
        rss, anon = rss + r, anon + a
    return rss, anon


# ---- one soak ------------------------------------------------------------------------------
RE_PID = re.compile(r"^soak: httpd pid (\d+) ")
RE_WARM = re.compile(r"^soak: warm-up done in .*RSS (\d+) KiB")
RE_TICK = re.compile(r"^\s+t=\s*(\d+)s RSS (\d+) KiB fds (\d+)")
RE_SEG = re.compile(r"^soak: segment (\d+)/(\d+) done, (\d+) requests .*idle RSS (\d+) KiB")
RE_IDLE = re.compile(r"^soak: (\d+) s idle after the load: RSS (\d+) KiB")
RE_REQS = re.compile(r"^requests: (\d+) completed.* in (\d+) s \((\d+)/s\)")
RE_PARTS = re.compile(r"^\s+RSS parts after warm-up (\{.*?\}), at the end (\{.*?\})")
RE_END = re.compile(r"^RSS \(idle, after warm-up -> end\): (\d+) KiB -> (\d+) KiB")


def run_soak(name: str, extra: list[str], args, env: dict, log_dir: Path) -> dict:
    cmd = [PY, str(SOAK), "--seconds", str(args.seconds), "--idle-after", str(args.idle_after),
           "-v", "--min-requests", "1", "--seed", str(args.seed), *extra]
    print(f"== {name}: {' '.join(cmd)}", flush=True)
    res: dict = {"name": name, "command": cmd, "samples": [], "events": [], "ticks": [],
                 "segments": []}
    t0 = time.monotonic()
    stop = threading.Event()
    pid_box: list[int] = []

    def sampler() -> None:
        while not stop.is_set() and not pid_box:
            time.sleep(0.05)
        while not stop.is_set() and pid_box:
            v = tree_kib(pid_box[0])
            if v is None:
                break
            res["samples"].append((round(time.monotonic() - t0, 2), v[0], v[1]))
            stop.wait(1.0)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=ROOT)
    lines = []
    for line in proc.stdout:
        line = line.rstrip("\n")
        lines.append(line)
        print(f"  [{name}] {line}", flush=True)
        now = round(time.monotonic() - t0, 2)
        if m := RE_PID.match(line):
            res["pid"] = int(m.group(1))
            pid_box.append(res["pid"])
        elif m := RE_WARM.match(line):
            res["rss_warm"] = int(m.group(1))
            res["events"].append((now, "warm-up done"))
        elif m := RE_TICK.match(line):
            res["ticks"].append((now, int(m.group(2)), int(m.group(3))))
        elif m := RE_SEG.match(line):
            res["segments"].append((now, int(m.group(3)), int(m.group(4))))
            if m.group(1) == m.group(2):
                res["events"].append((now, "load ends"))
        elif m := RE_IDLE.match(line):
            res["rss_idle"] = int(m.group(2))
            res["events"].append((now, f"{m.group(1)} s idle"))
        elif m := RE_REQS.match(line):
            res["requests"], res["rate"] = int(m.group(1)), int(m.group(3))
        elif m := RE_PARTS.match(line):
            res["parts_warm"] = ast.literal_eval(m.group(1))
            res["parts_end"] = ast.literal_eval(m.group(2))
        elif m := RE_END.match(line):
            res["rss_end"] = int(m.group(2))
    res["rc"] = proc.wait()
    stop.set()
    th.join(5)
    res["passed"] = "SOAK PASSED" in lines
    res["failures"] = lines[lines.index(next(ln for ln in lines if ln.startswith("SOAK FAILED"))):]\
        if any(ln.startswith("SOAK FAILED") for ln in lines) else []
    (log_dir / f"memory-{name}.log").write_text("\n".join(lines) + "\n")
    # the load: from the first sample after the warm-up starts to the end of the last segment
    t_load_end = next((t for t, e in res["events"] if e == "load ends"), None)
    load = [s for s in res["samples"] if t_load_end is None or s[0] <= t_load_end]
    res["peak"] = max((s[1] for s in load), default=None)
    res["peak_anon"] = max((s[2] for s in load), default=None)
    under = [r for _, r, _ in res["ticks"]]
    res["under_load_max"] = max(under, default=None)
    res["under_load_median"] = sorted(under)[len(under) // 2] if under else None
    if "rss_warm" in res and "rss_end" in res:
        res["growth_pct"] = round(100.0 * (res["rss_end"] - res["rss_warm"]) / res["rss_warm"], 2)
    return res


# ---- optional: slow streams ----------------------------------------------------------------
def run_slow(args, module: str, out_dir: Path) -> list[dict]:
    sys.path.insert(0, str(HERE))
    import servers  # noqa: E402
    import slow_clients  # noqa: E402
    tmp = Path(tempfile.mkdtemp(prefix="mc-memory-slow-"))
    tmp.chmod(0o755)    # the children run as www-data
    results = []
    try:
        docroot = tmp / "htdocs"
        docroot.mkdir()
        static = ROOT / "tests" / "integration" / "htdocs" / "static"
        shutil.copy(static / "small.html", docroot / "small.html")   # the readiness probe
        # ~1.7 MB of distinct text (bench/run's stream.txt is the same size, from npm): the
        # test documents, then Node.js's API manual from Debian's nodejs-doc when present
        body = b"".join((static / f).read_bytes() for f in ("page.html", "style.css", "app.js",
                                                             "data.json", "license.txt"))
        allhtml = Path("/usr/share/doc/nodejs/api/all.html")
        if allhtml.exists():
            body += allhtml.read_bytes()[:1_700_000 - len(body)]
        (docroot / "stream.txt").write_bytes(body)
        for coding, level in args.slow_codings:
            port = servers.free_ports(1)[0]
            srv = servers.Apache("multicompress", str(tmp / f"srv-{coding}-{level}"),
                                 str(docroot), {(coding, level): port}, module_path=module,
                                 send_buffer=65536, sizing="wide")  # 256 streams at once
            try:
                srv.start()
                print(f"== slow: {args.slow_n} slow {coding}-{level} streams of stream.txt "
                      f"({len(body)} B) from a fresh mod_multicompress", flush=True)
                r = slow_clients.run(port, "/stream.txt", coding, srv.rss_bytes, n=args.slow_n,
                                     hold=3.0, ramp_timeout=40.0)
            finally:
                srv.stop()
            r.update({"coding": coding, "level": level, "file_bytes": len(body)})
            print(f"   {r['streams_ok']}/{r['connections']} streams, RSS "
                  f"{r['rss_baseline'] / 2**20:.0f} -> {r['rss_peak'] / 2**20:.0f} MiB", flush=True)
            results.append(r)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return results


# ---- report --------------------------------------------------------------------------------
def mib(kib) -> str:
    return "–" if kib is None else f"{kib / 1024:.0f}"


def ratio(a, b) -> str:
    return "–" if a is None or not b else f"{a / b:.2f}×"


def write_report(runs: list[dict], slow: list[dict], args, out: Path) -> list[str]:
    stock = runs[0]
    rows = []
    for r in runs:
        rows.append(
            f"| {r['label']} | {r.get('requests', '–')} ({r.get('rate', '–')}/s) | "
            f"{mib(r.get('rss_warm'))} | {mib(r.get('under_load_median'))} / "
            f"{mib(r.get('under_load_max'))} | {mib(r.get('peak'))} ({mib(r.get('peak_anon'))}) | "
            f"{mib(r.get('rss_end'))} | "
            f"{mib(r.get('rss_idle'))} | {r.get('growth_pct', '–'):+} % | "
            f"{ratio(r.get('under_load_max'), stock.get('under_load_max'))} | "
            f"{ratio(r.get('peak'), stock.get('peak'))} "
            f"({ratio(r.get('peak_anon'), stock.get('peak_anon'))}) | "
            f"{ratio(r.get('rss_end'), stock.get('rss_end'))} | "
            f"{ratio(r.get('rss_idle'), stock.get('rss_idle'))} | "
            f"{'passed' if r['passed'] else 'FAILED'} |")

    def verdict(ok) -> str:
        return "–" if ok is None else ("**met**" if ok else "**not met**")

    targets = []
    for r in runs[1:]:
        peak_x = r["peak"] / stock["peak"] if r.get("peak") and stock.get("peak") else None
        load_x = (r["under_load_max"] / stock["under_load_max"]
                  if r.get("under_load_max") and stock.get("under_load_max") else None)
        idle_x = (r["rss_idle"] / stock["rss_idle"]
                  if r.get("rss_idle") and stock.get("rss_idle") else None)
        g = r.get("growth_pct")
        targets += [
            f"| {r['label']} | RSS during the soak ≤ 2× the stock pair's | peak {peak_x:.2f}×, "
            f"under load (5 s samples) max {load_x:.2f}× | "
            f"{verdict(peak_x <= 2 and load_x <= 2 if peak_x and load_x else None)} |",
            f"| {r['label']} | within +10 % from warm-up to the end | {g:+.2f} %"
            + (" (" + ", ".join(f"{k} {v / 1024:+.1f} MiB" for k, v in (
                (k, r["parts_end"][k] - r["parts_warm"].get(k, 0)) for k in r["parts_end"]))
               + ")" if r.get("parts_end") else "") + " | "
            f"{verdict(g <= 10 if g is not None else None)} |",
            f"| {r['label']} | {args.idle_after:.0f} s after the load ≤ 1.5× the stock pair's | "
            f"{idle_x:.2f}× ({mib(r.get('rss_idle'))} vs {mib(stock.get('rss_idle'))} MiB) | "
            f"{verdict(idle_x <= 1.5 if idle_x else None)} |",
        ]
    for s in slow:
        total = s["rss_peak"] / 2**20
        targets.append(
            f"| slow streams | {s['connections']} slow {s['coding']}-{s['level']} streams "
            f"≤ 512 MiB | {s['streams_ok']}/{s['connections']} started, RSS "
            f"{s['rss_baseline'] / 2**20:.0f} → {total:.0f} MiB (anonymous "
            f"{s['anon_peak'] / 2**20:.0f}) | "
            f"{verdict(total <= 512 and s['streams_ok'] == s['connections'])} |")

    md = [
        "# Memory: mod_multicompress next to mod_deflate + mod_brotli",
        "",
        f"`bench/memory.py --seconds {args.seconds:g} --idle-after {args.idle_after:g} "
        f"--seed {args.seed}`, {time.strftime('%Y-%m-%d', time.gmtime())}, module built with "
        f"`{args.build_label}`; Debian's apache2 (event MPM, 2 children × 40 threads, never "
        "replaced), glibc's default malloc environment (no `MALLOC_*`), `MaxMemFree 256` (the "
        "soak's default). Each row is one run of `tests/soak/soak.py` (commands in "
        "`memory.json`), one after the other on the shared 2-core machine; the clients run on "
        "the same cores.",
        "",
        "- **stock pair**: `--stock`, Debian's mod_deflate + mod_brotli "
        "(`AddOutputFilterByType BROTLI_COMPRESS;DEFLATE`), kinds "
        f"`{','.join(args.kinds)}`;",
        "- **mod_multicompress, same kinds**: `--only " + ",".join(args.kinds) + "`: the very "
        "same traffic (the comparison the targets are about);",
        "- **mod_multicompress, full traffic**: every kind, also request bodies (inflated, "
        "echoed, compressed again), decompression bombs and the mod_mctest_dropin shapes, "
        "which the stock pair does not get (ratios in that row compare unequal traffic).",
        "",
        "RSS = VmRSS summed over httpd's parent and its direct children (the two MPM children "
        "and mod_cgid's daemon), as the soak sums it. after warm-up / end / idle: the soak's "
        "idle measurements (no connection open, RSS steady for 2 s) after the warm-up, after "
        f"the last segment, and {args.idle_after:g} s after the load stopped. under load: the "
        "soak's 5 s samples during the measured part (median / max). peak: the highest of this "
        "script's 1 s samples from server start to the end of the load (warm-up included, whose "
        "first requests are the heaviest ones at once). growth = end over after warm-up. "
        "Ratios are to the stock pair's same column.",
        "",
        "| server | requests (rate) | after warm-up (MiB) | under load median / max (MiB) | "
        "peak (anon) (MiB) | end (MiB) | " + f"{args.idle_after:g} s idle (MiB) | growth | "
        "× stock, under load max | × stock, peak (anon) | × stock, end | × stock, idle | soak |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        *rows,
        "",
        "## Targets",
        "",
        "| run | target | measured | |",
        "|---|---|---|---|",
        *targets,
        "",
        "![RSS over time](memory.png)",
        "",
    ]
    for r in runs:
        if r["failures"]:
            md += [f"Soak `{r['name']}` failed:", "", "```", *r["failures"][:20], "```", ""]
    if slow:
        md += [
            "## Slow compressed streams",
            "",
            f"bench/slow_clients.py against a fresh mod_multicompress from bench/servers.py "
            "(bench/run's Apache: 4 children × 80 threads, SendBufferSize 65536): "
            f"{args.slow_n} connections with a 4 KiB receive buffer each request a "
            f"{slow[0]['file_bytes'] / 1e6:.1f} MB text (the test documents, then Node.js's API "
            "manual) and read 1 KiB per 0.1 s pass; RSS summed over the server's processes, "
            "peak while all streams are open and 3 s after.",
            "",
            "| coding | streams started | start (s) | RSS before (MiB) | RSS peak (MiB) | "
            "anon peak (MiB) | anon per stream (KiB) |",
            "|---|---:|---:|---:|---:|---:|---:|",
            *[f"| {s['coding']}-{s['level']} | {s['streams_ok']}/{s['connections']} | "
              f"{s['ramp_s']} | {s['rss_baseline'] / 2**20:.0f} | {s['rss_peak'] / 2**20:.0f} | "
              f"{s['anon_peak'] / 2**20:.0f} | "
              f"{s['anon_growth'] / 1024 / max(1, s['connections']):.0f} |" for s in slow],
            "",
        ]
    (out / "memory.md").write_text("\n".join(md))
    return targets


def write_chart(runs: list[dict], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 5.2))
    colors = ["#777777", "#1f77b4", "#d62728"]
    for i, (r, c) in enumerate(zip(runs, colors)):
        s = r["samples"]
        if not s:
            continue
        t_start = s[0][0]
        ax.plot([x[0] - t_start for x in s], [x[1] / 1024 for x in s], color=c, lw=1.4,
                label=r["label"])
        for t, e in r["events"]:
            ax.axvline(t - t_start, color=c, ls=":", lw=0.8)
            ax.annotate(e, (t - t_start, 0.03 + 0.2 * i), xycoords=ax.get_xaxis_transform(),
                        color=c, fontsize=7, rotation=90, xytext=(2, 0),
                        textcoords="offset points", va="bottom")
    ax.set_xlabel("seconds since httpd started")
    ax.set_ylabel("total RSS of httpd (MiB)")
    ax.set_title("RSS over time: soak.py, stock pair vs mod_multicompress (1 s samples)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "memory.png", dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=90, help="soak.py --seconds (default 90)")
    ap.add_argument("--idle-after", type=float, default=60, help="soak.py --idle-after (60)")
    ap.add_argument("--seed", type=int, default=12, help="the same seed for every run")
    ap.add_argument("--config", default=str(ROOT / "build/release/tests/integration/config.ini"),
                    help="MC_CONFIG_INI for the soaks (default: build/release's)")
    ap.add_argument("--runs", default="stock,same,full", help="subset of stock,same,full")
    ap.add_argument("--slow", action="store_true", help="also N slow compressed streams")
    ap.add_argument("--slow-n", type=int, default=256)
    ap.add_argument("--slow-codings", default="br-4,gzip-6,zstd-3")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite memory.md and memory.png from <out>/memory.json")
    args = ap.parse_args()
    if args.report_only:
        out = Path(args.out)
        data = json.loads((out / "memory.json").read_text())
        saved = argparse.Namespace(**data["args"])
        print("\n".join(write_report(data["runs"], data["slow"], saved, out)))
        write_chart(data["runs"], out)
        return 0
    args.slow_codings = [(c.rsplit("-", 1)[0], int(c.rsplit("-", 1)[1]))
                         for c in args.slow_codings.split(",")]
    args.kinds = stock_kinds()
    cfg = Path(args.config).resolve()
    if not cfg.exists():
        ap.error(f"{cfg} missing: build first (cmake --preset release && cmake --build "
                 "--preset release)")
    args.build_label = os.path.relpath(cfg.parents[2], ROOT) if ROOT in cfg.parents else str(cfg)
    module = re.search(r"^module_path = (.*)$", cfg.read_text(), re.M).group(1).strip()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env["MC_CONFIG_INI"] = str(cfg)

    plan = {"stock": ("stock pair (mod_deflate + mod_brotli)", ["--stock"]),
            "same": ("mod_multicompress, same kinds", ["--only", ",".join(args.kinds)]),
            "full": ("mod_multicompress, full traffic", [])}
    wanted = args.runs.split(",")
    runs = []
    with tempfile.TemporaryDirectory(prefix="mc-memory-") as logs:
        for name in ("stock", "same", "full"):
            if name not in wanted:
                continue
            label, extra = plan[name]
            r = run_soak(name, extra, args, env, Path(logs))
            r["label"] = label
            runs.append(r)
            time.sleep(5)
    def save(slow: list[dict]) -> None:
        (out / "memory.json").write_text(json.dumps(
            {"args": {k: v for k, v in vars(args).items()}, "runs": runs, "slow": slow},
            indent=1))

    save([])
    slow: list[dict] = []
    if args.slow:
        try:
            slow = run_slow(args, module, out)
        except Exception as e:  # the soaks' numbers stand on their own
            print(f"slow streams failed: {e}", flush=True)
        save(slow)
    if runs and runs[0]["name"] == "stock":
        targets = write_report(runs, slow, args, out)
        write_chart(runs, out)
        print("\n".join(targets))
    print(f"wrote {out / 'memory.md'}, memory.json, memory.png")
    return 0 if all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
