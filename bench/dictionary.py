# SPDX-License-Identifier: Apache-2.0
"""Dictionary compression (RFC 9842 `dcz`) on real release pairs.

Corpus: `npm pack` of pinned versions of jquery, react-dom, bootstrap and lodash; one file per
package (the minified build). A step is (older release = the dictionary, newer release = the
body). Per step:

  offline   the new file's size, gzip-6 (zlib), br-11, zstd-19 (no dictionary), the zstd CLI's
            `zstd -N --patch-from=OLD NEW` at each dcz level (its defaults: checksum on) and
            python-zstandard with OLD as a raw-content dictionary at the same level (a model of
            the module's frame);
  server    bench/servers.py's Apache with the module (`MultiCompressEncodings dcz zstd br gzip`,
            one port per level with `MultiCompressLevel dcz N` and `zstd N`,
            `MultiCompressUseAsDictionary "/rel/*"`): GET OLD (stored as a dictionary), then NEW
            with `Accept-Encoding: dcz, zstd, br, gzip` and `Available-Dictionary:
            :base64(sha256(OLD)):`; checks `Content-Encoding: dcz`, the 40-byte header (magic
            5e 2a 4d 18 20 00 00 00 + the hash), decodes with python-zstandard (raw-content
            dictionary) and with `zstd -d --patch-from=OLD`, byte for byte against NEW;
            target: body <= 1.05 x (patch-from bytes + 40);
  CPU       `ab -k` of NEW at level 3 with dcz against plain `Accept-Encoding: zstd` (zstd-3) of
            the same body, in the order dcz, zstd, zstd, dcz; server CPU = utime+stime of the
            httpd processes (servers.Server.cpu_seconds); target: dcz <= 1.2 x zstd-3.

Writes <out>/dictionary.md, dictionary.json and dictionary.png.

    /usr/bin/python3 bench/dictionary.py [--quick] [--work DIR] [--module PATH] [--offline]
"""

from __future__ import annotations

import argparse
import base64
import datetime
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

import brotli
import zstandard

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import servers  # noqa: E402

DCZ_MAGIC = bytes([0x5E, 0x2A, 0x4D, 0x18, 0x20, 0x00, 0x00, 0x00])
HEADER_LEN = 40
TARGET_BYTES = 1.05      # dcz body <= 1.05 x (patch-from + 40)
TARGET_CPU = 1.2         # dcz CPU/response <= 1.2 x zstd-3 of the same body
CPU_LEVEL = 3

# (package, file inside the npm tarball, versions oldest first). Pinned: the same bytes every run.
PACKAGES = [
    ("jquery", "package/dist/jquery.min.js", ["3.6.0", "3.7.0", "3.7.1"]),
    ("react-dom", "package/umd/react-dom.production.min.js", ["18.2.0", "18.3.0", "18.3.1"]),
    ("bootstrap", "package/dist/css/bootstrap.min.css", ["5.3.0", "5.3.2", "5.3.3"]),
    ("lodash", "package/lodash.min.js", ["4.17.19", "4.17.20", "4.17.21"]),
]

TIMEOUT = 30.0           # any one HTTP request
AB_TIMEOUT = 600         # any one ab run


# ---- corpus ------------------------------------------------------------------------------------
def npm_pack(spec: str, cache: Path) -> Path:
    """The tarball of `spec` (name@version) in `cache`, packed once and kept there."""
    name, version = spec.rsplit("@", 1)
    tgz = cache / f"{name}-{version}.tgz"
    if tgz.is_file():
        return tgz
    cache.mkdir(parents=True, exist_ok=True)
    try:
        r = subprocess.run(["npm", "pack", "--json", "--pack-destination", str(cache), spec],
                           cwd=cache, capture_output=True, text=True, timeout=180)
    except FileNotFoundError:
        raise SystemExit("dictionary.py: `npm` is not installed (it fetches the corpus)")
    except subprocess.TimeoutExpired:
        raise SystemExit(f"dictionary.py: `npm pack {spec}` timed out after 180 s: is the npm "
                         "registry reachable from here?")
    if r.returncode != 0:
        raise SystemExit(f"dictionary.py: `npm pack {spec}` failed (is the npm registry "
                         f"reachable?):\n{r.stderr.strip()[-1500:]}")
    rec = json.loads(r.stdout)[0]
    got = cache / rec["filename"]
    if got != tgz:
        got.rename(tgz)
    return tgz


def fetch_corpus(work: Path) -> dict[tuple[str, str], dict]:
    """{(package, version): {"path", "size", "sha256", "tarball"}} for every pinned version."""
    out = {}
    for pkg, member, versions in PACKAGES:
        for ver in versions:
            tgz = npm_pack(f"{pkg}@{ver}", work / "npm")
            dest = work / "files" / pkg / ver / Path(member).name
            if not dest.is_file():
                with tarfile.open(tgz) as tar:
                    f = tar.extractfile(member)
                    if f is None:
                        raise SystemExit(f"dictionary.py: {member} is not in {tgz.name}")
                    data = f.read()
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
            data = dest.read_bytes()
            out[(pkg, ver)] = {"path": dest, "size": len(data),
                               "sha256": hashlib.sha256(data).hexdigest(), "tarball": tgz.name}
    return out


