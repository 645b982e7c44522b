# SPDX-License-Identifier: Apache-2.0
"""The soak's load (part of soak.py): client processes x threads that send the traffic's
kinds by weight until a deadline and check every response; run_phase collects their counts and
failures."""
from __future__ import annotations

import collections
import multiprocessing
import random
import re
import signal
import threading
import time
import traceback
from pathlib import Path

from soak_client import Client, Resp
from soak_traffic import KINDS, Traffic

TRAFFIC: Traffic | None = None
FAIL_DIR: Path | None = None  # bodies of failed responses, for a reproducer


def save_body(r: Resp, name: str) -> str:
    if FAIL_DIR is None or not r.body:
        return ""
    try:
        FAIL_DIR.mkdir(parents=True, exist_ok=True)
        path = FAIL_DIR / f"{name}.body"
        path.write_bytes(r.body)
        return f" (body saved in {path})"
    except OSError:
        return ""


def worker_proc(idx: int, threads: int, port: int, seconds: float, seed: int, q,
                prime: bool = False) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stats = collections.Counter()
    wire = collections.Counter()
    plain = collections.Counter()
    fails: list[dict] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    kinds, weights = list(KINDS), list(KINDS.values())

    def run(tid: int) -> None:
        rng = random.Random(seed * 1000003 + idx * 1009 + tid)
        cl = Client(port)
        local = collections.Counter()
        lwire = collections.Counter()
        lplain = collections.Counter()
        lfails = []
        primers = TRAFFIC.primers(rng) if prime else []
        while time.monotonic() < deadline or primers:
            if primers:
                kind, fn = primers.pop()
            else:
                kind = rng.choices(kinds, weights)[0]
                fn = getattr(TRAFFIC, "k_" + kind)
            req = r = None
            try:
                r, check, req = fn(cl, rng)
                if r is None:
                    local[kind + ":ok"] += 1
                    continue
                n = check()
                local[kind + ":ok"] += 1
                lwire[kind] += r.wire
                lplain[kind] += n
            except Exception as e:  # noqa: BLE001 - every error is a finding
                cl.close()
                err = f"{type(e).__name__}: {e}"
                local[kind + ":fail"] += 1
                local["sig:" + kind + ": " + re.sub(r"\d+", "N", err)[:90]] += 1
                if len(lfails) < 20:
                    saved = save_body(r, f"{idx}-{tid}-{len(lfails)}") if r is not None else ""
                    lfails.append({"kind": kind, "request": req or cl.last, "error": err,
                                   "response": (r.describe() + saved) if r is not None else "",
                                   "trace": traceback.format_exc(limit=3)})
        cl.close()
        with lock:
            stats.update(local)
            wire.update(lwire)
            plain.update(lplain)
            fails.extend(lfails)

    ts = [threading.Thread(target=run, args=(t,), daemon=True) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    q.put((dict(stats), dict(wire), dict(plain), fails))


def run_phase(port: int, seconds: float, procs: int, threads: int, seed: int,
              on_tick=None, prime: bool = False) -> tuple[collections.Counter, collections.Counter,
                                                          collections.Counter, list]:
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    ps = [ctx.Process(target=worker_proc, args=(i, threads, port, seconds, seed, q, prime),
                      daemon=True) for i in range(procs)]
    for p in ps:
        p.start()
    results = []
    t_end = time.monotonic() + seconds + 120
    while len(results) < procs and time.monotonic() < t_end:
        if on_tick:
            on_tick()
        try:
            results.append(q.get(timeout=5))
        except Exception:  # noqa: BLE001 - queue.Empty
            continue
    for p in ps:
        p.join(10)
        if p.is_alive():
            p.kill()
    stats, wire, plain, fails = collections.Counter(), collections.Counter(), \
        collections.Counter(), []
    for s, w, pl, f in results:
        stats.update(s)
        wire.update(w)
        plain.update(pl)
        fails.extend(f)
    if len(results) < procs:
        fails.append({"kind": "harness", "error": f"{procs - len(results)} load processes "
                      "did not report", "request": None, "response": "", "trace": ""})
    return stats, wire, plain, fails
