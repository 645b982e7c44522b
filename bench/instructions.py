# SPDX-License-Identifier: Apache-2.0
"""Instructions per response, counted by callgrind: what a response costs in user space, without
the timing noise of a shared VM.

On the 2-vCPU VM this project is measured on, the same binary's CPU per response moves by up to
1.8× between runs, so a change worth a few per cent can only be seen in many alternating rounds
(bench/delta_perf.py, bench/hits_perf.py). The number of instructions a response executes in
user space does not move. This script runs bench/servers.py's Apache (Debian's configuration,
`EnableSendfile On`) as one process (`apache2 -X`) under `valgrind --tool=callgrind`, counting
only inside `ap_process_async_request` (reading the request, the handler, the filters, the
log) and writing one profile per request (`--dump-after`). The count per response is the mean
over N requests sent after a warm-up (start-up, first-request and learning costs fall in the
warm-up's profiles), each checked to be the response measured. System calls are not counted
(one costs 1–3 µs on this VM: `strace -c` for those), nor the kernel's share of sending.

Cases, each against plain Apache (the same configuration without the module) sending the same
bytes as a plain file:

- `delta`: the deploy-time delta sidecar of bench/delta_perf.py (jquery 3.7.0 → 3.7.1 under
  hashed names, `multicompress-precompress --deltas 1`), requested as Chrome does once it holds
  the older release (`Available-Dictionary`); plain Apache sends `app.NEW.js.dcz`.
- `sidecar`: the newer release in a directory with `MultiCompressStatic On` and its zstd sidecar
  from the same tool, `Accept-Encoding: zstd`; plain Apache sends `app.js.zst`.
- `cache`: the same release in a directory with `MultiCompressCache On` (zstd 19), warmed up
  until the hit is the strong copy (it is made off the request path, so the number of warm-up
  requests varies); plain Apache sends that copy's bytes (the tool's zstd-19 of the file).
- `identity`: the 2.5 KB test page without `Accept-Encoding` (the module decides, adds
  `Vary`, sends it unchanged); plain Apache sends it too.

`floor` (delta and sidecar; a cache hit makes no subrequest): plain Apache plus bench/floor/mod_mc_floor.so, the subrequest
lookup and access hooks every sidecar hit needs and nothing else (`--floor-module`; left out
when the bench build has not built it).

Every response is checked (status, `Content-Encoding`, the exact bytes). Prints a markdown
section: instructions per response per server and case, × plain, and the module's functions
with the most instructions per response (inclusive).

    /usr/bin/python3 bench/instructions.py \\
        --module build/bench/mod_multicompress/httpd/mod_multicompress.so \\
        [--alt-module OTHER.so] [--cases delta,sidecar,cache,identity] [--requests 200] [--top 12]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import delta_perf as dp  # noqa: E402  (releases, deploy, TOOL, STATIC, CHROME_AE)
import dictionary_releases as rel  # noqa: E402  (sf_hash, raw_dict)
import servers  # noqa: E402

WARM = 20   # requests after the warm-up that are not counted either
CASES = ("delta", "sidecar", "cache", "identity")
STRONG_ZSTD = 19   # the cache case's MultiCompressCacheLevel


def build_site(tmp: Path, tool: str) -> dict:
    """The docroot and, per case, (ours path, plain path, request headers, expected bytes,
    expected Content-Encoding)."""
    _, old, new = dp.releases("jquery", Path(dp.ROOT / "build" / "bench-dict"))
    doc = tmp / "htdocs"
    assets = doc / "assets"
    old_name, new_name, delta = dp.deploy(assets, tool, old, new)
    (assets / f"{new_name}.dcz").write_bytes(delta.read_bytes())
    static = doc / "static"
    static.mkdir()
    (static / "app.js").write_bytes(new)
    r = subprocess.run([tool, "-q", "--no-progress", "--jobs", "1", str(static)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or not (static / "app.js.zst").is_file():
        raise SystemExit(f"instructions.py: {tool} wrote no app.js.zst: {r.stderr.strip()}")
    cache, strong = doc / "cache", doc / "strong"
    cache.mkdir()
    strong.mkdir()
    (cache / "app.js").write_bytes(new)
    (strong / "app.js").write_bytes(new)
    r = subprocess.run([tool, "-q", "--no-progress", "--jobs", "1", "-e", "zstd", "-l",
                        f"zstd={STRONG_ZSTD}", str(strong)], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0 or not (strong / "app.js.zst").is_file():
        raise SystemExit(f"instructions.py: {tool} wrote no zstd-{STRONG_ZSTD} app.js.zst: "
                         f"{r.stderr.strip()}")
    shutil.copy(dp.STATIC / "small.html", doc / "small.html")
    servers.readable_by_workers(tmp)
    ask = {"Accept-Encoding": dp.CHROME_AE, "Available-Dictionary": rel.sf_hash(old),
           "Dictionary-ID": f'"{old_name[4:12]}"'}
    return {
        "doc": doc, "assets": assets, "static": static, "cache_dir": cache,
        "warm": f"/assets/{old_name}",
        "delta": (f"/assets/{new_name}", f"/assets/{new_name}.dcz", ask, delta.read_bytes(), "dcz"),
        "sidecar": ("/static/app.js", "/static/app.js.zst", {"Accept-Encoding": "zstd"},
                    (static / "app.js.zst").read_bytes(), "zstd"),
        "cache": ("/cache/app.js", "/strong/app.js.zst", {"Accept-Encoding": "zstd"},
                  (strong / "app.js.zst").read_bytes(), "zstd"),
        "identity": ("/small.html", "/small.html", {}, (doc / "small.html").read_bytes(), None),
    }


def server(kind: str, module: str | None, tmp: Path, site: dict, port: int) -> servers.Apache:
    common = {"sendfile": True, "tls": None, "mods": ["socache_shmcb", "headers"]}
    wd = tmp / kind
    if kind in ("plain", "floor"):   # floor: + the sidecar's access check (bench/floor/)
        extra = servers.floor_conf(module) if kind == "floor" else []
        return servers.Apache("plain", str(wd), str(site["doc"]), {("identity", 0): port},
                              extra_conf=["AddEncoding dcz .dcz", *extra], label=kind, **common)
    conf = ["MultiCompressEncodings dcz zstd br gzip",
            f"<Directory {site['assets']}>", "    MultiCompressStatic On",
            "    MultiCompressUseAsDictionary auto", "</Directory>",
            f"<Directory {site['static']}>", "    MultiCompressStatic On", "</Directory>",
            f"<Directory {site['cache_dir']}>", "    MultiCompressCache On",
            f"    MultiCompressCacheLevel zstd {STRONG_ZSTD}", "</Directory>"]
    return servers.Apache("multicompress", str(wd), str(site["doc"]), {("ours", 0): port},
                          module_path=str(Path(module).resolve()), extra_conf=conf,
                          label=kind, **common)


def get(sk: socket.socket, path: str, headers: dict) -> tuple[str, dict, bytes]:
    """One keep-alive request on `sk`; (status line, lower-cased headers, body)."""
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    req += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    sk.sendall(req.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sk.recv(65536)
        if not chunk:
            raise RuntimeError(f"connection closed before the headers of {path}")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
    length = int(fields.get("content-length", "-1"))
    if length < 0:
        raise RuntimeError(f"{path}: no Content-Length")
    while len(body) < length:
        chunk = sk.recv(65536)
        if not chunk:
            raise RuntimeError(f"connection closed in the body of {path}")
        body += chunk
    return lines[0], fields, body


def count(srv: servers.Apache, out: Path, path: str, headers: dict, expect: tuple,
          n: int, warm: str | None) -> list[Path]:
    """One profile per request (`--dump-after`): the `n` measured ones, after the warm-up, the
    cache's strong copy (`warm` == "strong") and WARM more."""
    srv.write_config()
    user, group = servers._run_user()  # the files are written by the server's user
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.chown(out.parent, user, group)
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
           "--collect-atstart=no", "--toggle-collect=ap_process_async_request",
           "--dump-after=ap_process_async_request",
           *[c for c in srv.command() if c != "-DFOREGROUND"], "-X"]
    port = next(iter(srv.ports.values()))
    log = open(Path(srv.workdir) / "valgrind.log", "w")
    vg = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    sent = 0
    body, coding = expect

    def ask(sk: socket.socket) -> tuple[bool, tuple]:
        nonlocal sent
        status, fields, got = get(sk, path, headers)
        sent += 1
        return (status.endswith(" 200 OK") and got == body
                and fields.get("content-encoding") == coding), (status, fields, got)

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if vg.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{srv.label} did not start under valgrind "
                                       f"(see {log.name})")
                time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sk:
            if warm == "strong":   # the miss stores a copy; the strong one follows off the path
                deadline = time.monotonic() + 180
                while not ask(sk)[0]:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{srv.label} {path}: never the strong copy")
                    time.sleep(0.5)
            elif warm is not None:
                get(sk, warm, {"Accept-Encoding": dp.CHROME_AE})
                sent += 1
            first = sent + WARM
            for _ in range(WARM + n):
                ok, (status, fields, got) = ask(sk)
                if not ok:
                    raise RuntimeError(f"{srv.label} {path}: {status}, Content-Encoding "
                                       f"{fields.get('content-encoding')}, {len(got)} bytes "
                                       f"(expected {coding}, {len(body)} bytes)")
    finally:
        if vg.poll() is None:
            vg.send_signal(signal.SIGTERM)   # httpd -X exits; callgrind writes its file
        try:
            vg.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(vg.pid, signal.SIGKILL)
            vg.wait()
        log.close()
    files = [Path(f"{out}.{i}") for i in range(first + 1, first + n + 1)]
    missing = [f.name for f in files if not f.is_file()]
    if missing or Path(f"{out}.{sent + 1}").is_file():
        raise RuntimeError(f"{srv.label}: {sent} requests but not one profile each in "
                           f"{out.parent} (missing {missing[:3]})")
    return files