def steps_of(quick: bool) -> list[tuple[str, str, str, str]]:
    """(package, file name, old version, new version); --quick: the latest step only."""
    steps = []
    for pkg, member, versions in PACKAGES:
        pairs = list(zip(versions, versions[1:]))
        if quick:
            pairs = pairs[-1:]
        steps += [(pkg, Path(member).name, a, b) for a, b in pairs]
    return steps


# ---- offline columns ---------------------------------------------------------------------------
def raw_dict(data: bytes) -> zstandard.ZstdCompressionDict:
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


def zstd_cli(args: list[str], timeout: float = 300) -> bytes:
    r = subprocess.run(["zstd", "-q", *args], capture_output=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"zstd {' '.join(args)}: {r.stderr.decode(errors='replace')}")
    return r.stdout


def offline(old_path: Path, new_path: Path, levels: list[int]) -> dict:
    old, new = old_path.read_bytes(), new_path.read_bytes()
    row = {
        "new": len(new), "old": len(old),
        "gzip-6": len(_zlib_gzip(new, 6)),
        "br-11": len(brotli.compress(new, quality=11)),
        "zstd-19": len(zstandard.ZstdCompressor(level=19).compress(new)),
        "zstd-3": len(zstandard.ZstdCompressor(level=3).compress(new)),
    }
    for lv in levels:
        patch = zstd_cli([f"-{lv}", f"--patch-from={old_path}", "-c", str(new_path)])
        # The CLI's own output, checked to decode to NEW with the dictionary.
        dec = zstandard.ZstdDecompressor(dict_data=raw_dict(old)).decompressobj().decompress(patch)
        if dec != new:
            raise RuntimeError(f"zstd --patch-from output for {new_path} does not decode")
        row[f"patch-from-{lv}"] = len(patch)
        nocheck = zstd_cli([f"-{lv}", "--no-check", f"--patch-from={old_path}", "-c",
                            str(new_path)])
        row[f"patch-from-{lv}-nocheck"] = len(nocheck)
        model = zstandard.ZstdCompressor(level=lv, dict_data=raw_dict(old),
                                         write_checksum=False).compress(new)
        row[f"py-dict-{lv}"] = len(model)
    return row


def _zlib_gzip(data: bytes, level: int) -> bytes:
    """gzip at zlib level N with zlib's defaults (window 15, memLevel 8), as mod_deflate-like
    servers send it."""
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


# ---- libzstd directly (ctypes): what each way of using the dictionary costs -------------------
class _LibZstd:
    """The system libzstd (the one the module and the CLI link), through ctypes, for the
    variants python-zstandard cannot express (ZSTD_CCtx_refPrefix, a CDict with given
    parameters, long-distance matching on a prefix)."""

    C_LEVEL, C_WINDOW, C_LDM = 100, 101, 160

    def __init__(self) -> None:
        import ctypes as C
        self.C = C

        class CParams(C.Structure):
            _fields_ = [(n, C.c_uint) for n in ("windowLog", "chainLog", "hashLog", "searchLog",
                                                "minMatch", "targetLength")] + \
                       [("strategy", C.c_int)]

        class Mem(C.Structure):
            _fields_ = [("alloc", C.c_void_p), ("free", C.c_void_p), ("opaque", C.c_void_p)]

        self.CParams, self.Mem = CParams, Mem
        L = C.CDLL("libzstd.so.1")
        L.ZSTD_versionString.restype = C.c_char_p
        L.ZSTD_getCParams.restype = CParams
        L.ZSTD_getCParams.argtypes = [C.c_int, C.c_ulonglong, C.c_size_t]
        L.ZSTD_createCDict_advanced.restype = C.c_void_p
        L.ZSTD_createCDict_advanced.argtypes = [C.c_char_p, C.c_size_t, C.c_int, C.c_int,
                                                CParams, Mem]
        L.ZSTD_createCCtx.restype = C.c_void_p
        L.ZSTD_freeCCtx.argtypes = [C.c_void_p]
        L.ZSTD_freeCDict.argtypes = [C.c_void_p]
        L.ZSTD_CCtx_reset.argtypes = [C.c_void_p, C.c_int]
        L.ZSTD_CCtx_reset.restype = C.c_size_t
        L.ZSTD_CCtx_setParameter.argtypes = [C.c_void_p, C.c_int, C.c_int]
        L.ZSTD_CCtx_setParameter.restype = C.c_size_t
        L.ZSTD_CCtx_refCDict.argtypes = [C.c_void_p, C.c_void_p]
        L.ZSTD_CCtx_refCDict.restype = C.c_size_t
        L.ZSTD_CCtx_refPrefix.argtypes = [C.c_void_p, C.c_char_p, C.c_size_t]
        L.ZSTD_CCtx_refPrefix.restype = C.c_size_t
        L.ZSTD_compress2.argtypes = [C.c_void_p, C.c_void_p, C.c_size_t, C.c_char_p, C.c_size_t]
        L.ZSTD_compress2.restype = C.c_size_t
        L.ZSTD_isError.argtypes = [C.c_size_t]
        self.L = L
        self.version = L.ZSTD_versionString().decode()

    def _ck(self, r: int) -> int:
        if self.L.ZSTD_isError(r):
            raise RuntimeError(f"libzstd error {r}")
        return r

    def cdict(self, old: bytes, level: int):
        """A raw-content CDict with ZSTD_getCParams(level, unknown size, dictSize)."""
        cp = self.L.ZSTD_getCParams(level, 0, len(old))
        return self.L.ZSTD_createCDict_advanced(old, len(old), 1, 1, cp, self.Mem())

    def compress(self, new: bytes, level: int, *, cdict=None, prefix: bytes | None = None,
                 window_log: int = 0, ldm: bool = False, repeat: int = 1) -> tuple[int, float]:
        """(frame bytes, CPU seconds per compression, best of `repeat`)."""
        L = self.L
        cctx = L.ZSTD_createCCtx()
        buf = self.C.create_string_buffer(len(new) + 4096)
        best = float("inf")
        size = 0
        try:
            for _ in range(repeat):
                self._ck(L.ZSTD_CCtx_reset(cctx, 3))   # session and parameters
                self._ck(L.ZSTD_CCtx_setParameter(cctx, self.C_LEVEL, level))
                if window_log:
                    self._ck(L.ZSTD_CCtx_setParameter(cctx, self.C_WINDOW, window_log))
                if ldm:
                    self._ck(L.ZSTD_CCtx_setParameter(cctx, self.C_LDM, 1))
                t0 = time.process_time()
                if cdict is not None:
                    self._ck(L.ZSTD_CCtx_refCDict(cctx, cdict))
                if prefix is not None:
                    self._ck(L.ZSTD_CCtx_refPrefix(cctx, prefix, len(prefix)))
                size = self._ck(L.ZSTD_compress2(cctx, buf, len(buf), new, len(new)))
                best = min(best, time.process_time() - t0)
        finally:
            L.ZSTD_freeCCtx(cctx)
        return size, best


