# SPDX-License-Identifier: Apache-2.0
"""Turns bench/run's raw results into results.md (Markdown tables) and chart.png (matplotlib)."""

from __future__ import annotations

import math

SERVER_ORDER = ["mod_deflate", "mod_brotli", "mod_multicompress", "nginx", "precompressed"]
OURS = "mod_multicompress"


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


def add_ratios(cases: list[dict]) -> None:
    by_key = {(c["file"], c["coding"], c["level"], c["server"]): c for c in cases}
    for c in cases:
        a = by_key.get(anchor_key(c)) if anchor_key(c) else None
        c["anchor"] = f"{a['server']} {variant(a)}" if a else None
        if a and a.get("req_per_cpu_s") and c.get("req_per_cpu_s"):
            c["x_req_per_cpu"] = c["req_per_cpu_s"] / a["req_per_cpu_s"]
        else:
            c["x_req_per_cpu"] = None
        if a and a.get("body_bytes") and c.get("body_bytes") is not None:
            c["x_bytes"] = c["body_bytes"] / a["body_bytes"]
        else:
            c["x_bytes"] = None


# Issue 12's limit of a live response: plain Apache's CPU per response for the file (the
# `precompressed` server's identity row of the same run) plus the library's one call for that
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
    """Sets limit_us and x_limit (CPU µs per response over the limit) on every live row of ours."""
    lib = encoder_us(encoders)
    plain = {c["file"]: c.get("cpu_us_per_req") for c in cases
             if c["server"] == "precompressed" and c["coding"] == "identity"}
    for c in cases:
        c["limit_us"] = c["x_limit"] = None
        if c["server"] != OURS or c["coding"] == "identity":
            continue
        mode = limit_mode(c["coding"], c["level"])
        one = lib.get((c["file"], c["coding"], c["level"], mode))
        base = plain.get(c["file"])
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
    if c["server"] != OURS or c["coding"] == "identity":
        return ""
    return _f(x, "{:.2f}") if x is None or x <= LIMIT_TARGET else f"**{x:.2f}**"


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


def _find(cases, file, coding, level, server):
    for c in cases:
        if (c["file"], c["coding"], c["level"], c["server"]) == (file, coding, level, server):
            return c
    return None


ONCE_TARGET = 0.9        # issue 6
ONCE_TARGET_12 = 1.2     # issue 12