def total(f: Path) -> int:
    m = re.search(r"^totals: (\d+)", f.read_text(), re.M)
    if m is None:
        raise RuntimeError(f"callgrind wrote no totals to {f}")
    return int(m.group(1))


def functions(files: list[Path], top: int) -> list[tuple[float, str]]:
    """The module's functions with the most instructions per response (inclusive)."""
    found: dict[str, int] = {}
    for f in files:
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(f)],
                              capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            m = re.match(r"\s*([\d,]+) \([\s\d.]+%\)\s+\?\?\?:(mc::\S.*?) \[", line)
            if m:
                name = re.sub(r"\((?!anonymous)[^()]*(\([^()]*\)[^()]*)*\)", "", m.group(2))
                found[name] = found.get(name, 0) + int(m.group(1).replace(",", ""))
    rows = sorted((v / len(files), k) for k, v in found.items())
    return [r for r in reversed(rows) if r[0] > 0][:top]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", required=True, help="mod_multicompress.so (a Release build)")
    ap.add_argument("--alt-module", metavar="SO", help="another build, counted the same way")
    ap.add_argument("--tool", default=str(dp.TOOL), help="multicompress-precompress")
    ap.add_argument("--floor-module", metavar="SO", default=servers.FLOOR_MODULE,
                    help="bench/floor's mod_mc_floor.so (default: the bench build's; "
                         "the floor is left out when it is missing)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--requests", type=int, default=200, help="N (default 200)")
    ap.add_argument("--top", type=int, default=12, help="functions listed per case")
    ap.add_argument("--keep", action="store_true",
                    help="keep the profiles (one per request) and say where")
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    if not cases or any(c not in CASES for c in cases):
        ap.error(f"--cases: a comma-separated list of {', '.join(CASES)}")
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        raise SystemExit("instructions.py: needs valgrind (apt-get install valgrind)")
    kinds = [("plain", None), ("ours", args.module)]
    if args.alt_module:
        kinds.append(("alt", args.alt_module))
    if servers.floor_conf(args.floor_module) is not None:
        kinds.append(("floor", args.floor_module))
    tmp = Path(tempfile.mkdtemp(prefix="mc-instr-"))
    results: dict[tuple[str, str], float] = {}
    tops: dict[str, list] = {}
    try:
        site = build_site(tmp, args.tool)
        for case in cases:
            ours_path, plain_path, headers, body, coding = site[case]
            for kind, module in kinds:
                if kind == "floor" and case in ("identity", "cache"):
                    continue   # no sidecar, no access check to count
                path = plain_path if kind in ("plain", "floor") else ours_path
                warm = None
                if kind in ("ours", "alt"):
                    warm = {"delta": site["warm"], "cache": "strong"}.get(case)
                srv = server(kind, module, tmp / f"{case}-{kind}", site, servers.free_ports(1)[0])
                files = count(srv, tmp / f"{case}-{kind}" / "profiles" / "callgrind.out", path,
                              headers, (body, coding), args.requests, warm)
                results[(case, kind)] = sum(map(total, files)) / len(files)
                if kind == "ours":
                    tops[case] = functions(files, args.top)
                print(f"instructions.py: {case} {kind}: {results[(case, kind)]:,.0f} per response",
                      file=sys.stderr, flush=True)
    finally:
        if args.keep:
            print(f"instructions.py: profiles kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    commit = subprocess.run(["git", "-C", str(dp.ROOT), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "?"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    alt = " --alt-module …" if args.alt_module else ""
    print(f"`/usr/bin/python3 bench/instructions.py --requests {args.requests}{alt}` ({when}, "
          f"commit `{commit}`): user-space instructions per response inside "
          "`ap_process_async_request`, `apache2 -X` under callgrind, sendfile on.\n")
    head = "| case | " + " | ".join(k for k, _ in kinds) + " | " + " | ".join(
        f"{k} × plain" for k, _ in kinds[1:]) + " |"
    print(head)
    print("|---|" + "---:|" * (2 * len(kinds) - 1))
    for case in cases:
        plain = results[(case, "plain")]
        cells = [f"{results[(case, k)]:,.0f}" if (case, k) in results else "–" for k, _ in kinds]
        ratios = [f"{results[(case, k)] / plain:.2f}" if (case, k) in results else "–"
                  for k, _ in kinds[1:]]
        print(f"| {case} | " + " | ".join(cells + ratios) + " |")
    for case in cases:
        print(f"\nThe module's functions, `{case}` (instructions per response, inclusive: a "
              "filter's count holds the filters after it):\n")
        print("| instructions | function |\n|---:|---|")
        for v, name in tops[case]:
            print(f"| {v:,.0f} | `{name}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
