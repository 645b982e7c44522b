# SPDX-License-Identifier: Apache-2.0
"""bench/dictionary.py, part 1: dcz between real releases of npm packages.

A step is (old release = the dictionary, new release = the body); per step and level: offline
sizes (`zstd -N --patch-from` with and without checksum), the module's live dcz body (decoded two
ways), the precompress tool's delta sidecar, libzstd's ways (ctypes), server CPU (`ab`)."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

import brotli
import zstandard

import servers

DCZ_MAGIC = bytes([0x5E, 0x2A, 0x4D, 0x18, 0x20, 0x00, 0x00, 0x00])
HEADER_LEN = 40
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
    }
    for lv in levels:
        row[f"zstd-{lv}"] = len(zstandard.ZstdCompressor(level=lv).compress(new))
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
    """gzip at zlib level N with zlib's defaults (window 15, memLevel 8)."""
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


# ---- libzstd directly (ctypes): what each way of using the dictionary costs -------------------
class _LibZstd:
    """The system libzstd through ctypes: refPrefix, CDict parameters, LDM, attach."""

    C_LEVEL, C_WINDOW, C_LDM, C_ATTACH, C_WORKERS = 100, 101, 160, 1001, 400

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
                 window_log: int = 0, ldm: bool = False, attach: bool = False,
                 workers: int = 0, repeat: int = 1) -> tuple[int, float]:
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
                if attach:   # ZSTD_c_forceAttachDict = ZSTD_dictForceAttach
                    self._ck(L.ZSTD_CCtx_setParameter(cctx, self.C_ATTACH, 1))
                if workers:  # the zstd CLI's default: one worker thread
                    self._ck(L.ZSTD_CCtx_setParameter(cctx, self.C_WORKERS, workers))
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
    """The module's window: the smallest covering dictionary + body."""
    w = 10
    while (1 << w) < dict_size + body_size and w < 27:
        w += 1
    return w


def variants(z: _LibZstd, old: bytes, new: bytes, level: int, repeat: int) -> dict:
    """Frame bytes and CPU µs per compression (best of `repeat`; the CDict made beforehand)."""
    w = dcz_window_log(len(old), len(new))
    # programs/fileio.c FIO_adjustParamsForPatchFromMode: windowLog = highbit(srcSize) + 1;
    # long-distance matching when that exceeds ZSTD_cycleLog(chainLog, strategy) of
    # ZSTD_getCParams(level, srcSize, dictSize).
    cli_w = max(10, len(new).bit_length())
    cp = z.L.ZSTD_getCParams(level, len(new), len(old))
    cli_ldm = cli_w > cp.chainLog - (1 if cp.strategy >= 6 else 0)   # 6 = ZSTD_btlazy2
    # The module attaches the prepared tables for the dfast..lazy2 strategies (2..5).
    attach = 2 <= z.L.ZSTD_getCParams(level, 0, len(old)).strategy <= 5
    out = {}
    cd = z.cdict(old, level)
    try:
        out["module"] = z.compress(new, level, cdict=cd, window_log=w, attach=attach,
                                   repeat=repeat)
        out["cdict copied"] = z.compress(new, level, cdict=cd, window_log=w, repeat=repeat)
    finally:
        z.L.ZSTD_freeCDict(cd)
    out["prefix+ldm"] = z.compress(new, level, prefix=old, window_log=w, ldm=True, repeat=repeat)
    out["cli"] = z.compress(new, level, prefix=old, window_log=cli_w, ldm=cli_ldm, workers=1,
                            repeat=repeat)
    out["none"] = z.compress(new, level, repeat=repeat)
    res = {k: {"bytes": b, "us": round(1e6 * t, 1)} for k, (b, t) in out.items()}
    res["module"]["attach"] = attach
    res["cli"]["ldm"] = cli_ldm
    res["cli"]["window_log"] = cli_w
    return res


# ---- deploy-time deltas: multicompress-precompress -----------------------------------------
def tool_delta(tool: str, old_path: Path, new_path: Path, level: int, scratch: Path) -> dict:
    """The tool's delta sidecar of NEW against OLD (`--deltas 1 --levels dcz=N`, content-hashed
    names), checked: its header names OLD and `zstd -d --patch-from=OLD` gives NEW."""
    d = scratch / f"deploy-{level}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    old, new = old_path.read_bytes(), new_path.read_bytes()
    ext = "".join(new_path.suffixes[-2:]) if new_path.name.endswith((".min.js", ".min.css")) \
        else new_path.suffix
    names = []
    for age, data in enumerate((old, new)):
        p = d / f"app.{hashlib.sha256(data).hexdigest()[:20]}{ext}"
        p.write_bytes(data)
        os.utime(p, (1_700_000_000 + age, 1_700_000_000 + age))
        names.append(p)
    t0 = time.monotonic()
    r = subprocess.run([tool, "-q", "-e", "zstd", "--deltas", "1", "--levels", f"dcz={level}",
                        "--jobs", "1", str(d)], capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{tool}: {r.stderr.strip()}")
    delta = Path(f"{names[1]}.dcz-{hashlib.sha256(old).hexdigest()[:16]}")
    if not delta.is_file():
        raise RuntimeError(f"no delta sidecar {delta.name} (not smaller?)")
    body = delta.read_bytes()
    if body[:8] != DCZ_MAGIC or body[8:40] != hashlib.sha256(old).digest():
        raise RuntimeError(f"{delta}: not a dcz body for the old release")
    out = zstd_cli(["-d", f"--patch-from={names[0]}", "-c", str(delta)], timeout=60)
    if out != new:
        raise RuntimeError(f"{delta}: does not decode to the new release")
    return {"bytes": len(body), "tool_wall_s": round(wall, 2)}


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