def targets(cases: list[dict], rss: list[dict], mid: str, small: str,
            once: list[dict] | None = None, sizes: dict[str, int] | None = None) -> list[str]:
    """The targets of issues 5, 6 and 12, each with the ratio reached in this run (sizes: corpus
    file -> bytes, for issue 12's files from 16 KB up)."""
    out = ["| target | reached | met |", "|---|---|---|"]

    def row(name, text, ok):
        out.append(f"| {name} | {text} | {'yes' if ok else ('**no**' if ok is False else '–')} |")

    z = _find(cases, mid, "zstd", 3, OURS)
    if z and z.get("x_req_per_cpu") is not None:
        row(f"zstd-3 ≥ 5× mod_deflate-6 req/CPU-s on `{mid}`, bytes ≤ 1.03×",
            f"{z['x_req_per_cpu']:.2f}×, bytes {z['x_bytes']:.3f}×",
            z["x_req_per_cpu"] >= 5 and z["x_bytes"] <= 1.03)
    else:
        row("zstd-3 vs mod_deflate-6", "not measured", None)

    for coding, need, anchor in (("gzip", 1.5, "mod_deflate"), ("br", 1.2, "mod_brotli")):
        ours = [c for c in cases if c["server"] == OURS and c["coding"] == coding
                and c.get("x_req_per_cpu") is not None]
        if not ours:
            row(f"{coding} vs {anchor}", "not measured", None)
            continue
        worst = min(ours, key=lambda c: c["x_req_per_cpu"])
        worst_b = max(ours, key=lambda c: c["x_bytes"])
        mid_rows = [c for c in ours if c["file"] == mid]
        mid_txt = ", ".join(f"{variant(c)} {c['x_req_per_cpu']:.2f}× (bytes {c['x_bytes']:.3f}×)"
                            for c in sorted(mid_rows, key=lambda c: c["level"]))
        row(f"{coding} ≥ {need}× {anchor} req/CPU-s at the same level, bytes ≤ 1.0×",
            f"`{mid}`: {mid_txt}; worst file: `{worst['file']}` {variant(worst)} "
            f"{worst['x_req_per_cpu']:.2f}×; largest bytes: `{worst_b['file']}` "
            f"{worst_b['x_bytes']:.3f}×",
            all(c["x_req_per_cpu"] >= need and c["x_bytes"] <= 1.0 for c in ours))

    for coding in ("gzip", "br"):
        pairs = []
        for c in cases:
            if c["server"] != OURS or c["coding"] != coding:
                continue
            n = _find(cases, c["file"], coding, c["level"], "nginx")
            if n and n.get("req_per_cpu_s") and c.get("req_per_cpu_s"):
                pairs.append((c, c["req_per_cpu_s"] / n["req_per_cpu_s"]))
        if not pairs:
            row(f"{coding}: ahead of nginx", "not measured", None)
            continue
        worst = min(pairs, key=lambda p: p[1])
        behind = [f"`{c['file']}` {variant(c)} {x:.2f}×" for c, x in pairs if x < 1.0]
        row(f"{coding}: ahead of nginx at the same level on every file",
            f"min {worst[1]:.2f}× (`{worst[0]['file']}` {variant(worst[0])})"
            + (f"; behind on {', '.join(behind)}" if behind else ""),
            not behind)

    plain = _find(cases, small, "identity", 0, "precompressed")
    if plain and plain.get("cpu_us_per_req"):
        parts, ok = [], None
        for server, coding, level in ((OURS, "gzip", 6), (OURS, "br", 4), (OURS, "br", 5),
                                      (OURS, "zstd", 3), ("mod_deflate", "gzip", 6),
                                      ("mod_brotli", "br", 5), ("nginx", "gzip", 6)):
            c = _find(cases, small, coding, level, server)
            if c and c.get("cpu_us_per_req"):
                x = c["cpu_us_per_req"] / plain["cpu_us_per_req"]
                parts.append(f"{server} {coding}-{level} {x:.2f}×")
                if server == OURS:
                    ok = (ok is not False) and x <= 1.5
        base = f"uncompressed: plain Apache {plain['cpu_us_per_req']:.0f} µs/req"
        ours_id = _find(cases, small, "identity", 0, OURS)
        if ours_id and ours_id.get("cpu_us_per_req"):
            base += f", mod_multicompress identity {ours_id['cpu_us_per_req']:.0f} µs/req"
        row(f"`{small}`: compressing ≤ 1.5× the CPU of serving it uncompressed (plain Apache)",
            "; ".join(parts) + f" ({base})", ok)
    else:
        row("small page CPU", "not measured", None)

    ours_rss = [r for r in rss if r["server"] == OURS]
    if ours_rss:
        worst = max(ours_rss, key=lambda r: r["rss_growth"])
        row(f"{worst['connections']} slow compressed streams add ≤ 512 MiB RSS",
            ", ".join(f"{r['coding']}-{r['level']} RSS +{r['rss_growth'] / 2**20:.0f} MiB "
                      f"(anonymous +{r['anon_growth'] / 2**20:.0f} MiB)" for r in ours_rss),
            all(r["rss_growth"] <= 512 * 2**20 for r in ours_rss))
    else:
        row("RSS with slow streams", "not measured", None)

    _once_row(row, once, ONCE_TARGET,
              f"issue 6: a cache hit and a sidecar hit each ≥ {ONCE_TARGET}× the req/CPU-s of "
              "plain Apache serving the same bytes as a precompressed file; bytes saved vs gzip-6",
              saved=True)
    _issue12_rows(row, cases, once, sizes or {})
    return out


