# SPDX-License-Identifier: Apache-2.0
"""bench/dictionary.py, part 3: dictionary.md and dictionary.png from the results."""

from __future__ import annotations

from pathlib import Path

HEADER_LEN = 40
TARGET_CPU = 1.2           # dcz-3 CPU per response <= 1.2 x zstd-3
SITE_TARGETS = [           # (label, numerator, denominator, limit)
    ("dcz-3 bytes ≤ 0.70× zstd-3", "dcz-3", "zstd-3", 0.70),
    ("dcz-3 bytes ≤ 0.92× br-11", "dcz-3", "br-11", 0.92),
    ("dcz-19 bytes ≤ 0.76× br-11", "dcz-19", "br-11", 0.76),
]
JQUERY_STEP, JQUERY_LIMIT = "jquery 3.7.0→3.7.1", 372


def _yes(ok: bool) -> str:
    return "**yes**" if ok else "**no**"


def targets(meta: dict, site: dict | None, rows: list[dict], levels: list[int]) -> list[str]:
    md = ["## Targets", "", "| target | reached | met |", "|---|---|---|"]
    if site:
        b = site["bytes"]
        t = site.get("tool_holdout", {}).get("bytes")
        p = site.get("by_page", {}).get("bytes")
        for label, num, den, limit in SITE_TARGETS:
            x = b[num] / b[den]
            other = f"; the other split: {t[num] / t[den]:.3f}×" if t else ""
            met = _yes(x <= limit)
            if p:   # the issue's own measure: the pages (URLs) in halves
                y = p[num] / p[den]
                other += f"; the pages in halves (the issue's measure): {y:.3f}×"
                met = f"{_yes(y <= limit)} by the pages; {_yes(x <= limit)} by the contents"
            md.append(f"| Apache manual, measured half: {label} | {x:.3f}× ({b[num]} / "
                      f"{b[den]} bytes){other} | {met} |")
        if site.get("cpu"):
            c = site["cpu"]
            x = c["dcz-3"]["us_per_resp"] / c["zstd-3"]["us_per_resp"]
            md.append(f"| Apache manual: dcz-3 CPU per response ≤ {TARGET_CPU}× zstd-3 | "
                      f"{x:.3f}× ({c['dcz-3']['us_per_resp']:.0f} / "
                      f"{c['zstd-3']['us_per_resp']:.0f} µs) | {_yes(x <= TARGET_CPU)} |")
    served = [r for r in rows if "server" in r]
    jq = next((r for r in served if r["step"] == JQUERY_STEP and "3" in r["server"]), None)
    if jq:
        n = jq["server"]["3"]["dcz"]
        md.append(f"| {JQUERY_STEP}, live dcz-3 ≤ {JQUERY_LIMIT} bytes (header included) | {n} "
                  f"| {_yes(n <= JQUERY_LIMIT)} |")
    cpu = [(r["cpu"]["ratio"], r["step"]) for r in served if r.get("cpu")]
    if cpu:
        worst = max(cpu)
        md.append(f"| releases: dcz-3 CPU per response ≤ {TARGET_CPU}× zstd-3 of the same body "
                  f"| worst {worst[0]:.3f}× ({worst[1]}); " +
                  ", ".join(f"{s} {x:.3f}×" for x, s in cpu) +
                  f" | {_yes(worst[0] <= TARGET_CPU)} |")
    tool = [(r, lv) for r in rows for lv in levels if str(lv) in r.get("delta", {})]
    if tool:
        over = [(r["step"], lv) for r, lv in tool
                if r["delta"][str(lv)]["bytes"] - HEADER_LEN > r["offline"][f"patch-from-{lv}"]]
        worst = max((r["delta"][str(lv)]["bytes"] - HEADER_LEN) /
                    r["offline"][f"patch-from-{lv}-nocheck"] for r, lv in tool)
        md.append("| deploy-time delta (its frame) ≤ `zstd --patch-from` at the same level | "
                  f"{len(tool) - len(over)}/{len(tool)}; largest against `--no-check`: "
                  f"{worst:.3f}× | {_yes(not over)} |")
    return md + [""]


