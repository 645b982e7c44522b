# SPDX-License-Identifier: Apache-2.0
"""Turns bench/run's raw results into results.md (Markdown tables) and chart.png (matplotlib)."""

from __future__ import annotations

import math

SERVER_ORDER = ["mod_deflate", "mod_brotli", "mod_multicompress", "library floor", "nginx",
                "precompressed", "precompressed (no mmap)", "nginx (static)"]
OURS = "mod_multicompress"
LIBFLOOR = "library floor"   # bench/live.py: the library's one call in a bare handler


def anchor_key(case: dict) -> tuple | None:
    """(file, coding, level, server) of the row a case is compared with, in the same run."""
    c, lvl = case["coding"], case["level"]
    if c == "gzip":
        return (case["file"], "gzip", lvl, "mod_deflate")
    if c == "br":
        return (case["file"], "br", lvl, "mod_brotli")
    if c == "zstd":
        return (case["file"], "gzip", 6, "mod_deflate")
    return None


def variant(case: dict) -> str:
    return "identity" if case["coding"] == "identity" else f"{case['coding']}-{case['level']}"


def proto(case: dict) -> str:
    return case.get("proto", "h1")


def add_ratios(cases: list[dict]) -> None:
    """Each case against its anchor of the same mode."""
    by_key = {(proto(c), c["file"], c["coding"], c["level"], c["server"]): c for c in cases}
    for c in cases:
        a = by_key.get((proto(c),) + anchor_key(c)) if anchor_key(c) else None
        c["anchor"] = f"{a['server']} {variant(a)}" if a else None
        if a and a.get("req_per_cpu_s") and c.get("req_per_cpu_s"):
            c["x_req_per_cpu"] = c["req_per_cpu_s"] / a["req_per_cpu_s"]
        else:
            c["x_req_per_cpu"] = None
        if a and a.get("body_bytes") and c.get("body_bytes") is not None:
            c["x_bytes"] = c["body_bytes"] / a["body_bytes"]
        else:
            c["x_bytes"] = None


# The limit of a live response: plain Apache's CPU per response for the file in the same mode
# (the `precompressed` server's identity row of the same run) plus the library's one call for that
# body (bench_encoders of the same run). The call is the one the filter makes: `oneshot`
# (mc::OneShotCompressor, a reused state) where OneShotCompressor::suits() takes it with the
# default configuration (gzip up to level 7, zstd), `whole` (mc::compress_all) otherwise.
LIMIT_TARGET = 1.15
IDENTITY_TARGET = 1.02
NGINX_BR_MIN_SIZE = 16 * 1024


def limit_mode(coding: str, level: int) -> str:
    return "oneshot" if coding == "zstd" or (coding == "gzip" and level <= 7) else "whole"


def encoder_us(encoders: list[dict]) -> dict[tuple[str, str, int, str], float]:
    """(file, coding, level, mode) -> CPU µs per call, from bench_encoders' JSON."""
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    out = {}
    for b in encoders:
        parts = b.get("name", "").split("/")
        if len(parts) != 3 or b.get("error_occurred") or "cpu_time" not in b:
            continue
        coding, _, level = parts[1].rpartition("-")
        try:
            out[(parts[0], coding, int(level), parts[2])] = \
                b["cpu_time"] * scale[b.get("time_unit", "ns")]
        except (ValueError, KeyError):
            continue
    return out