def dcz_window_log(dict_size: int, body_size: int) -> int:
    """The smallest window covering dictionary + body (what RFC 9842 needs to reach back over
    the whole dictionary); the module's choice for a body of known size."""
    w = 10
    while (1 << w) < dict_size + body_size and w < 27:
        w += 1
    return w


def variants(z: _LibZstd, old: bytes, new: bytes, level: int, repeat: int) -> dict:
    """Frame bytes and CPU µs per compression (best of `repeat`, CDict made beforehand: the
    module keeps it with the dictionary) for the ways of using OLD at `level`."""
    w = dcz_window_log(len(old), len(new))
    # programs/fileio.c FIO_adjustParamsForPatchFromMode: windowLog = highbit(srcSize) + 1;
    # long-distance matching when that exceeds ZSTD_cycleLog(chainLog, strategy) of
    # ZSTD_getCParams(level, srcSize, dictSize).
    cli_w = max(10, len(new).bit_length())
    cp = z.L.ZSTD_getCParams(level, len(new), len(old))
    cli_ldm = cli_w > cp.chainLog - (1 if cp.strategy >= 6 else 0)   # 6 = ZSTD_btlazy2
    out = {}
    cd = z.cdict(old, level)
    try:
        out["cdict"] = z.compress(new, level, cdict=cd, window_log=w, repeat=repeat)
        out["cdict+ldm"] = z.compress(new, level, cdict=cd, window_log=w, ldm=True,
                                      repeat=repeat)
    finally:
        z.L.ZSTD_freeCDict(cd)
    out["prefix"] = z.compress(new, level, prefix=old, window_log=w, repeat=repeat)
    out["prefix+ldm"] = z.compress(new, level, prefix=old, window_log=w, ldm=True, repeat=repeat)
    out["cli"] = z.compress(new, level, prefix=old, window_log=cli_w, ldm=cli_ldm,
                            repeat=repeat)
    out["none"] = z.compress(new, level, repeat=repeat)
    res = {k: {"bytes": b, "us": round(1e6 * t, 1)} for k, (b, t) in out.items()}
    res["cli"]["ldm"] = cli_ldm
    res["cli"]["window_log"] = cli_w
    return res


# ---- the server --------------------------------------------------------------------------------
def sf_hash(data: bytes) -> str:
    """RFC 8941 byte sequence of SHA-256(data), the Available-Dictionary value."""
    return ":" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


