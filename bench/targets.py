# SPDX-License-Identifier: Apache-2.0
"""The targets tables of bench/run's results: each target with the ratio reached in the same run
and whether it was met, and the measurement that shows a target out of Apache's reach."""

from __future__ import annotations

from report import (IDENTITY_TARGET, LIBFLOOR, LIMIT_TARGET, NGINX_BR_MIN_SIZE, OURS,  # noqa: F401
                    _find, variant)

ONCE_TARGET = 0.9        # compress once: hits against plain Apache
ONCE_TARGET_12 = 1.2     # the faster-than-plain-Apache goal for hits


def targets(cases: list[dict], rss: list[dict], mid: str, small: str,
            once: list[dict] | None = None, sizes: dict[str, int] | None = None) -> list[str]:
    """The earlier targets (HTTP/1.1 rows of one mode), each with the ratio reached in this run
    (sizes: corpus file -> bytes, for the rows about files from 16 KB up)."""
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
              f"compress once: a cache hit and a sidecar hit each ≥ {ONCE_TARGET}× the req/CPU-s of "
              "plain Apache serving the same bytes as a precompressed file; bytes saved vs gzip-6",
              saved=True)
    _speed_rows(row, cases, once, sizes or {})
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


def _speed_rows(row, cases: list[dict], once: list[dict] | None, sizes: dict[str, int]) -> None:
    """The speed targets against nginx, the limit and plain Apache, from the same run."""
    # br-4 / br-5 against nginx + ngx_brotli at no more bytes, on every file from 16 KB up.
    name = (f"br-4 and br-5 ≥ 1.00× nginx + ngx_brotli req/CPU-s at ≤ 1.00× its "
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
    name = "gzip-6 ahead of nginx gzip-6 req/CPU-s on every file"
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
    name = (f"every live coding and level ≤ {LIMIT_TARGET}× its limit (plain Apache's "
            "CPU µs/req for the file + bench_encoders' one call for the body) on every file")
    live = [c for c in cases if c["server"] == OURS and c["coding"] != "identity"
            and c.get("cpu_us_per_req")]
    text, ok = _limit_row(cases, live)
    row(name, text, ok)

    # An identity response with the module loaded against plain Apache.
    name = (f"an identity response with the module loaded ≤ {IDENTITY_TARGET}× plain "
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
              f"a cache hit and a sidecar hit each ≥ {ONCE_TARGET_12}× the req/CPU-s of "
              "plain Apache serving the same bytes", saved=False)




TARGET_MIN_SIZE = 30 * 1024     # live against nginx: every corpus file from 30 KB up
LIVE_VS_NGINX = (("gzip", 6), ("br", 4))


def _live_vs_nginx(cases: list[dict], mode: str, coding: str, level: int,
                   files: set[str] | None) -> list[tuple[dict, dict, float, float]]:
    """(ours, nginx, req/CPU-s ratio, bytes ratio) per file of the mode."""
    out = []
    for c in cases:
        if (c.get("proto", "h1"), c["server"], c["coding"], c["level"]) != \
                (mode, OURS, coding, level) or (files is not None and c["file"] not in files):
            continue
        n = _find(cases, c["file"], coding, level, "nginx", mode)
        if n and n.get("req_per_cpu_s") and c.get("req_per_cpu_s") and n.get("body_bytes") \
                and c.get("body_bytes") is not None:
            out.append((c, n, c["req_per_cpu_s"] / n["req_per_cpu_s"],
                        c["body_bytes"] / n["body_bytes"]))
    return out


def _limit_row(cases: list[dict], live: list[dict]) -> tuple[str, bool | None]:
    """The "≤ LIMIT_TARGET× its limit" row for ours' live rows: the worst, how many within, the
    ones over (each with the library floor's own × limit when it was measured: how far a handler
    that is nothing but the library's call stays from the limit in the same rounds), and ours
    against the library floor."""
    have = [c for c in live if c.get("x_limit") is not None]
    if not have:
        return "not measured", None
    worst = max(have, key=lambda c: c["x_limit"])
    over = sorted((c for c in have if c["x_limit"] > LIMIT_TARGET), key=lambda c: -c["x_limit"])
    missing = [f"`{c['file']}` {variant(c)}" for c in live if c.get("x_limit") is None]

    def floor_x(c: dict) -> str:
        f = _find(cases, c["file"], c["coding"], c["level"], LIBFLOOR, c.get("proto", "h1"))
        return f" (library floor {f['x_limit']:.2f}×)" if f and f.get("x_limit") else ""
    vs_floor = [c for c in live if c.get("x_lib_floor")]
    floor_txt = ""
    if vs_floor:
        w = max(vs_floor, key=lambda c: c["x_lib_floor"])
        floor_txt = (f"; ours × the library floor measured in the same rounds: max "
                     f"{w['x_lib_floor']:.2f}× (`{w['file']}` {variant(w)}), "
                     f"{sum(c['x_lib_floor'] <= LIMIT_TARGET for c in vs_floor)}/{len(vs_floor)} "
                     f"within {LIMIT_TARGET}×")
    return (f"max {worst['x_limit']:.2f}× (`{worst['file']}` {variant(worst)}: "
            f"{worst['cpu_us_per_req']:.0f} µs against {worst['limit_plain_us']:.0f} + "
            f"{worst['limit_lib_us']:.0f} µs); {len(have) - len(over)}/{len(have)} within"
            + ("; over: " + ", ".join(f"`{c['file']}` {variant(c)} {c['x_limit']:.2f}×"
                                      f"{floor_x(c)}" for c in over) if over else "")
            + (f"; no limit for {', '.join(missing)}" if missing else "") + floor_txt,
            not over and not missing)


def _floor(cases: list[dict], c: dict) -> tuple[float, float] | None:
    """(plain µs, floor µs): what Apache cannot go below for this live response: its own CPU
    per response sending these very bytes as a plain file in the same mode at its cheapest
    (the `precompressed (no mmap)` row: EnableMMAP Off, and sendfile where it applies; else the
    `precompressed` row) + the library's one call for the body."""
    mode = c.get("proto", "h1")
    p = _find(cases, c["file"], c["coding"], c["level"], "precompressed (no mmap)", mode) or \
        _find(cases, c["file"], "br", 4, "precompressed (no mmap)", mode) or \
        _find(cases, c["file"], c["coding"], c["level"], "precompressed", mode)
    if p and p.get("cpu_us_per_req") and c.get("limit_lib_us"):
        return p["cpu_us_per_req"], p["cpu_us_per_req"] + c["limit_lib_us"]
    return None


def _least(cases: list[dict], c: dict) -> float | None:
    """The least CPU µs/req a live response like ours' `c` costs in this Apache: the library
    floor measured in the same rounds when there is one, else _floor's sum."""
    if c.get("lib_floor_us"):   # ours, when it costs less (a floor is no lower than what ran)
        return min(c["lib_floor_us"], c["cpu_us_per_req"])
    fl = _floor(cases, c)
    return fl[1] if fl else None


def mode_targets(cases: list[dict], once: list[dict], sizes: dict[str, int]) -> list[str]:
    """The targets for Debian's defaults and TLS + HTTP/2, each per mode, then the measurement
    that shows where Apache's own per-request cost puts nginx out of reach."""
    from report import HIT_TARGET
    out = ["| target | mode | reached | met |", "|---|---|---|---|"]

    def row(name, mode, text, ok):
        out.append(f"| {name} | {mode} | {text} | "
                   f"{'yes' if ok else ('**no**' if ok is False else '–')} |")

    big = {f for f, n in sizes.items() if n >= TARGET_MIN_SIZE}
    for mode in ("h1", "h2"):
        for coding, level in LIVE_VS_NGINX:
            name = (f"live {coding}-{level} ≥ nginx req/CPU-s at ≤ its bytes, every file from "
                    f"{TARGET_MIN_SIZE // 1024} KB")
            pairs = _live_vs_nginx(cases, mode, coding, level, big)
            if not pairs:
                row(name, mode, "not measured", None)
                continue
            worst = min(pairs, key=lambda p: p[2])
            miss = []
            for c, n, x, b in pairs:
                if x >= 1.0 and b <= 1.0:
                    continue
                least = _least(cases, c)
                out_of_reach = least is not None and n.get("cpu_us_per_req") \
                    and least > n["cpu_us_per_req"]
                miss.append(f"`{c['file']}` {x:.2f}× (bytes {b:.3f}×)"
                            + (" out of Apache's reach" if out_of_reach else ""))
            row(name, mode, f"min {worst[2]:.2f}× (`{worst[0]['file']}`); "
                f"{len(pairs) - len(miss)}/{len(pairs)} met"
                + (f"; missed: {', '.join(miss)}" if miss else ""), not miss)

    for mode in ("h1", "h2"):
        live = [c for c in cases if c.get("proto", "h1") == mode and c["server"] == OURS
                and c["coding"] != "identity" and c.get("cpu_us_per_req")]
        row(f"every live row ≤ {LIMIT_TARGET}× its limit", mode, *_limit_row(cases, live))

    for mode in ("h1", "h1-sendfile", "h2"):
        name = f"sidecar and cache hits ≥ {HIT_TARGET}× plain Apache sending the same bytes"
        rows = [c for c in once if c.get("proto", "h1") == mode]
        hits = [c for c in rows if c["server"] in ("ours-sidecar", "ours-cache")
                and c.get("x_precompressed") is not None]
        if not hits:
            row(name, mode, "not measured", None)
            continue
        parts = []
        # The floor row (bench/floor/): plain Apache after the access check a sidecar needs.
        floor = {(c["file"], c["coding"]): c["x_precompressed"] for c in rows
                 if c["server"] == "floor (access check)" and c.get("x_precompressed")}

        def at_floor(c) -> str:
            x = floor.get((c["file"], c["coding"]))
            return "" if c["server"] != "ours-sidecar" or x is None else f" (floor {x:.2f}×)"
        for server in ("ours-sidecar", "ours-cache"):
            rs = [c for c in hits if c["server"] == server]
            if rs:
                worst = min(rs, key=lambda c: c["x_precompressed"])
                below = [f"`{c['file']}` {variant(c)} {c['x_precompressed']:.2f}×{at_floor(c)}"
                         for c in rs if c["x_precompressed"] < HIT_TARGET]
                parts.append(f"{server} min {worst['x_precompressed']:.2f}× "
                             f"({len(rs) - len(below)}/{len(rs)} met"
                             + (f"; below: {', '.join(below)}" if below else "") + ")")
        pairs = {(c["file"], c["coding"]) for c in rows}
        complete = all(any(c["server"] == s and (c["file"], c["coding"]) == p for c in hits)
                       for p in pairs for s in ("ours-sidecar", "ours-cache"))
        row(name, mode, "; ".join(parts) + ("" if complete else "; some hits not measured"),
            complete and all(c["x_precompressed"] >= HIT_TARGET for c in hits))

    out += ["", "Where ours trails nginx at the same level, what Apache itself cannot go below: "
            "floor = plain Apache's CPU µs/req sending these very bytes as a plain file at its "
            "cheapest in the same mode (the `precompressed (no mmap)` row of the br-4 group, whose "
            "file is within a few % of the gzip-6 one's size: EnableMMAP Off, and sendfile over "
            "HTTP/1.1, measured in the same rounds as ours and nginx) + the library's one call for "
            "the body (bench_encoders: a hot loop on one quiet thread, which Apache's threaded "
            "children do not reach). library floor = the `library floor` row: plain Apache with a "
            "handler that is nothing but that call (bench/floor/mod_mc_libfloor.c), measured in "
            "the same rounds. Best reachable = nginx µs ÷ the library floor (÷ ours where ours "
            "costs less; ÷ the floor when the library floor was not measured); below 1.00 no "
            "module inside this Apache can reach nginx.", "",
            "| mode | file | coding | ours µs/req | nginx µs/req | "
            "plain Apache, same bytes µs/req | library µs | floor µs | library floor µs/req | "
            "best reachable × nginx | ours × nginx | ours × library floor | verdict |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    n_rows = 0
    for mode in ("h1", "h2"):
        for coding, level in LIVE_VS_NGINX:
            for c, n, x, b in _live_vs_nginx(cases, mode, coding, level, None):
                fl = _floor(cases, c)
                least = _least(cases, c)
                if x >= 1.0 or fl is None or least is None or not n.get("cpu_us_per_req"):
                    continue
                best = n["cpu_us_per_req"] / least
                measured = bool(c.get("lib_floor_us"))
                if best < 1.0:
                    verdict = "out of Apache's reach" + (" (measured)" if measured else "")
                else:
                    verdict = "ours to fix" if measured else "floor below nginx"
                lib_floor = f"{c['lib_floor_us']:.0f}" if measured else "–"
                x_floor = f"{c['x_lib_floor']:.2f}" if c.get("x_lib_floor") else "–"
                out.append(f"| {mode} | `{c['file']}` | {variant(c)} | {c['cpu_us_per_req']:.0f} | "
                           f"{n['cpu_us_per_req']:.0f} | {fl[0]:.0f} | {c['limit_lib_us']:.0f} | "
                           f"{fl[1]:.0f} | {lib_floor} | {best:.2f} | {x:.2f} | {x_floor} | "
                           f"{verdict} |")
                n_rows += 1
    if n_rows == 0:
        out.append("| – | (ours ahead of nginx on every measured file) | | | | | | | | | | | |")
    return out
