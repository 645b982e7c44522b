# SPDX-License-Identifier: Apache-2.0
"""The soak's measurements of the server (part of soak.py): its processes, their RSS and open
file descriptors once idle, the bytes its bounded caches report, crash lines and [warn]+ lines in
its error_log, sanitizer reports."""
from __future__ import annotations

import collections
import os
import re
import time
from pathlib import Path

from mc_client import request
from mc_env import McEnv
from mc_process import children_of
from mc_server import CRASH_PATTERNS


def server_pids(srv) -> list[int]:
    return [srv.pid, *children_of(srv.pid)] if srv.pid else []


def total_rss_kib(pids) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def rss_parts_kib(pids) -> dict[str, int]:
    parts = collections.Counter()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                        k, v = line.split()[:2]
                        parts[k[3:-1].lower()] += int(v)
        except OSError:
            pass
    return dict(parts)


def total_fds(pids) -> int:
    n = 0
    for pid in pids:
        try:
            n += len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            pass
    return n


def quiesce(srv, timeout: float = 30.0) -> tuple[int, int, list[int], dict[str, int]]:
    """Waits until the server is idle: its fd count unchanged for 2 s (connections closed,
    lingering closes done) and its RSS unchanged within 0.5 % for 2 s (pools of closed
    connections released). Returns (RSS KiB, fds, pids, RSS parts)."""
    deadline = time.monotonic() + timeout
    last_fds, last_rss, stable_since = None, None, time.monotonic()
    while time.monotonic() < deadline:
        pids = server_pids(srv)
        n, rss = total_fds(pids), total_rss_kib(pids)
        if n != last_fds or last_rss is None or abs(rss - last_rss) > last_rss * 0.005:
            last_fds, last_rss, stable_since = n, rss, time.monotonic()
        elif time.monotonic() - stable_since >= 2.0:
            break
        time.sleep(0.25)
    pids = server_pids(srv)
    # RSS: the median of a few samples a moment apart
    rss = sorted(total_rss_kib(pids) for _ in range(5) if time.sleep(0.2) is None)[2]
    return rss, total_fds(pids), pids, rss_parts_kib(pids)


# What the module holds by design and reports in mod_status: each child's tier of verified cache
# entries (MultiCompressCacheLocal, 8 MiB per child by default) and its prepared dictionaries. Both
# are bounded and fill as traffic reaches every child; the RSS check is net of their growth.
BOUNDED_CACHES = ("MultiCompressCacheLocalBytes", "MultiCompressDictionaryMemory")


def bounded_cache_kib(port: int) -> int:
    """KiB the module reports holding in its bounded caches (/server-status?auto), summed over
    the children; 0 for a server without the module's status section."""
    r = request(port, "/server-status?auto", timeout=10)
    if r.status != 200:
        raise RuntimeError(f"/server-status?auto answered {r.status}")
    total = 0
    for line in r.body.decode("latin-1").splitlines():
        key, _, value = line.partition(": ")
        if key in BOUNDED_CACHES:
            total += int(value)
    return total // 1024


def crash_lines(text: str) -> list[str]:
    return [l for l in text.splitlines() if any(p.search(l) for p in CRASH_PATTERNS)]


def log_summary(text: str) -> dict[str, int]:
    counts = collections.Counter()
    for line in text.splitlines():
        m = re.search(r"\[(?:[\w.-]+:)?(warn|error|crit|alert|emerg)\]", line)
        if not m:
            continue
        code = re.search(r"\b(AH\d{5}|MC\d{5})\b", line)
        counts[f"{m.group(1)} {code.group(1) if code else '(no code)'}"] += 1
    return dict(counts)


def sanitizer_reports(srv) -> list[Path]:
    """ASan/UBSan report files that are not empty (asan_run.sh's wrapper: log_path in
    <server>/logs/san/)."""
    logs = srv.gen / "logs"
    return [p for p in sorted(logs.rglob("*san*")) if p.is_file() and p.stat().st_size > 0]


def sanitized(env: McEnv) -> bool:
    """The module is an ASan build (it needs libasan.so)."""
    try:
        return b"libasan.so" in env.module_path.read_bytes()
    except OSError:
        return False
