#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The layout rules docs/style.md promises, checked from the files (the test command runs this):

- no source file over 450 lines;
- the adapter's files (mod_multicompress/httpd) include each other in one direction only: no
  cycle, so no pair that includes each other;
- mod_filter's private provider record is mirrored in exactly one file;
- nothing in the project cites a file outside the repository.

Exit status 0 when every rule holds, 1 with one line per breach.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 450
SOURCE_SUFFIXES = {".cc", ".h", ".c", ".py", ".sh", ".mjs", ".cmake"}
# Data the tests and the benchmark serve or record, not source.
NOT_SOURCE = ("tests/integration/htdocs/", "bench/results/", "tests/fuzz/corpus/",
              "tests/unit/testdata/", "conf/demo/htdocs/")
ADAPTER = "mod_multicompress/httpd"
MOD_FILTER_MIRROR = re.compile(r"ap_expr_info_t\s*\*\s*expr\s*;")
OUTSIDE = re.compile(r"\.\./shared|(?<![\w/])(?:SPEC|STYLE)\.md")


def tracked() -> list[Path]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                         check=True).stdout.decode().split("\0")
    return [ROOT / p for p in out if p and (ROOT / p).is_file()]


def is_source(rel: str, path: Path) -> bool:
    if rel.startswith(NOT_SOURCE):
        return False
    if path.suffix in SOURCE_SUFFIXES or path.name == "CMakeLists.txt":
        return True
    # extensionless scripts (scripts/*, bench/run, .ci/run)
    return path.suffix == "" and path.read_bytes()[:2] == b"#!"


def adapter_cycles(files: list[Path]) -> list[str]:
    graph: dict[str, set[str]] = {}
    for p in files:
        rel = p.relative_to(ROOT).as_posix()
        if not rel.startswith(ADAPTER + "/") or p.suffix not in (".cc", ".h"):
            continue
        unit = p.stem
        deps = graph.setdefault(unit, set())
        for m in re.finditer(r'#include "(mc_\w+)\.h"', p.read_text(errors="replace")):
            if m.group(1) != unit:
                deps.add(m.group(1))
    problems = []
    for a, deps in graph.items():
        for b in deps:
            if a < b and a in graph.get(b, set()):
                problems.append(f"{ADAPTER}: {a} and {b} include each other")
    # any longer cycle
    state: dict[str, int] = {}

    def visit(u: str, stack: list[str]) -> None:
        state[u] = 1
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1 and len(stack) - stack.index(v) > 2:
                problems.append(f"{ADAPTER}: include cycle " + " -> ".join(stack[stack.index(v):] + [v]))
            elif v not in state:
                visit(v, stack + [v])
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u, [u])
    return problems


def main() -> int:
    files = tracked()
    problems: list[str] = []
    mirrors = []
    for p in files:
        rel = p.relative_to(ROOT).as_posix()
        if not is_source(rel, p):
            continue
        text = p.read_text(errors="replace")
        n = text.count("\n")
        if n > MAX_LINES:
            problems.append(f"{rel}: {n} lines (at most {MAX_LINES})")
        if MOD_FILTER_MIRROR.search(text) and p.suffix in (".cc", ".h", ".c"):
            mirrors.append(rel)
        if rel != "scripts/check_layout.py" and OUTSIDE.search(text):
            problems.append(f"{rel}: cites a file outside the repository")
    for p in files:
        rel = p.relative_to(ROOT).as_posix()
        if p.suffix == ".md" and OUTSIDE.search(p.read_text(errors="replace")):
            problems.append(f"{rel}: cites a file outside the repository")
    if len(mirrors) != 1:
        problems.append(f"mod_filter's provider record is mirrored in {len(mirrors)} files: "
                        f"{mirrors}")
    problems.extend(adapter_cycles(files))
    for line in problems:
        print(f"check_layout: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