def add_limits(cases: list[dict], encoders: list[dict]) -> None:
    """Sets limit_us and x_limit (CPU µs per response over the limit) on every live row of ours
    and of the library floor, and on ours lib_floor_us and x_lib_floor (over the library floor's
    CPU µs per response in the same rounds)."""
    lib = encoder_us(encoders)
    plain = {(proto(c), c["file"]): c.get("cpu_us_per_req") for c in cases
             if c["server"] == "precompressed" and c["coding"] == "identity"}
    floor = {(proto(c), c["file"], c["coding"], c["level"]): c.get("cpu_us_per_req")
             for c in cases if c["server"] == LIBFLOOR}
    for c in cases:
        c["limit_us"] = c["x_limit"] = None
        if c["server"] not in (OURS, LIBFLOOR) or c["coding"] == "identity":
            continue
        if c["server"] == OURS:
            fl = floor.get((proto(c), c["file"], c["coding"], c["level"]))
            c["lib_floor_us"] = fl
            c["x_lib_floor"] = c["cpu_us_per_req"] / fl \
                if fl and c.get("cpu_us_per_req") else None
        mode = limit_mode(c["coding"], c["level"])
        one = lib.get((c["file"], c["coding"], c["level"], mode))
        base = plain.get((proto(c), c["file"]))
        c["limit_plain_us"], c["limit_lib_us"], c["limit_mode"] = base, one, mode
        if one is None or not base:
            continue
        c["limit_us"] = base + one
        if c.get("cpu_us_per_req"):
            c["x_limit"] = c["cpu_us_per_req"] / c["limit_us"]


def _f(v, fmt="{:.0f}"):
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)


def _sort_key(c: dict):
    order = {"identity": 0, "gzip": 1, "br": 2, "zstd": 3}
    return (order[c["coding"]], c["level"], SERVER_ORDER.index(c["server"]))


def _x_limit(c: dict) -> str:
    x = c.get("x_limit")
    if c["server"] not in (OURS, LIBFLOOR) or c["coding"] == "identity":
        return ""
    if c["server"] == LIBFLOOR or x is None or x <= LIMIT_TARGET:
        return _f(x, "{:.2f}")
    return f"**{x:.2f}**"


