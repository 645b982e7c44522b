# SPDX-License-Identifier: Apache-2.0
"""bench/dictionary.py, part 2: a site dictionary for the pages of a site.

The site is the Apache manual (Debian's apache2-doc, installed here if missing): every `.html`
under /usr/share/doc/apache2-doc/manual, symlinks followed (the translations link untranslated
pages to the English ones). Byte-identical pages count once, so that no measured page is one the
dictionary was trained on; the distinct pages are split into halves by their content's SHA-256.
`multicompress-precompress --train-dictionary --holdout 0` trains a 64 KiB dictionary on one
half; Apache with the module serves the other half and the dictionary
(`MultiCompressUseAsDictionary`): each page is fetched as identity, gzip-6, br-5, zstd-3, dcz-3
(one port) and br-11, dcz-19 (another), every dcz body checked and decoded. Server CPU per
response: `h2load --h1` over all the measured pages once per coding (utime+stime of the httpd
processes from /proc over the responses).

The issue's targets were measured on the pages, not on the distinct contents: half of the 2685
URLs trained on, the other half measured, so that a page published under several URLs may be on
both sides. `by_page` measures that split too (bytes only), and the report gives both.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import zstandard

import servers
from dictionary_releases import DCZ_MAGIC, HEADER_LEN, get, sf_hash

MANUAL = Path("/usr/share/doc/apache2-doc/manual")
DICT_URL = "/dict/site.txt"
DICT_SIZE = 64 * 1024
CODINGS = ["identity", "gzip-6", "br-5", "zstd-3", "dcz-3", "br-11", "dcz-19"]
# coding -> (port key, Accept-Encoding, with Available-Dictionary)
REQUEST = {
    "identity": (("zstd", 3), "identity", False),
    "gzip-6": (("zstd", 3), "gzip", False),
    "br-5": (("zstd", 3), "br", False),
    "zstd-3": (("zstd", 3), "zstd", False),
    "dcz-3": (("zstd", 3), "dcz, zstd, br, gzip", True),
    "br-11": (("br", 11), "br", False),
    "dcz-19": (("br", 11), "dcz, zstd, br, gzip", True),
}


def ensure_manual() -> None:
    if MANUAL.is_dir():
        return
    print("dictionary.py: installing apache2-doc (the Apache manual) ...", flush=True)
    r = subprocess.run(["apt-get", "install", "-y", "apache2-doc"], capture_output=True,
                       text=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                       timeout=600)
    if r.returncode != 0 or not MANUAL.is_dir():
        raise SystemExit("dictionary.py: apache2-doc is not installed and `apt-get install "
                         f"apache2-doc` failed (run it as root):\n{r.stderr.strip()[-800:]}")


def all_pages() -> list[tuple[str, bytes]]:
    """(relative path, bytes) of every page, by path (a translation may be the English page)."""
    found = []
    for d, _, files in os.walk(MANUAL, followlinks=True):
        for f in files:
            if f.endswith(".html"):
                p = Path(d) / f
                found.append((p.relative_to(MANUAL).as_posix(), p.read_bytes()))
    return sorted(found)


def pages() -> tuple[list[tuple[str, bytes]], int]:
    """(relative path, bytes) of each distinct page, by path; and the number of pages."""
    found = all_pages()
    seen: dict[bytes, tuple[str, bytes]] = {}
    for rel, data in found:
        seen.setdefault(hashlib.sha256(data).digest(), (rel, data))
    return sorted(seen.values()), len(found)


def split(distinct: list[tuple[str, bytes]]) -> tuple[list, list]:
    """Training and measured halves, by the parity of the first byte of the content's SHA-256."""
    train, test = [], []
    for rel, data in distinct:
        (train if hashlib.sha256(data).digest()[0] % 2 == 0 else test).append((rel, data))
    return train, test