def _once_row(row, once: list[dict] | None, need: float, name: str, saved: bool) -> None:
    """Sidecar and cache hits against plain Apache serving the same bytes (x_precompressed)."""
    hits = [c for c in (once or []) if c["server"] in ("ours-sidecar", "ours-cache")]
    measured = [c for c in hits if c.get("x_precompressed") is not None]
    if not measured:
        row(name, "not measured", None)
        return
    parts = []
    for server in ("ours-sidecar", "ours-cache"):
        rs = [c for c in measured if c["server"] == server]
        if not rs:
            parts.append(f"{server}: not measured")
            continue
        worst = min(rs, key=lambda c: c["x_precompressed"])
        below = [f"`{c['file']}` {variant(c)} {c['x_precompressed']:.2f}×" for c in rs
                 if c["x_precompressed"] < need]
        parts.append(f"{server}: min {worst['x_precompressed']:.2f}× (`{worst['file']}` "
                     f"{variant(worst)}" + (f"; below: {', '.join(below)}" if below else "")
                     + ")")
    saved_txt = []
    for coding in ("zstd", "br", "gzip") if saved else ():
        rs = [c for c in (once or []) if c["server"] == "precompressed" and c["coding"] == coding]
        if rs:
            lo = min(c["saved_vs_gzip6"] for c in rs) * 100
            hi = max(c["saved_vs_gzip6"] for c in rs) * 100
            lvl = variant(rs[0])
            saved_txt.append(f"{lvl} {lo:.1f}%" if len(rs) == 1 or abs(hi - lo) < 0.05
                             else f"{lvl} {lo:.1f}–{hi:.1f}%")
    # Every planned hit must have been measured (a failed check leaves a pair out).
    pairs = {(c["file"], c["coding"]) for c in (once or [])}
    complete = all(any(c["server"] == s and (c["file"], c["coding"]) == p
                       and c.get("x_precompressed") is not None for c in hits)
                   for p in pairs for s in ("ours-sidecar", "ours-cache"))
    row(name, "; ".join(parts) + ("; bytes saved vs gzip-6: " + ", ".join(saved_txt)
                                  if saved_txt else "")
        + ("" if complete else "; some hits not measured"),
        complete and all(c["x_precompressed"] >= need for c in measured))


def _issue12_rows(row, cases: list[dict], once: list[dict] | None, sizes: dict[str, int]) -> None:
    """The speed targets of issue 12, from the same run."""
    # br-4 / br-5 against nginx + ngx_brotli at no more bytes, on every file from 16 KB up.
    name = (f"issue 12: br-4 and br-5 ≥ 1.00× nginx + ngx_brotli req/CPU-s at ≤ 1.00× its "
            f"bytes, on every file from {NGINX_BR_MIN_SIZE // 1024} KB up")
    pairs = []
    for c in cases:
        if c["server"] != OURS or c["coding"] != "br" or c["level"] not in (4, 5):
            continue
        if sizes.get(c["file"], 0) < NGINX_BR_MIN_SIZE:
            continue
        n = _find(cases, c["file"], "br", c["level"], "nginx")
        if n and n.get("req_per_cpu_s") and c.get("req_per_cpu_s") and n.get("body_bytes"):
            pairs.append((c, c["req_per_cpu_s"] / n["req_per_cpu_s"],
                          c["body_bytes"] / n["body_bytes"]))
    if not pairs:
        row(name, "not measured", None)
    else:
        worst = min(pairs, key=lambda p: p[1])
        worst_b = max(pairs, key=lambda p: p[2])
        miss = [f"`{c['file']}` {variant(c)} {x:.2f}× (bytes {b:.3f}×)" for c, x, b in pairs
                if x < 1.0 or b > 1.0]
        row(name, f"min {worst[1]:.2f}× (`{worst[0]['file']}` {variant(worst[0])}); largest bytes "
            f"{worst_b[2]:.3f}× (`{worst_b[0]['file']}` {variant(worst_b[0])}); "
            f"{len(pairs) - len(miss)}/{len(pairs)} met"
            + (f"; missed: {', '.join(miss)}" if miss else ""), not miss)

    # gzip-6 ahead of nginx gzip-6 on every file.
    name = "issue 12: gzip-6 ahead of nginx gzip-6 req/CPU-s on every file"
    pairs = []
    for c in cases:
        if c["server"] == OURS and c["coding"] == "gzip" and c["level"] == 6:
            n = _find(cases, c["file"], "gzip", 6, "nginx")
            if n and n.get("req_per_cpu_s") and c.get("req_per_cpu_s"):
                pairs.append((c, c["req_per_cpu_s"] / n["req_per_cpu_s"]))
    if not pairs:
        row(name, "not measured", None)
    else:
        worst = min(pairs, key=lambda p: p[1])
        behind = [f"`{c['file']}` {x:.2f}×" for c, x in pairs if x < 1.0]
        row(name, f"min {worst[1]:.2f}× (`{worst[0]['file']}`); {len(pairs) - len(behind)}/"
            f"{len(pairs)} files ahead" + (f"; behind on {', '.join(behind)}" if behind else ""),
            not behind)

    # Every live coding and level within 1.15x of its limit.
    name = (f"issue 12: every live coding and level ≤ {LIMIT_TARGET}× its limit (plain Apache's "
            "CPU µs/req for the file + bench_encoders' one call for the body) on every file")
    live = [c for c in cases if c["server"] == OURS and c["coding"] != "identity"
            and c.get("cpu_us_per_req")]
    have = [c for c in live if c.get("x_limit") is not None]
    if not have:
        row(name, "not measured", None)
    else:
        worst = max(have, key=lambda c: c["x_limit"])
        over = sorted((c for c in have if c["x_limit"] > LIMIT_TARGET),
                      key=lambda c: -c["x_limit"])
        over_txt = [f"`{c['file']}` {variant(c)} {c['x_limit']:.2f}×" for c in over]
        missing = [f"`{c['file']}` {variant(c)}" for c in live if c.get("x_limit") is None]
        row(name, f"max {worst['x_limit']:.2f}× (`{worst['file']}` {variant(worst)}: "
            f"{worst['cpu_us_per_req']:.0f} µs against {worst['limit_plain_us']:.0f} + "
            f"{worst['limit_lib_us']:.0f} µs); {len(have) - len(over)}/{len(have)} within"
            + (f"; over: {', '.join(over_txt)}" if over else "")
            + (f"; no limit for {', '.join(missing)}" if missing else ""),
            not over and not missing)

    # An identity response with the module loaded against plain Apache.
    name = (f"issue 12: an identity response with the module loaded ≤ {IDENTITY_TARGET}× plain "
            "Apache's CPU µs/req, on every file")
    pairs = []
    for c in cases:
        if c["server"] == OURS and c["coding"] == "identity" and c.get("cpu_us_per_req"):
            p = _find(cases, c["file"], "identity", 0, "precompressed")
            if p and p.get("cpu_us_per_req"):
                pairs.append((c, c["cpu_us_per_req"] / p["cpu_us_per_req"]))
    if not pairs:
        row(name, "not measured", None)
    else:
        worst = max(pairs, key=lambda p: p[1])
        over = [f"`{c['file']}` {x:.2f}×" for c, x in pairs if x > IDENTITY_TARGET]
        row(name, f"max {worst[1]:.2f}× (`{worst[0]['file']}`); {len(pairs) - len(over)}/"
            f"{len(pairs)} within" + (f"; over: {', '.join(over)}" if over else ""), not over)

    _once_row(row, once, ONCE_TARGET_12,
              f"issue 12: a cache hit and a sidecar hit each ≥ {ONCE_TARGET_12}× the req/CPU-s of "
              "plain Apache serving the same bytes", saved=False)