def results_table(cases: list[dict], files: list[str]) -> list[str]:
    out = []
    for f in files:
        rows = sorted((c for c in cases if c["file"] == f), key=_sort_key)
        if not rows:
            continue
        out += [f"#### `{f}`", "",
                "| coding | server | req/s | CPU µs/req | req/CPU-s | body bytes | "
                "× anchor req/CPU-s | × anchor bytes | anchor | limit µs/req | × limit |",
                "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
        for c in rows:
            name = f"**{c['server']}**" if c["server"] == OURS else c["server"]
            out.append(
                f"| {variant(c)} | {name} | {_f(c.get('req_per_s'))} | "
                f"{_f(c.get('cpu_us_per_req'), '{:.1f}')} | {_f(c.get('req_per_cpu_s'))} | "
                f"{_f(c.get('body_bytes'))} | {_f(c.get('x_req_per_cpu'), '{:.2f}')} | "
                f"{_f(c.get('x_bytes'), '{:.3f}')} | {c.get('anchor') or ''} | "
                f"{_f(c.get('limit_us'), '{:.1f}') if _x_limit(c) else ''} | "
                f"{_x_limit(c)} |")
        out.append("")
    return out


def _find(cases, file, coding, level, server, mode="h1"):
    for c in cases:
        if (proto(c), c["file"], c["coding"], c["level"], c["server"]) == \
                (mode, file, coding, level, server):
            return c
    return None


HIT_TARGET = 0.95   # a sidecar or cache hit against plain Apache sending the same bytes


def once_table(once: list[dict]) -> list[str]:
    """The rows of one mode."""
    out = ["| file | coding | server | req/s | CPU µs/req | req/CPU-s | × precompressed req/CPU-s "
           "| body bytes | gzip-6 bytes | saved vs gzip-6 |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    order = {"precompressed": 0, "floor (access check)": 1, "ours-sidecar": 2, "ours-cache": 3,
             "precompressed (cache bytes)": 4, "nginx (static)": 5}
    codings = {"zstd": 0, "br": 1, "gzip": 2}
    files = list(dict.fromkeys(c["file"] for c in once))
    for c in sorted(once, key=lambda c: (files.index(c["file"]), codings[c["coding"]],
                                         order.get(c["server"], 9))):
        name = f"**{c['server']}**" if c["server"].startswith("ours-") else c["server"]
        x = c.get("x_precompressed")
        xs = _f(x, "{:.2f}") if x is None or x >= HIT_TARGET or not c["server"].startswith(
            "ours-") else f"**{x:.2f}**"
        out.append(f"| `{c['file']}` | {variant(c)} | {name} | {_f(c.get('req_per_s'))} | "
                   f"{_f(c.get('cpu_us_per_req'), '{:.1f}')} | {_f(c.get('req_per_cpu_s'))} | "
                   f"{xs} | {_f(c.get('body_bytes'))} | {_f(c.get('gzip6_bytes'))} | "
                   f"{c['saved_vs_gzip6'] * 100:.1f}% |")
    return out


def rss_table(rss: list[dict]) -> list[str]:
    out = ["| server | coding | streams started | start (s) | RSS before (MiB) | "
           "RSS growth (MiB) | anon RSS growth (MiB) | anon per stream (KiB) |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rss:
        out.append(f"| {r['server']} | {r['coding']}-{r['level']} | {r['streams_ok']}/"
                   f"{r['connections']} | {r['ramp_s']:.1f} | {r['rss_baseline'] / 2**20:.0f} | "
                   f"{r['rss_growth'] / 2**20:.1f} | {r['anon_growth'] / 2**20:.1f} | "
                   f"{r['anon_growth'] / 1024 / max(r['connections'], 1):.0f} |")
    return out


def encoder_table(encoders: list[dict]) -> list[str]:
    if not encoders:
        return ["(bench_encoders was not run)"]
    modes = [m for m in ("whole", "stream", "oneshot")
             if any(b["name"].endswith("/" + m) for b in encoders)]
    out = ["| input | coding-level | " + " | ".join(f"{m} MB/s" for m in modes)
           + " | ratio (out/in) | one call CPU µs (the limit's) |",
           "|---|---|" + "---:|" * (len(modes) + 2)]
    lib = encoder_us(encoders)
    rows: dict[tuple[str, str], dict] = {}
    for b in encoders:
        parts = b["name"].split("/")
        if len(parts) != 3 or b.get("error_occurred"):
            continue
        rows.setdefault((parts[0], parts[1]), {})[parts[2]] = b
    for (inp, cl), by_mode in rows.items():
        cells = []
        for m in modes:
            b = by_mode.get(m)
            cells.append(_f(b["bytes_per_second"] / 1e6, "{:.1f}") if b else "–")
        ratios = " / ".join(_f(by_mode[m].get("ratio"), "{:.3f}") for m in modes if m in by_mode)
        coding, _, level = cl.rpartition("-")
        mode = limit_mode(coding, int(level)) if level.isdigit() else ""
        one = lib.get((inp, coding, int(level), mode)) if level.isdigit() else None
        call = f"{one:.1f} ({mode})" if one is not None else "–"
        out.append(f"| `{inp}` | {cl} | " + " | ".join(cells) + f" | {ratios} | {call} |")
    return out


LIMIT_NOTE = (
    "Limit (rows of mod_multicompress): plain Apache's CPU µs/req for the file in the same mode "
    "(the `precompressed` identity row of this run) + the library's one call for the body "
    "(bench_encoders of this run, CPU time: `oneshot` for gzip-1…7 and zstd, the filter's "
    "one-shot path; `whole` = `mc::compress_all` for br and gzip-8/9); × limit = CPU µs/req over "
    f"the limit (target ≤ {LIMIT_TARGET}, bold above). `library floor`: plain Apache with "
    "bench/floor's mod_mc_libfloor, a handler that reads the file and answers with that one "
    "library call (the bytes ours sends) and nothing else, in the same rounds as ours: what the "
    "call costs inside Apache's threaded children rather than in a hot loop; its × limit says "
    "how far any module in this Apache stays from the limit.")

MODE_TITLE = {
    "h1": "HTTP/1.1, Debian's defaults (EnableSendfile Off)",
    "h1-sendfile": "HTTP/1.1, EnableSendfile On",
    "h2": "TLS + HTTP/2",
}
MODE_NOTE = {
    "h1": "HTTP/1.1 (`wrk`), Apache in Debian's defaults: mpm_event sizing of Debian's apache2 "
          "(StartServers 2, ThreadsPerChild 25, MinSpareThreads 25, MaxSpareThreads 75, "
          "MaxRequestWorkers 150), `EnableSendfile Off` (httpd's default), `EnableMMAP On`.",
    "h1-sendfile": "HTTP/1.1 (`wrk`), the same Apaches with `EnableSendfile On`: a file body is "
                   "handed to the kernel (sendfile), not mapped, copied and unmapped.",
    "h2": "TLS + HTTP/2 (`h2load`, one connection per client, one request at a time on each; TLS "
          "with a certificate made at bench time), the same Apaches with mod_ssl + mod_http2 "
          "(`Protocols h2 http/1.1`), nginx with `listen ... ssl http2`. Sendfile cannot apply "
          "under TLS: every byte goes through the TLS record layer.",
}


def _load_line(meta: dict) -> str:
    c, t = meta["connections"], meta["wrk_threads"]
    return (f"Load: `wrk -t{t} -c{c}` (HTTP/1.1, keep-alive) or `h2load -t{t} -c{c} -m1` (TLS + "
            f"HTTP/2), {meta.get('rounds', 1)} run(s) of {meta.get('round_s', meta['duration'])} "
            "s per server and case in alternating server order (forward, reverse, ...; a row "
            "sums them), one `Accept-Encoding` value per run. Servers and the load generator "
            "share the machine; CPU is the servers' own (utime+stime of all their processes "
            "from /proc).")


def _once_intro(meta: dict) -> str:
    levels = meta.get("once_levels", {})
    return (
        "mod_multicompress with `MultiCompressStatic On` (**ours-sidecar**: `FILE.zst` / `.br` / "
        f"`.gz` next to `FILE`, written by {meta.get('once_writer') or '?'}) and with "
        "`MultiCompressCache On` (**ours-cache**: shmcb store, `MultiCompressCacheLevel` "
        + ", ".join(f"{c} {lvl}" for c, lvl in levels.items()) + "; warmed up until the source "
        "note said `cache` and the hit was the strong copy), against plain Apache serving the very "
        "same sidecar file as a plain file (**precompressed**, `AddEncoding`; *precompressed "
        "(cache bytes)* serves the cached body when it is not byte-identical to the sidecar) and "
        "nginx serving the same sidecar (*nginx (static)*: `gzip_static` / `brotli_static`; no "
        "zstd). *floor (access check)* is that plain Apache plus bench/floor/mod_mc_floor.so: the "
        "subrequest lookup and access hooks the module must run before it sends any sidecar "
        "(docs/contract.md), and nothing else; its × precompressed is the most a sidecar hit "
        "can reach. Each body was checked once to decode to the original and each source note to say "
        f"`sidecar` / `cache`. Each row sums {meta.get('once_rounds', 1)} runs of "
        f"{meta.get('once_duration')} s in alternating order. Target: × precompressed ≥ "
        f"{HIT_TARGET} (bold below).")


def markdown(meta: dict, cases: list[dict], rss: list[dict], idle_rss: dict, encoders: list[dict],
             files: list[str], mid: str, small: str, once: list[dict] | None = None,
             sizes: dict[str, int] | None = None) -> str:
    import targets as tg
    modes = list(meta.get("modes") or {"h1": MODE_NOTE["h1"]})
    h1 = [c for c in cases if proto(c) == "h1"]
    lines = [
        "# mod_multicompress side-by-side benchmark", "",
        f"Command: `{meta['command']}` ({meta['mode']}, {meta['date']}, {meta['elapsed_s']:.0f} s)."
        f" Host: {meta['host']}.", "",
        _load_line(meta), "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".", "",
        "Corpus: see [corpus.md](corpus.md). Modes: " + "; ".join(
            f"**{m}** = {MODE_TITLE[m]}" for m in modes) + " (each table says its mode).", "",
        "## Targets: Debian's defaults and TLS + HTTP/2", "",
    ]
    lines += tg.mode_targets(cases, once or [], sizes or {})
    lines += ["", "## Earlier targets (HTTP/1.1, Debian's defaults)", ""]
    lines += tg.targets(h1, rss, mid, small, [c for c in once or [] if proto(c) == "h1"], sizes)
    lines += ["", "## Requests per server CPU-second", "",
              "Anchors: gzip rows against mod_deflate at the same level, br rows against "
              "mod_brotli at the same quality, zstd rows against mod_deflate gzip-6, in the same "
              "mode. *nginx (static)*: nginx serving the `precompressed` row's file "
              "(`gzip_static`, `brotli_static`).", "", LIMIT_NOTE, ""]
    for m in modes:
        rows = [c for c in cases if proto(c) == m]
        if rows:
            lines += [f"### {m}: {MODE_TITLE[m]}", "", MODE_NOTE[m], ""] + results_table(rows, files)
    lines += ["## Compress once: sidecar and cache hits", ""]
    if once:
        lines += [_once_intro(meta), ""]
        for m in modes:
            rows = [c for c in once if proto(c) == m]
            if rows:
                lines += [f"### {m}: {MODE_TITLE[m]}", ""] + once_table(rows) + [""]
    else:
        lines += ["(not run)"]
    lines += ["", "## RSS with slow compressed downloads", "",
              f"{meta['rss_file']}; fresh server instances (Apache: 4 × 80 threads, so 256 "
              f"streams run at once) with a {meta['rss_send_buffer']}-byte socket send buffer, one "
              "per test; growth = peak during the test minus the value just before it (sums over "
              "the server's processes). Streams not started = no response head before the start "
              "timeout (all were being compressed).", ""]
    lines += rss_table(rss) if rss else ["(not run)"]
    if idle_rss:
        lines += ["", "RSS of the throughput servers at idle after all runs (memory kept "
                  "after the load): " + ", ".join(
                      f"{n} {v['rss'] / 2**20:.0f} MiB (anonymous {v['anon'] / 2**20:.0f} MiB)"
                      for n, v in idle_rss.items()) + "."]
    lines += ["", "## Encoders alone (bench_encoders, mc_core)", ""]
    lines += encoder_table(encoders)
    if meta.get("failures"):
        lines += ["", "## Failures", ""] + [f"- {f}" for f in meta["failures"]]
    if meta.get("warnings"):
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in meta["warnings"]]
    return "\n".join(lines) + "\n"


def chart(cases: list[dict], files: list[str], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [c for c in cases if proto(c) == "h1"]
    files = [f for f in files if any(c["file"] == f for c in cases)]
    variants = [v for v in ["identity", "gzip-6", "br-4", "br-5", "zstd-3"]
                if any(variant(c) == v for c in cases)]
    colors = {"mod_deflate": "#4C72B0", "mod_brotli": "#DD8452", "mod_multicompress": "#C44E52",
              "nginx": "#55A868", "precompressed": "#8C8C8C", "nginx (static)": "#8FBF8F",
              "precompressed (no mmap)": "#BBBBBB", "library floor": "#E8A0A2"}
    fig, axes = plt.subplots(len(variants), 1, figsize=(13, 3.3 * len(variants)), squeeze=False)
    for ax, v in zip(axes[:, 0], variants):
        rows = [c for c in cases if variant(c) == v and c.get("req_per_cpu_s")]
        if v == "zstd-3":   # show the anchor, mod_deflate gzip-6, next to zstd
            rows += [c for c in cases if variant(c) == "gzip-6" and c["server"] == "mod_deflate"
                     and c.get("req_per_cpu_s")]
        servers = [s for s in SERVER_ORDER if any(c["server"] == s for c in rows)]
        width = 0.8 / max(len(servers), 1)
        for i, s in enumerate(servers):
            xs, ys, notes = [], [], []
            for j, f in enumerate(files):
                for c in rows:
                    if c["server"] == s and c["file"] == f:
                        xs.append(j + i * width - 0.4 + width / 2)
                        ys.append(c["req_per_cpu_s"])
                        notes.append(c.get("x_req_per_cpu") if s == OURS else None)
            label = "mod_deflate gzip-6 (anchor)" if v == "zstd-3" and s == "mod_deflate" else s
            ax.bar(xs, ys, width, label=label, color=colors[s])
            for x, y, n in zip(xs, ys, notes):
                if n is not None:
                    ax.annotate(f"{n:.2f}×", (x, y), ha="center", va="bottom", fontsize=7)
        ax.set_yscale("log")
        ax.set_xticks(range(len(files)))
        ax.set_xticklabels(files, fontsize=8, rotation=10)
        ax.set_ylabel("requests / server CPU-s")
        ax.set_title(f"{v}" + ("" if v == "identity" else
                               "   (label: mod_multicompress × its anchor)"), fontsize=10)
        ax.grid(axis="y", which="both", alpha=0.3)
        vals = [c["req_per_cpu_s"] for c in rows]
        if vals:
            ax.set_ylim(min(vals) / 3, max(vals) * 2.5)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(path, dpi=110)
    plt.close(fig)


README_BEGIN = "<!-- results:begin (written by bench/run --full) -->"
README_END = "<!-- results:end -->"


def update_readme(path: str, meta: dict, cases: list[dict], rss: list[dict], mid: str,
                  small: str, once: list[dict] | None = None,
                  sizes: dict[str, int] | None = None) -> None:
    """Replaces the README's results section with the targets, the HTTP/1.1 tables of the
    mid-size and small HTML and the hits of this run."""
    import targets as tg
    with open(path) as f:
        text = f.read()
    if README_BEGIN not in text or README_END not in text:
        return
    h1 = [c for c in cases if proto(c) == "h1"]
    body = [README_BEGIN, "",
            f"`{meta['command']}` on {meta['date']} ({meta['host']}; "
            f"{meta['versions']['mod_multicompress']}). Full tables (every mode): "
            "[results/results.md](results/results.md); raw numbers: "
            "[results/results.json](results/results.json); corpus: "
            "[results/corpus.md](results/corpus.md).", "",
            "![requests per server CPU-second](results/chart.png)", "",
            "### Targets: Debian's defaults and TLS + HTTP/2", ""]
    body += tg.mode_targets(cases, once or [], sizes or {})
    body += ["", "### Earlier targets (HTTP/1.1, Debian's defaults)", ""]
    body += tg.targets(h1, rss, mid, small, [c for c in once or [] if proto(c) == "h1"], sizes)
    body += ["", f"#### h1: {MODE_TITLE['h1']}", "", MODE_NOTE["h1"], "", LIMIT_NOTE, ""]
    body += results_table(h1, [mid, small])
    for m in ("h1", "h1-sendfile", "h2"):
        rows = [c for c in once or [] if proto(c) == m]
        if rows:
            body += [f"#### Compress once, {m}: {MODE_TITLE[m]}", ""] + once_table(rows) + [""]
    body += ["#### RSS, 256 slow compressed downloads", ""] + rss_table(rss)
    body += ["", README_END]
    head, rest = text.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    with open(path, "w") as f:
        f.write(head + "\n".join(body) + tail)