def train(tool: str, train_pages: list, work: Path) -> tuple[bytes, float, str]:
    d = work / "train"
    shutil.rmtree(d, ignore_errors=True)
    for rel, data in train_pages:
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    out = work / "site.dict"
    t0 = time.monotonic()
    r = subprocess.run([tool, "--train-dictionary", str(out), "--holdout", "0", "--types",
                        "html", "--dictionary-size", str(DICT_SIZE), str(d)],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{tool} --train-dictionary: {r.stderr.strip()}")
    return out.read_bytes(), time.monotonic() - t0, r.stdout.strip()


def start_server(work: Path, module: str, test_pages: list, dictionary: bytes) -> servers.Apache:
    tmp = Path(tempfile.mkdtemp(prefix="mc-site-", dir=work))
    docroot = tmp / "htdocs"
    for rel, data in test_pages:
        p = docroot / "manual" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (docroot / DICT_URL.lstrip("/")).parent.mkdir(parents=True)
    (docroot / DICT_URL.lstrip("/")).write_bytes(dictionary)
    (docroot / "small.html").write_text("<!doctype html><title>ok</title><p>ok</p>\n")
    for d, _, files in os.walk(tmp):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)
    run = tmp / "srv" / "run"
    run.mkdir(parents=True)
    run.chmod(0o777)
    keys = [("zstd", 3), ("br", 11)]
    ports = dict(zip(keys, servers.free_ports(len(keys))))
    extra = [
        "MultiCompressEncodings dcz zstd br gzip",
        f"MultiCompressCacheStore shmcb:{run}/mc-site(67108864)",
        f"<Location {DICT_URL}>",
        '    MultiCompressUseAsDictionary "/manual/*" dest=document id=site',
        "</Location>",
    ]
    vhost = {("zstd", 3): ["MultiCompressLevel gzip 6", "MultiCompressLevel br 5",
                           "MultiCompressLevel dcz 3"],
             ("br", 11): ["MultiCompressLevel dcz 19"]}
    srv = servers.Apache("multicompress", str(tmp / "srv"), str(docroot), ports,
                         module_path=os.path.abspath(module), extra_conf=extra, vhost_conf=vhost,
                         mods=["socache_shmcb"], label="mod_multicompress (site dictionary)")
    srv.tmp = tmp  # type: ignore[attr-defined]
    return srv


def fetch_sizes(srv: servers.Apache, test_pages: list, dictionary: bytes,
                codings: list[str] = CODINGS) -> dict:
    """Body bytes of every measured page per coding, as the module sends them."""
    for port in srv.ports.values():
        st, h, _ = get(port, DICT_URL, {"Accept-Encoding": "identity"})
        if st != 200 or "use-as-dictionary" not in h:
            raise RuntimeError(f"GET {DICT_URL}: {st}, no Use-As-Dictionary ({h})")
    time.sleep(0.5)   # stored at the end of the response
    zd = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    digest = hashlib.sha256(dictionary).digest()
    sizes: dict[str, list[int]] = {c: [] for c in codings}
    for rel, data in test_pages:
        url = "/manual/" + rel
        for coding in codings:
            key, ae, with_dict = REQUEST[coding]
            headers = {"Accept-Encoding": ae}
            if with_dict:
                headers["Available-Dictionary"] = sf_hash(dictionary)
            st, h, body = get(srv.ports[key], url, headers)
            want = coding.split("-")[0]
            got = h.get("content-encoding", "identity")
            if st != 200 or got != want:
                raise RuntimeError(f"GET {url} as {coding}: {st}, Content-Encoding {got!r}")
            if want == "dcz":
                if body[:8] != DCZ_MAGIC or body[8:HEADER_LEN] != digest:
                    raise RuntimeError(f"{url}: dcz header does not name the site dictionary")
                dec = zstandard.ZstdDecompressor(dict_data=zd).decompressobj().decompress(
                    body[HEADER_LEN:])
                if dec != data:
                    raise RuntimeError(f"{url}: dcz body does not decode to the page")
            sizes[coding].append(len(body))
    return sizes


def cpu_per_response(srv: servers.Apache, test_pages: list, dictionary: bytes,
                     rounds: int) -> dict:
    """Server CPU µs per response per coding: h2load over all measured pages (`rounds` times
    each; br-11 once), dcz-3 and zstd-3 measured twice in the order dcz, zstd, zstd, dcz."""
    uris = srv.tmp / "uris.txt"  # type: ignore[attr-defined]
    order = ["identity", "gzip-6", "br-5", "dcz-3", "zstd-3", "zstd-3", "dcz-3", "dcz-19",
             "br-11"]
    out: dict[str, dict] = {}
    for coding in order:
        key, ae, with_dict = REQUEST[coding]
        port = srv.ports[key]
        uris.write_text("".join(f"http://127.0.0.1:{port}/manual/{rel}\n"
                                for rel, _ in test_pages))
        n = len(test_pages) * (1 if coding in ("br-11", "dcz-19") else rounds)
        cmd = ["h2load", "--h1", "-c", "2", "-n", str(n), "-i", str(uris),
               "-H", f"Accept-Encoding: {ae}"]
        if with_dict:
            cmd += ["-H", f"Available-Dictionary: {sf_hash(dictionary)}"]
        cpu0 = srv.cpu_seconds()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        cpu = srv.cpu_seconds() - cpu0
        m = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", r.stdout)
        if r.returncode != 0 or not m or int(m.group(2)) != n:
            raise RuntimeError(f"h2load for {coding}: {r.stdout[-600:]} {r.stderr[-300:]}")
        rec = out.setdefault(coding, {"requests": 0, "cpu_s": 0.0, "runs_us": []})
        rec["requests"] += n
        rec["cpu_s"] += cpu
        rec["runs_us"].append(round(1e6 * cpu / n, 1))
    for rec in out.values():
        rec["us_per_resp"] = round(1e6 * rec["cpu_s"] / rec["requests"], 1)
        rec["cpu_s"] = round(rec["cpu_s"], 3)
    return out