def once_table(once: list[dict]) -> list[str]:
    out = ["| file | coding | server | req/s | CPU µs/req | req/CPU-s | × precompressed req/CPU-s "
           "| body bytes | gzip-6 bytes | saved vs gzip-6 |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    order = {"precompressed": 0, "ours-sidecar": 1, "ours-cache": 2,
             "precompressed (cache bytes)": 3}
    codings = {"zstd": 0, "br": 1, "gzip": 2}
    files = list(dict.fromkeys(c["file"] for c in once))
    for c in sorted(once, key=lambda c: (files.index(c["file"]), codings[c["coding"]],
                                         order.get(c["server"], 9))):
        name = f"**{c['server']}**" if c["server"].startswith("ours-") else c["server"]
        x = c.get("x_precompressed")
        xs = _f(x, "{:.2f}") if x is None or x >= ONCE_TARGET else f"**{x:.2f}**"
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
    "Limit (issue 12, rows of mod_multicompress): plain Apache's CPU µs/req for the file (the "
    "`precompressed` identity row of this run) + the library's one call for the body "
    "(bench_encoders of this run, CPU time: `oneshot` for gzip-1…7 and zstd, the filter's "
    "one-shot path; `whole` = `mc::compress_all` for br and gzip-8/9); × limit = CPU µs/req over "
    f"the limit (target ≤ {LIMIT_TARGET}, bold above).")