def get(port: int, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


def start_server(work: Path, module: str, corpus: dict, levels: list[int]) -> servers.Apache:
    tmp = Path(tempfile.mkdtemp(prefix="mc-dict-", dir=work))
    tmp.chmod(0o755)    # the children run as www-data
    docroot = tmp / "htdocs"
    for (pkg, ver), rec in corpus.items():
        dest = docroot / "rel" / pkg / ver / rec["path"].name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rec["path"], dest)
    # servers.Server's readiness probe asks for /small.html.
    (docroot / "small.html").write_text("<!doctype html><title>ok</title><p>ok</p>\n")
    for d, _, files in os.walk(tmp):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)
    run = tmp / "srv" / "run"
    run.mkdir(parents=True)
    run.chmod(0o777)
    ports = dict(zip([("zstd", lv) for lv in levels], servers.free_ports(len(levels))))
    extra = [
        "MultiCompressEncodings dcz zstd br gzip",
        "MultiCompressDictionaryMaxSize 4M",
        # Large enough for every file of the corpus (shmcb's default 512 kB splits into
        # subcaches too small for a 130 kB entry).
        f"MultiCompressCacheStore shmcb:{run}/mc-dict(67108864)",
        '<LocationMatch "^/rel/">',
        '    MultiCompressUseAsDictionary "/rel/*"',
        "</LocationMatch>",
    ]
    vhost = {("zstd", lv): [f"MultiCompressLevel dcz {lv}"] for lv in levels}
    srv = servers.Apache("multicompress", str(tmp / "srv"), str(docroot), ports,
                         module_path=os.path.abspath(module), extra_conf=extra, vhost_conf=vhost,
                         mods=["socache_shmcb"], label="mod_multicompress (dcz)")
    srv.tmp = tmp  # type: ignore[attr-defined]
    return srv


def dcz_fetch(port: int, old_url: str, new_url: str, old: bytes, new: bytes,
              old_path: Path, scratch: Path) -> dict:
    """Teaches the server OLD, then fetches NEW with dcz; checks and decodes it both ways."""
    st, h, _ = get(port, old_url, {"Accept-Encoding": "zstd, br, gzip"})
    if st != 200:
        raise RuntimeError(f"GET {old_url}: {st}")
    if "use-as-dictionary" not in h:
        raise RuntimeError(f"GET {old_url}: no Use-As-Dictionary header ({h})")
    want = {"Accept-Encoding": "dcz, zstd, br, gzip", "Available-Dictionary": sf_hash(old)}
    deadline = time.monotonic() + 10
    while True:
        st, h, body = get(port, new_url, want)
        if st != 200:
            raise RuntimeError(f"GET {new_url} (dcz): {st}")
        if h.get("content-encoding") == "dcz" or time.monotonic() > deadline:
            break
        time.sleep(0.2)   # the dictionary is stored at the end of OLD's response
    if h.get("content-encoding") != "dcz":
        raise RuntimeError(f"GET {new_url} with Available-Dictionary: Content-Encoding "
                           f"{h.get('content-encoding')!r}, not dcz, after 10 s")
    digest = hashlib.sha256(old).digest()
    if body[:8] != DCZ_MAGIC:
        raise RuntimeError(f"{new_url}: dcz header starts {body[:8].hex()}, not "
                           f"{DCZ_MAGIC.hex()}")
    if body[8:40] != digest:
        raise RuntimeError(f"{new_url}: dcz header hash {body[8:40].hex()} is not "
                           f"SHA-256(old) {digest.hex()}")
    dec = zstandard.ZstdDecompressor(dict_data=raw_dict(old)).decompressobj().decompress(
        body[HEADER_LEN:])
    if dec != new:
        raise RuntimeError(f"{new_url}: dcz body does not decode to the file (python-zstandard)")
    bz = scratch / "body.dcz"
    bz.write_bytes(body)
    out = scratch / "body.out"
    zstd_cli(["-d", "-f", f"--patch-from={old_path}", "-o", str(out), str(bz)], timeout=60)
    if out.read_bytes() != new:
        raise RuntimeError(f"{new_url}: dcz body does not decode to the file (zstd CLI)")
    frame = zstandard.get_frame_parameters(body[HEADER_LEN:])
    # The same file as plain zstd at this port's level, for the table.
    st, hz, zbody = get(port, new_url, {"Accept-Encoding": "zstd"})
    if st != 200 or hz.get("content-encoding") != "zstd":
        raise RuntimeError(f"GET {new_url} (zstd): {st} {hz.get('content-encoding')!r}")
    return {"dcz": len(body), "zstd": len(zbody), "vary": h.get("vary"), "etag": h.get("etag"),
            "frame_window": frame.window_size, "frame_content_size": frame.content_size,
            "frame_checksum": bool(frame.has_checksum), "frame_dict_id": frame.dict_id}