def site_section(site: dict) -> list[str]:
    b, n = site["bytes"], site["test_pages"]
    md = ["## A site dictionary: the Apache manual", "",
          f"{site['pages']} pages (`.html` under Debian's apache2-doc, symlinks followed), "
          f"{site['distinct']} distinct; trained on {site['train_pages']} "
          f"(`multicompress-precompress --train-dictionary --holdout 0 --types html`, "
          f"{site['train_seconds']} s, {site['dictionary_bytes']} bytes of raw content), "
          f"measured on the other {n} ({site['test_bytes']} bytes) as Apache with the module "
          "sends them: one GET per page and coding, every dcz body checked against the "
          "dictionary's hash and decoded. dcz bytes include the 40-byte header.", "",
          "| coding | bytes | per response | × identity | × zstd-3 | × br-11 | CPU µs/response "
          "| CPU × zstd-3 | runs (µs) |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    cpu = site.get("cpu", {})
    z = cpu.get("zstd-3", {}).get("us_per_resp")
    for coding, v in b.items():
        c = cpu.get(coding)
        md.append(f"| {coding} | {v} | {v // n} | {v / b['identity']:.3f} | "
                  f"{v / b['zstd-3']:.3f} | {v / b['br-11']:.3f} | "
                  + (f"{c['us_per_resp']:.0f} | {c['us_per_resp'] / z:.2f} | "
                     f"{' / '.join(f'{x:.0f}' for x in c['runs_us'])} |" if c and z
                     else "– | – | – |"))
    md += ["", f"CPU: `h2load --h1 -c 2` over the measured pages, per coding ({site['rounds']} "
           "round(s); br-11 and dcz-19 one), dcz-3 and zstd-3 twice each in the order dcz, "
           "zstd, zstd, dcz; "
           "server utime+stime of all httpd processes (/proc) over the responses, Apache's "
           "own work included (the identity row). h2load runs on the same 2 cores.", "",
           "The tool's own report of the dictionary (no held-back files here):", "", "```",
           site.get("tool_report", ""), "```", ""]
    bp = site.get("by_page")
    if bp:
        t = bp["bytes"]
        md += ["The issue's split: the 2685 pages (URLs, not contents) in halves, every other "
               "one in the order of their paths, trained on one half and the other "
               f"{bp['test_pages']} served and measured as above; {bp['also_trained']} of them "
               "have the bytes of a page trained on (a translation that is the English page is "
               "published under both URLs, as on the site). "
               f"dcz-3 = {t['dcz-3'] / t['zstd-3']:.3f}× zstd-3 and "
               f"{t['dcz-3'] / t['br-11']:.3f}× br-11, dcz-19 = {t['dcz-19'] / t['br-11']:.3f}× "
               "br-11 (bytes: " + ", ".join(f"{c} {v}" for c, v in t.items()) + ").", ""]
    th = site.get("tool_holdout")
    if th:
        t = th["bytes"]
        md += ["Another split of the same pages: `multicompress-precompress --train-dictionary "
               "--holdout 50% --types html` on the whole manual (held back: the first half in "
               "the order of the content's SHA-256; its bytes are the core's, as the module "
               f"sends them): dcz-3 = {t['dcz-3'] / t['zstd-3']:.3f}× zstd-3 and "
               f"{t['dcz-3'] / t['br-11']:.3f}× br-11, dcz-19 = {t['dcz-19'] / t['br-11']:.3f}× "
               "br-11.", "", "```", th["report"], "```", ""]
    return md


def releases_section(meta: dict, rows: list[dict], levels: list[int]) -> list[str]:
    md = ["## Deltas between releases", "",
          "Body bytes of the new release with the old one as the dictionary. `patch-from-N` = "
          f"`zstd -N --patch-from=OLD NEW` (zstd CLI {meta['zstd_cli']}, its defaults: a 4-byte "
          "checksum), `nc` the same with `--no-check`; `live dcz-N` = the module's response "
          "(header included); `delta-N` = the sidecar `multicompress-precompress --deltas 1 "
          "--levels dcz=N` writes (header included); × = live / (patch-from + 40).", ""]
    head = ["step", "new", "gzip-6", "br-11", "zstd-19"]
    for lv in levels:
        head += [f"patch-from-{lv} (nc)", f"live dcz-{lv}", "×", f"delta-{lv}"]
    md += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        o = r["offline"]
        cells = [r["step"], o["new"], o["gzip-6"], o["br-11"], o["zstd-19"]]
        for lv in levels:
            s = r.get("server", {}).get(str(lv))
            d = r.get("delta", {}).get(str(lv))
            cells += [f"{o[f'patch-from-{lv}']} ({o[f'patch-from-{lv}-nocheck']})",
                      s["dcz"] if s else "–", f"{s['ratio_patch']:.3f}" if s else "–",
                      d["bytes"] if d else "–"]
        md.append("| " + " | ".join(str(c) for c in cells) + " |")
    md += ["", "The live frame is the prepared dictionary's (no pass over the dictionary per "
           "response); where long-distance matching finds more, as on bootstrap's stylesheet "
           "at level 3, `zstd --patch-from` is smaller, and the deploy-time delta takes its "
           "frame (the `cli` column below). A delta is never larger than either.", ""]
    served = [r for r in rows if r.get("cpu")]
    if served:
        md += ["### CPU per response", "",
               f"`ab -k -n {meta['n']} -c {meta['c']}` of the new release, four runs in the order "
               "dcz, zstd, zstd, dcz (after a warm-up of each) on the level-3 port; server "
               "utime+stime over the responses.", "",
               "| step | dcz-3 µs | zstd-3 µs | ratio | dcz runs | zstd runs | dcz bytes | "
               "zstd-3 bytes |", "|---|---:|---:|---:|---|---|---:|---:|"]
        for r in served:
            c = r["cpu"]
            md.append(f"| {r['step']} | {c['dcz']['us_per_resp']:.0f} | "
                      f"{c['zstd']['us_per_resp']:.0f} | {c['ratio']:.3f} | "
                      f"{' / '.join(f'{x:.0f}' for x in c['dcz']['runs_us'])} | "
                      f"{' / '.join(f'{x:.0f}' for x in c['zstd']['runs_us'])} | "
                      f"{c['dcz']['body_bytes']} | {c['zstd']['body_bytes']} |")
        md.append("")
    md += ["### How libzstd can use the dictionary", "",
           f"libzstd {meta.get('libzstd', '?')} through ctypes: frame bytes (no checksum) and "
           "CPU µs per compression (best of 7 at levels ≤ 9). `module` = what the module does: "
           "a raw-content CDict with `ZSTD_getCParams(level, unknown, dictSize)`, refCDict, "
           "window = the smallest power of two ≥ dictionary + body, the tables attached "
           "(`ZSTD_dictForceAttach`) at the dfast..lazy2 levels; `cdict copied` = the same "
           "CDict copied into the context (zstd's default above 8-16 KB); `prefix+ldm` = "
           "`ZSTD_CCtx_refPrefix` with long-distance matching; `cli` = what `zstd --patch-from` "
           "sets (prefix, windowLog = highbit(body) + 1, LDM when above the cycle log, one "
           "worker); `none` = no dictionary. Deploy-time deltas are the smaller of `module` "
           "and `cli`.", "",
           "| step | level | module | cdict copied | prefix+ldm | cli | none |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        for lv in levels:
            v = r["variants"][str(lv)]
            md.append(f"| {r['step']} | {lv} | " + " | ".join(
                f"{v[k]['bytes']} B, {v[k]['us']:.0f} µs" + (" (ldm)" if v[k].get("ldm") else "")
                for k in ("module", "cdict copied", "prefix+ldm", "cli", "none")) + " |")
    md += ["", "### Corpus", "", "| package | version | file | bytes | SHA-256 |",
           "|---|---|---|---:|---|"]
    for c in meta["corpus"]:
        md.append(f"| {c['package']} | {c['version']} | `{c['file']}` | {c['size']} | "
                  f"`{c['sha256']}` |")
    return md + [""]


def write_md(meta: dict, site: dict | None, rows: list[dict], levels: list[int],
             out: Path) -> None:
    md = ["# Dictionary compression (dcz, RFC 9842): a site dictionary and release deltas", "",
          f"`{meta['command']}` on {meta['date']} ({meta['cpus']}, load average at start "
          f"{meta['load_start']}, at the end {meta.get('load_end', '?')}; {meta['rev']}). "
          "Bytes are exact; CPU ratios are indicative on this shared machine. Raw numbers: "
          "[dictionary.json](dictionary.json).", "", "![bytes](dictionary.png)", ""]
    md += targets(meta, site, rows, levels)
    if site:
        md += site_section(site)
    md += releases_section(meta, rows, levels)
    if meta.get("notes"):
        md += ["## Notes", ""] + [f"- {n}" for n in meta["notes"]]
    (out / "dictionary.md").write_text("\n".join(md) + "\n")


def write_chart(site: dict | None, rows: list[dict], levels: list[int], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = (1 if site else 0) + 1
    fig, axes = plt.subplots(panels, 1, figsize=(13, 4.5 * panels), squeeze=False)
    if site:
        ax = axes[0][0]
        b = site["bytes"]
        names = [c for c in b if c != "identity"]
        vals = [b[c] / site["test_pages"] for c in names]
        ax.bar(names, vals, color=["#9e9e9e", "#ffbf80", "#4caf50", "#1f77b4", "#ff9f40",
                                   "#9467bd"][:len(names)])
        for i, v in enumerate(vals):
            ax.text(i, v, f"{v:.0f}", ha="center", va="bottom", fontsize=8)
        ax.set_ylabel("bytes per page")
        ax.set_title(f"Apache manual, {site['test_pages']} pages not trained on "
                     f"(identity {b['identity'] / site['test_pages']:.0f} B per page)")
        ax.grid(axis="y", alpha=0.3)
    ax = axes[-1][0]
    cols = ["br-11"] + [f"{k}-{lv}" for lv in levels for k in ("patch-from", "live", "delta")]
    width = 0.8 / len(cols)
    for i, col in enumerate(cols):
        vals = []
        for r in rows:
            kind, lv = col.rsplit("-", 1)
            if col == "br-11":
                vals.append(r["offline"]["br-11"])
            elif kind == "patch-from":
                vals.append(r["offline"][f"patch-from-{lv}"])
            elif kind == "live":
                vals.append(r.get("server", {}).get(lv, {}).get("dcz", 0))
            else:
                vals.append(r.get("delta", {}).get(lv, {}).get("bytes", 0))
        ax.bar([j + (i - (len(cols) - 1) / 2) * width for j in range(len(rows))], vals, width,
               label=col)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["step"] for r in rows], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("body bytes (log)")
    ax.set_title("New release against the old one (live and delta include the 40-byte header)")
    ax.legend(fontsize=8, ncol=4)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "dictionary.png", dpi=100)
    plt.close(fig)