def markdown(meta: dict, cases: list[dict], rss: list[dict], idle_rss: dict, encoders: list[dict],
             files: list[str], mid: str, small: str, once: list[dict] | None = None,
             sizes: dict[str, int] | None = None) -> str:
    lines = [
        "# mod_multicompress side-by-side benchmark", "",
        f"Command: `{meta['command']}` ({meta['mode']}, {meta['date']}, {meta['elapsed_s']:.0f} s)."
        f" Host: {meta['host']}.", "",
        f"Load: `wrk -t{meta['wrk_threads']} -c{meta['connections']} "
        f"-d{meta.get('round_s', meta['duration'])}s`, {meta.get('rounds', 1)} run(s) per server "
        "and case in alternating server order (forward, reverse, ...; a row sums them), "
        "keep-alive, one `Accept-Encoding` value per run. Servers and wrk share the machine; "
        "CPU is the servers' own (utime+stime of all their processes from /proc).", "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".", "",
        "Corpus: see [corpus.md](corpus.md).", "",
        "## Targets (issues 5, 6 and 12)", "",
    ]
    lines += targets(cases, rss, mid, small, once, sizes)
    lines += ["", "## Requests per server CPU-second", "",
              "Anchors: gzip rows against mod_deflate at the same level, br rows against "
              "mod_brotli at the same quality, zstd rows against mod_deflate gzip-6.", "",
              LIMIT_NOTE, ""]
    lines += results_table(cases, files)
    lines += ["## Compress once: sidecar and cache hits (issue 6)", ""]
    if once:
        levels = meta.get("once_levels", {})
        lines += [
            "mod_multicompress with `MultiCompressStatic On` (**ours-sidecar**: `FILE.zst` / "
            f"`.br` / `.gz` next to `FILE`, written by {meta.get('once_writer') or '?'}) and with "
            "`MultiCompressCache On` (**ours-cache**: shmcb store, `MultiCompressCacheLevel` "
            + ", ".join(f"{c} {lvl}" for c, lvl in levels.items()) + "; warmed up until the "
            "source note said `cache` and the hit was the strong copy), against plain Apache "
            "serving the very same sidecar file as a plain file (**precompressed**, `AddEncoding`;"
            " *precompressed (cache bytes)* serves the cached body when it is not byte-identical "
            "to the sidecar). Each body was checked once to decode to the original and each source"
            " note to say `sidecar` / `cache`. Each row sums "
            f"{meta.get('once_rounds', 1)} wrk runs of {meta.get('once_duration')} s, in alternating "
            "order (precompressed, sidecar, cache, then the reverse). gzip-6 bytes: zlib level 6 "
            f"(as the `pre/gzip-6` copies). Targets: × precompressed ≥ {ONCE_TARGET} (issue 6, bold "
            f"below) and ≥ {ONCE_TARGET_12} (issue 12).", ""]
        lines += once_table(once)
    else:
        lines += ["(not run)"]
    lines += ["", "## RSS with slow compressed downloads", "",
              f"{meta['rss_file']}; fresh server instances with a {meta['rss_send_buffer']}-byte "
              "socket send buffer, one per test; growth = peak during the test minus the value just "
              "before it (sums over the server's processes). Streams not started = no response "
              "head before the start timeout (all were being compressed).", ""]
    lines += rss_table(rss) if rss else ["(not run)"]
    if idle_rss:
        lines += ["", "RSS of the throughput servers at idle after all wrk runs (memory kept "
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

    files = [f for f in files if any(c["file"] == f for c in cases)]
    variants = [v for v in ["identity", "gzip-6", "br-4", "br-5", "zstd-3"]
                if any(variant(c) == v for c in cases)]
    colors = {"mod_deflate": "#4C72B0", "mod_brotli": "#DD8452", "mod_multicompress": "#C44E52",
              "nginx": "#55A868", "precompressed": "#8C8C8C"}
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
    """Replaces the README's results section with the targets, the mid-size and small HTML
    tables and the RSS table of this run."""
    with open(path) as f:
        text = f.read()
    if README_BEGIN not in text or README_END not in text:
        return
    body = [README_BEGIN, "",
            f"`{meta['command']}` on {meta['date']} ({meta['host']}; {meta['versions']['mod_multicompress']}). "
            "Full tables: [results/results.md](results/results.md); raw numbers: "
            "[results/results.json](results/results.json); corpus: "
            "[results/corpus.md](results/corpus.md).", "",
            "![requests per server CPU-second](results/chart.png)", "",
            "### Targets", ""]
    body += targets(cases, rss, mid, small, once, sizes)
    body += ["", LIMIT_NOTE, ""] + results_table(cases, [mid, small])
    if once:
        body += ["### Compress once: sidecar and cache hits (issue 6)", ""] + once_table(once) + [""]
    body += ["### RSS, 256 slow compressed downloads", ""] + rss_table(rss)
    body += ["", README_END]
    head, rest = text.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    with open(path, "w") as f:
        f.write(head + "\n".join(body) + tail)