def ab_run(srv: servers.Apache, url: str, headers: list[str], n: int, c: int) -> dict:
    cmd = ["ab", "-q", "-k", "-s", "60", "-n", str(n), "-c", str(c)]
    for hd in headers:
        cmd += ["-H", hd]
    cpu0 = srv.cpu_seconds()
    t0 = time.monotonic()
    r = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=AB_TIMEOUT)
    wall = time.monotonic() - t0
    cpu = srv.cpu_seconds() - cpu0
    if r.returncode != 0:
        raise RuntimeError(f"ab failed: {r.stderr.strip()[-800:]}")
    done = int(re.search(r"Complete requests:\s+(\d+)", r.stdout).group(1))
    failed = int(re.search(r"Failed requests:\s+(\d+)", r.stdout).group(1))
    non2xx = re.search(r"Non-2xx responses:\s+(\d+)", r.stdout)
    html = re.search(r"HTML transferred:\s+(\d+)", r.stdout)
    if done != n or failed or non2xx:
        raise RuntimeError(f"ab {' '.join(cmd[1:])} {url}: {done} complete, {failed} failed, "
                           f"{non2xx.group(1) if non2xx else 0} non-2xx")
    return {"requests": n, "cpu_s": cpu, "wall_s": wall,
            "body_bytes": int(html.group(1)) // n if html else None}


def cpu_compare(srv: servers.Apache, port: int, new_url: str, old: bytes, n: int,
                c: int) -> dict:
    url = f"http://127.0.0.1:{port}{new_url}"
    dcz = ["Accept-Encoding: dcz, zstd, br, gzip", f"Available-Dictionary: {sf_hash(old)}"]
    plain = ["Accept-Encoding: zstd"]
    # Warm-up (page cache, the dictionary's parsed state, the children's allocators).
    ab_run(srv, url, dcz, max(50, n // 10), c)
    ab_run(srv, url, plain, max(50, n // 10), c)
    runs = {"dcz": [], "zstd": []}
    for kind in ("dcz", "zstd", "zstd", "dcz"):
        runs[kind].append(ab_run(srv, url, dcz if kind == "dcz" else plain, n, c))
    out = {}
    for kind, rs in runs.items():
        reqs = sum(r["requests"] for r in rs)
        cpu = sum(r["cpu_s"] for r in rs)
        out[kind] = {"requests": reqs, "cpu_s": round(cpu, 3),
                     "us_per_resp": round(1e6 * cpu / reqs, 1),
                     "body_bytes": rs[0]["body_bytes"],
                     "runs_us": [round(1e6 * r["cpu_s"] / r["requests"], 1) for r in rs]}
    out["ratio"] = round(out["dcz"]["us_per_resp"] / out["zstd"]["us_per_resp"], 3) \
        if out["zstd"]["us_per_resp"] else None
    return out


# ---- report ------------------------------------------------------------------------------------
def git_rev() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


def write_md(meta: dict, rows: list[dict], levels: list[int], out: Path) -> None:
    md = ["# Dictionary compression (dcz, RFC 9842) on real release pairs", "",
          f"`{meta['command']}` on {meta['date']} ({meta['cpus']}, load average at start "
          f"{meta['load_start']}, at the end {meta.get('load_end', '?')}; {meta['rev']}). "
          "Raw numbers: [dictionary.json](dictionary.json).", "",
          "![bytes per release step](dictionary.png)", ""]
    served = [r for r in rows if "server" in r]
    if served:
        md += ["## Targets", "", "| target | reached | met |", "|---|---|---|"]
        for lv in levels:
            ratios = [(r["server"][str(lv)]["ratio_patch"], r["step"]) for r in served]
            worst = max(ratios)
            md.append(f"| dcz-{lv} body ≤ {TARGET_BYTES}× (`zstd -{lv} --patch-from` + 40) | "
                      f"worst {worst[0]:.3f}× ({worst[1]}); " +
                      ", ".join(f"{s} {x:.3f}×" for x, s in ratios) +
                      f" | **{'yes' if worst[0] <= TARGET_BYTES else 'no'}** |")
        misses = [(r, lv) for r in served for lv in levels
                  if r["server"][str(lv)]["ratio_patch"] > TARGET_BYTES]
        cpu = [(r["cpu"]["ratio"], r["step"]) for r in served if r.get("cpu")]
        if cpu:
            worst = max(cpu)
            md.append(f"| CPU per dcz-{CPU_LEVEL} response ≤ {TARGET_CPU}× zstd-{CPU_LEVEL} of "
                      f"the same body | worst {worst[0]:.3f}× ({worst[1]}); " +
                      ", ".join(f"{s} {x:.3f}×" for x, s in cpu) +
                      f" | **{'yes' if worst[0] <= TARGET_CPU else 'no'}** |")
        md.append("")
        if misses:
            md += ["### Where dcz is larger than patch-from", ""]
            for r, lv in misses:
                s_, v, o = r["server"][str(lv)], r["variants"][str(lv)], r["offline"]
                md.append(
                    f"- {r['step']} level {lv}: dcz {s_['dcz']} B = {s_['dcz'] - HEADER_LEN} B "
                    f"frame + 40 (the `cdict` model below: {v['cdict']['bytes']} B, "
                    f"{v['cdict']['us']:.0f} µs) against `zstd -{lv} --patch-from` "
                    f"{o[f'patch-from-{lv}']} B (its parameters through libzstd, `cli`: "
                    f"{v['cli']['bytes']} B, {v['cli']['us']:.0f} µs"
                    f"{', long-distance matching on' if v['cli'].get('ldm') else ''}; "
                    f"`prefix` without LDM {v['prefix']['bytes']} B; `prefix+ldm` "
                    f"{v['prefix+ldm']['bytes']} B, {v['prefix+ldm']['us']:.0f} µs; no "
                    f"dictionary {v['none']['bytes']} B, {v['none']['us']:.0f} µs).")
            md += ["", "`zstd --patch-from` (programs/fileio.c, `FIO_adjustParamsForPatchFromMode` "
                   "and `FIO_createCResources`) does not load the old file as a dictionary: it "
                   "uses `ZSTD_CCtx_refPrefix` (the old file is the window's history), sets "
                   "`ZSTD_c_windowLog` = highbit(body size) + 1 and turns on "
                   "`ZSTD_c_enableLongDistanceMatching` when that window log exceeds the "
                   "level's cycle log (`ZSTD_cycleLog(chainLog, strategy)` of "
                   "`ZSTD_getCParams(level, bodySize, dictSize)`; 16 at level 3 here, so "
                   "always at 3 and never at 19 on this corpus); it also writes a 4-byte "
                   "checksum. The module uses a prepared raw-content CDict "
                   "(`ZSTD_getCParams(level, unknown, dictSize)`, refCDict) without long-"
                   "distance matching: its frames have the size of the `cdict` model. "
                   "At level 3 the CDict's 2^16-entry dfast tables cannot index a 230 kB "
                   "stylesheet (the later positions overwrite the earlier ones), while "
                   "patch-from's long-distance matcher finds the unchanged long runs. With the "
                   "CDict, turning long-distance matching on makes the frame larger, not "
                   "smaller (`cdict+ldm` below). The table below gives bytes and CPU for each "
                   "way.", ""]
    md += ["## Bytes", "",
           "Body bytes of the new release. `patch-from-N` = `zstd -N --patch-from=OLD NEW` "
           "(zstd CLI " + meta["zstd_cli"] + "; its defaults: content size and a 4-byte "
           "checksum); `py-dict-N` = python-zstandard level N with OLD as a raw-content "
           "dictionary (content size, no checksum): what the module's frame should be; "
           "`dcz-N` = the module's dcz body as sent (40-byte header included); "
           "`zstd-N (mod)` = the module's plain zstd at the same level; × = dcz-N / "
           "(patch-from-N + 40).", ""]
    head = ["step", "new", "gzip-6", "br-11", "zstd-19"]
    for lv in levels:
        head += [f"patch-from-{lv}", f"py-dict-{lv}", f"dcz-{lv}", f"zstd-{lv} (mod)", "×"]
    md += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        o = r["offline"]
        cells = [r["step"], o["new"], o["gzip-6"], o["br-11"], o["zstd-19"]]
        for lv in levels:
            s = r.get("server", {}).get(str(lv))
            cells += [o[f"patch-from-{lv}"], o[f"py-dict-{lv}"],
                      s["dcz"] if s else "–", s["zstd"] if s else "–",
                      f"{s['ratio_patch']:.3f}" if s else "–"]
        md.append("| " + " | ".join(str(c) for c in cells) + " |")
    md.append("")
    if served:
        md += ["## CPU per response", "",
               f"`ab -k -n {meta['n']} -c {meta['c']}` of the new release per run, four runs "
               f"in the order dcz, zstd, zstd, dcz (after a warm-up of each) on the level-"
               f"{CPU_LEVEL} port (`MultiCompressLevel dcz {CPU_LEVEL}`, `zstd {CPU_LEVEL}`); "
               "dcz = `Accept-Encoding: dcz, zstd, br, gzip` + `Available-Dictionary` of the "
               "old release, zstd = `Accept-Encoding: zstd`. µs/response = server utime+stime "
               "(all httpd processes, /proc) over the runs / responses; ab runs on the same "
               "2 cores and is not counted.", "",
               "| step | dcz µs/resp | zstd-3 µs/resp | ratio | dcz runs | zstd runs | "
               "dcz bytes | zstd-3 bytes |", "|---|---:|---:|---:|---|---|---:|---:|"]
        for r in served:
            c = r.get("cpu")
            if not c:
                continue
            md.append(f"| {r['step']} | {c['dcz']['us_per_resp']:.0f} | "
                      f"{c['zstd']['us_per_resp']:.0f} | {c['ratio']:.3f} | "
                      f"{' / '.join(f'{x:.0f}' for x in c['dcz']['runs_us'])} | "
                      f"{' / '.join(f'{x:.0f}' for x in c['zstd']['runs_us'])} | "
                      f"{c['dcz']['body_bytes']} | {c['zstd']['body_bytes']} |")
        md.append("")
        md += ["## The module's dcz frames", "",
               "| step | level | window | content size | checksum | dict ID | Vary |",
               "|---|---:|---:|---|---|---:|---|"]
        for r in served:
            for lv in levels:
                s = r["server"][str(lv)]
                md.append(f"| {r['step']} | {lv} | {s['frame_window']} | "
                          f"{s['frame_content_size']} | {s['frame_checksum']} | "
                          f"{s['frame_dict_id']} | {s['vary']} |")
        md.append("")
    md += ["## How the dictionary is used (libzstd directly)", "",
           f"The system libzstd {meta.get('libzstd', '?')} through ctypes, per step and level: "
           "frame bytes (no checksum, content size) and CPU µs per compression (best of 7 at "
           "levels ≤ 9, one run above; the CDict is made beforehand, as the module keeps it "
           "with the dictionary). `cdict` = a raw-content CDict with `ZSTD_getCParams(level, "
           "unknown, dictSize)`, `ZSTD_CCtx_refCDict`, window = the smallest power of two ≥ "
           "dictionary + body; `cdict+ldm` = that with `ZSTD_c_enableLongDistanceMatching`; "
           "`prefix` = `ZSTD_CCtx_refPrefix(old)` with the same window; "
           "`prefix+ldm` = that plus `ZSTD_c_enableLongDistanceMatching`; `cli` = what "
           "`zstd --patch-from` sets (programs/fileio.c `FIO_adjustParamsForPatchFromMode`: "
           "refPrefix, windowLog = highbit(body size) + 1, long-distance matching turned on "
           "when that exceeds the level's cycle log: marked (ldm)); `none` = "
           "no dictionary.", "",
           "| step | level | cdict | cdict+ldm | prefix | prefix+ldm | cli | none |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        for lv in levels:
            v = r["variants"][str(lv)]
            md.append(f"| {r['step']} | {lv} | " + " | ".join(
                f"{v[k]['bytes']} B, {v[k]['us']:.0f} µs"
                + (" (ldm)" if v[k].get("ldm") else "")
                for k in ("cdict", "cdict+ldm", "prefix", "prefix+ldm", "cli", "none"))
                + " |")
    md.append("")
    md += ["## Corpus", "", "`npm pack` of each version; the file from the tarball.", "",
           "| package | version | file | bytes | SHA-256 |", "|---|---|---|---:|---|"]
    for c in meta["corpus"]:
        md.append(f"| {c['package']} | {c['version']} | `{c['file']}` | {c['size']} | "
                  f"`{c['sha256']}` |")
    if meta.get("notes"):
        md += ["", "## Notes", ""] + [f"- {n}" for n in meta["notes"]]
    (out / "dictionary.md").write_text("\n".join(md) + "\n")


def _colour(col: str) -> str:
    fixed = {"gzip-6": "#9e9e9e", "br-11": "#ff9f40", "zstd-19": "#4caf50"}
    if col in fixed:
        return fixed[col]
    hues = ["#1f77b4", "#9467bd", "#d62728", "#8c564b"]   # one hue per level
    lv = int(col.rsplit("-", 1)[1])
    hue = hues[sorted({3, 19, lv}).index(lv) % len(hues)]
    return hue + ("66" if col.startswith("patch-from") else "ff")


def write_chart(rows: list[dict], levels: list[int], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = ["gzip-6", "br-11", "zstd-19"]
    for lv in levels:
        cols += [f"patch-from-{lv}", f"dcz-{lv}"]
    served = [r for r in rows if "server" in r]
    with_cpu = [r for r in served if r.get("cpu")]
    fig, axes = plt.subplots(2 if with_cpu else 1, 1, figsize=(13, 9 if with_cpu else 5.5),
                             gridspec_kw={"height_ratios": [3, 1.3]} if with_cpu else None)
    ax = axes[0] if with_cpu else axes
    n = len(cols)
    width = 0.8 / n
    for i, col in enumerate(cols):
        vals = []
        for r in rows:
            if col.startswith("dcz-"):
                s = r.get("server", {}).get(col[4:])
                vals.append(s["dcz"] if s else 0)
            else:
                vals.append(r["offline"][col])
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(rows))]
        ax.bar(xs, vals, width, label=col, color=_colour(col))
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["step"] for r in rows], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("body bytes (log)")
    ax.set_title("New release as body, old release as dictionary (dcz bars include the 40-byte "
                 "header; patch-from bars do not)")
    ax.legend(fontsize=8, ncol=4)
    ax.grid(axis="y", which="both", alpha=0.3)
    if with_cpu:
        ax2 = axes[1]
        ax2.bar(range(len(with_cpu)), [r["cpu"]["ratio"] for r in with_cpu], 0.5,
                color="tab:purple")
        ax2.axhline(TARGET_CPU, color="red", ls="--", lw=1, label=f"target {TARGET_CPU}×")
        ax2.set_xticks(range(len(with_cpu)))
        ax2.set_xticklabels([r["step"] for r in with_cpu], rotation=20, ha="right", fontsize=8)
        ax2.set_ylabel(f"CPU dcz-{CPU_LEVEL} / zstd-{CPU_LEVEL}")
        ax2.legend(fontsize=8)
        ax2.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "dictionary.png", dpi=100)
    plt.close(fig)


def zstd_version() -> str:
    r = subprocess.run(["zstd", "-V"], capture_output=True, text=True)
    m = re.search(r"v(\d+\.\d+\.\d+)", r.stdout + r.stderr)
    return m.group(1) if m else "?"


def cpu_name() -> str:
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model})"


# ---- main --------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=str(ROOT / "build" / "bench-dict"),
                    help="cache of npm tarballs and extracted files, and the servers' temp dirs")
    ap.add_argument("--module", default=str(ROOT / "build/debug/mod_multicompress/httpd/"
                                             "mod_multicompress.so"))
    ap.add_argument("--quick", action="store_true",
                    help="the latest step per package, fewer requests")
    ap.add_argument("--levels", default="3,19", help="dcz levels (comma-separated)")
    ap.add_argument("-n", type=int, default=None, help="requests per ab run (2000; quick 300)")
    ap.add_argument("-c", type=int, default=4, help="ab concurrency")
    ap.add_argument("--offline", action="store_true", help="no server: offline columns only")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU runs")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--keep", action="store_true", help="keep the server's temp dir")
    args = ap.parse_args()
    n = args.n or (300 if args.quick else 2000)
    levels = [int(x) for x in args.levels.split(",")]
    if CPU_LEVEL not in levels and not args.no_cpu:
        levels = [CPU_LEVEL] + levels
    work = Path(args.work).resolve()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    if not args.offline and not os.path.isfile(args.module):
        raise SystemExit(f"dictionary.py: no module at {args.module} (build it, or --offline)")

    meta = {"command": " ".join(["bench/dictionary.py", *sys.argv[1:]]),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg()), "cpus": cpu_name(),
            "rev": git_rev(), "n": n, "c": args.c, "levels": levels,
            "zstd_cli": zstd_version(),
            "python_zstandard": zstandard.__version__,
            "libzstd (python)": ".".join(map(str, zstandard.ZSTD_VERSION)), "notes": []}
    corpus = fetch_corpus(work)
    meta["corpus"] = [{"package": p, "version": v, "file": r["path"].name, "size": r["size"],
                       "sha256": r["sha256"], "tarball": r["tarball"]}
                      for (p, v), r in corpus.items()]
    rows = []
    lz = _LibZstd()
    meta["libzstd"] = lz.version
    for pkg, fname, a, b in steps_of(args.quick):
        step = f"{pkg} {a}→{b}"
        old_p, new_p = corpus[(pkg, a)]["path"], corpus[(pkg, b)]["path"]
        o = offline(old_p, new_p, levels)
        var = {str(lv): variants(lz, old_p.read_bytes(), new_p.read_bytes(), lv,
                                 repeat=7 if lv <= 9 else 1) for lv in levels}
        rows.append({"step": step, "package": pkg, "file": fname, "old": a, "new": b,
                     "offline": o, "variants": var})
        print(f"{step}: new {o['new']}, gzip-6 {o['gzip-6']}, br-11 {o['br-11']}, zstd-19 "
              f"{o['zstd-19']}, " + ", ".join(f"patch-from-{lv} {o[f'patch-from-{lv}']}, "
                                              f"py-dict-{lv} {o[f'py-dict-{lv}']}"
                                              for lv in levels), flush=True)

    if not args.offline:
        srv = start_server(work, args.module, corpus, levels)
        try:
            srv.start()  # stopped in finally, also when start() fails
            scratch = srv.tmp / "scratch"  # type: ignore[attr-defined]
            scratch.mkdir()
            for r in rows:
                old_path = corpus[(r["package"], r["old"])]["path"]
                new_path = corpus[(r["package"], r["new"])]["path"]
                old, new = old_path.read_bytes(), new_path.read_bytes()
                old_url = f"/rel/{r['package']}/{r['old']}/{r['file']}"
                new_url = f"/rel/{r['package']}/{r['new']}/{r['file']}"
                r["server"] = {}
                for lv in levels:
                    s = dcz_fetch(srv.ports[("zstd", lv)], old_url, new_url, old, new,
                                  old_path, scratch)
                    s["ratio_patch"] = round(
                        s["dcz"] / (r["offline"][f"patch-from-{lv}"] + HEADER_LEN), 4)
                    r["server"][str(lv)] = s
                    print(f"{r['step']} dcz-{lv}: {s['dcz']} bytes "
                          f"({s['ratio_patch']:.3f}× patch-from+40), zstd-{lv} {s['zstd']}",
                          flush=True)
                if not args.no_cpu:
                    r["cpu"] = cpu_compare(srv, srv.ports[("zstd", CPU_LEVEL)], new_url, old,
                                           n, args.c)
                    print(f"{r['step']} CPU: dcz {r['cpu']['dcz']['us_per_resp']:.0f} µs, "
                          f"zstd-{CPU_LEVEL} {r['cpu']['zstd']['us_per_resp']:.0f} µs, "
                          f"ratio {r['cpu']['ratio']:.3f}", flush=True)
            errs = srv.error_lines()
            if errs:
                meta["notes"].append("error_log: " + " | ".join(e.strip() for e in errs[:5]))
                print("error_log:\n" + "".join(errs[:20]), file=sys.stderr)
        finally:
            srv.stop()
            if not args.keep:
                shutil.rmtree(srv.tmp, ignore_errors=True)  # type: ignore[attr-defined]
            else:
                print(f"kept {srv.tmp}")  # type: ignore[attr-defined]

    meta["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    (out / "dictionary.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1,
                                                    default=str) + "\n")
    write_md(meta, rows, levels, out)
    write_chart(rows, levels, out)
    print(f"wrote {out / 'dictionary.md'}, dictionary.json, dictionary.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