def tool_holdout(tool: str) -> dict:
    """The tool's own measurement on the whole manual with `--holdout 50%` (its split: the first
    half in the order of the content's SHA-256): another split of the same pages."""
    out = Path(tempfile.mkdtemp(prefix="mc-site-dict-")) / "holdout.dict"
    try:
        r = subprocess.run([tool, "--train-dictionary", str(out), "--holdout", "50%", "--types",
                            "html", "--dictionary-size", str(DICT_SIZE), str(MANUAL)],
                           capture_output=True, text=True, timeout=3600)
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    if r.returncode != 0:
        raise RuntimeError(f"{tool} --train-dictionary --holdout 50%: {r.stderr.strip()}")
    rows = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^(identity|zstd-3|br-11|dcz-3|dcz-19)\s+(\d+)", r.stdout, re.M)}
    return {"bytes": rows, "report": r.stdout.strip()}


def by_page(tool: str, module: str, work: Path, keep: bool) -> dict:
    """The split the issue's targets were measured with: the manual's pages (its URLs, not its
    distinct contents) in halves, every other one in the order of their paths, so that a page
    published under several URLs (a translation that is the English page) may be on both sides,
    as it is on the site. Trained on one half (the tool counts identical files once), the other
    half served by the module and measured as run_site's pages are."""
    every = all_pages()
    train_pages, test_pages = every[0::2], every[1::2]
    dictionary, _, _ = train(tool, train_pages, work)
    trained = {hashlib.sha256(d).digest() for _, d in train_pages}
    srv = start_server(work, module, test_pages, dictionary)
    try:
        srv.start()
        sizes = fetch_sizes(srv, test_pages, dictionary, ["zstd-3", "br-11", "dcz-3", "dcz-19"])
    finally:
        srv.stop()
        if not keep:
            shutil.rmtree(srv.tmp, ignore_errors=True)  # type: ignore[attr-defined]
    return {"train_pages": len(train_pages), "test_pages": len(test_pages),
            "also_trained": sum(hashlib.sha256(d).digest() in trained for _, d in test_pages),
            "bytes": {c: sum(v) for c, v in sizes.items()}}


def run_site(tool: str, module: str, work: Path, cpu: bool, rounds: int, keep: bool) -> dict:
    ensure_manual()
    distinct, total = pages()
    train_pages, test_pages = split(distinct)
    dictionary, train_s, tool_report = train(tool, train_pages, work)
    print(f"site: {total} pages, {len(distinct)} distinct; trained on {len(train_pages)} in "
          f"{train_s:.1f} s, measuring {len(test_pages)}", flush=True)
    res = {"pages": total, "distinct": len(distinct), "train_pages": len(train_pages),
           "test_pages": len(test_pages), "dictionary_bytes": len(dictionary),
           "dictionary_sha256": hashlib.sha256(dictionary).hexdigest(),
           "train_seconds": round(train_s, 1), "tool_report": tool_report,
           "test_bytes": sum(len(d) for _, d in test_pages), "rounds": rounds}
    srv = start_server(work, module, test_pages, dictionary)
    try:
        srv.start()
        sizes = fetch_sizes(srv, test_pages, dictionary)
        res["bytes"] = {c: sum(v) for c, v in sizes.items()}
        print("site bytes: " + ", ".join(f"{c} {b}" for c, b in res["bytes"].items()),
              flush=True)
        if cpu:
            res["cpu"] = cpu_per_response(srv, test_pages, dictionary, rounds)
            print("site CPU µs/response: " + ", ".join(
                f"{c} {r['us_per_resp']:.0f}" for c, r in res["cpu"].items()), flush=True)
        errs = srv.error_lines()
        if errs:
            res["error_log"] = [e.strip() for e in errs[:5]]
    finally:
        srv.stop()
        if not keep:
            shutil.rmtree(srv.tmp, ignore_errors=True)  # type: ignore[attr-defined]
    res["by_page"] = by_page(tool, module, work, keep)
    print("site, pages by URL: " + ", ".join(
        f"{c} {b}" for c, b in res["by_page"]["bytes"].items()), flush=True)
    res["tool_holdout"] = tool_holdout(tool)
    print("site, the tool's --holdout 50%: " + ", ".join(
        f"{c} {b}" for c, b in res["tool_holdout"]["bytes"].items()), flush=True)
    return res
