# SPDX-License-Identifier: Apache-2.0
"""multicompress-precompress --train-dictionary: a site dictionary of raw content (RFC 9842),
the same bytes for the same input, and a report of what it saves on held-back files."""
import os
import random
import re
from pathlib import Path

import zstandard

from pc_util import run

ZSTD_DICT_MAGIC = bytes.fromhex("37a430ec")
SECRET = "dbpass-7d1c3f0a9e"


def page(rng: random.Random, i: int) -> str:
    words = ["server", "module", "request", "response", "header", "filter", "compression",
             "client", "cache", "directive", "virtual", "host", "config", "browser", "status"]
    body = "".join("<p>" + " ".join(rng.choice(words) for _ in range(rng.randint(20, 60)))
                   + "</p>\n" for _ in range(rng.randint(3, 10)))
    return ("<!DOCTYPE html>\n<html><head><title>Page %d</title><link rel=\"stylesheet\" "
            "href=\"/style/site.css\"></head><body><div id=\"nav\"><a href=\"/\">Home</a> | "
            "<a href=\"/docs/\">Docs</a> | <a href=\"/faq/\">FAQ</a></div>\n<div id=\"content\">"
            "%s</div><div id=\"footer\">Copyright 2025 Example. Licensed under the Apache "
            "License, Version 2.0.</div></body></html>\n" % (i, body))


def make_site(root: Path, n: int = 200) -> Path:
    rng = random.Random(11)
    for i in range(n):
        p = root / f"d{i % 4}" / f"page{i}.html"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(page(rng, i))
    return root


def report(stdout: str) -> dict:
    rows = {}
    for m in re.finditer(r"^(identity|zstd-3|br-11|dcz-3|dcz-19)\s+(\d+)\s+(\d+)\s+([\d.]+)"
                         r"\s+([\d.]+)$", stdout, re.M):
        rows[m.group(1)] = (int(m.group(2)), float(m.group(4)), float(m.group(5)))
    return rows


def test_trains_raw_content_and_reports_savings(tmp_path):
    site = make_site(tmp_path / "site")
    out = tmp_path / "site.dict"
    proc = run("--train-dictionary", out, "--dictionary-size", "8k", "--verbose", site)
    dictionary = out.read_bytes()
    assert 4096 < len(dictionary) <= 8192
    assert dictionary[:4] != ZSTD_DICT_MAGIC  # raw content, not zstd's dictionary format
    assert b"Licensed under the Apache" in dictionary
    assert oct(out.stat().st_mode & 0o777) == oct(0o644)
    digest = __import__("hashlib").sha256(dictionary).hexdigest()
    assert f"SHA-256 {digest}" in proc.stdout
    assert "200 files (0 identical to another" in proc.stdout
    assert "trained on 160" in proc.stdout and "40 held back" in proc.stdout

    rows = report(proc.stdout)
    assert set(rows) == {"identity", "zstd-3", "br-11", "dcz-3", "dcz-19"}
    assert rows["dcz-3"][0] < rows["zstd-3"][0] * 0.8
    assert rows["dcz-19"][0] < rows["dcz-3"][0]
    assert rows["zstd-3"][1] == 1.0 and rows["br-11"][2] == 1.0
    # The held-back files, each with its sizes; identity is the file's size.
    held = re.findall(r"^held back: (\S+) identity (\d+) zstd-3 (\d+) br-11 (\d+) dcz-3 (\d+) "
                      r"dcz-19 (\d+)$", proc.stdout, re.M)
    assert len(held) == 40
    assert sum(int(h[1]) for h in held) == rows["identity"][0]
    for path, identity, _, _, dcz3, _ in held:
        assert int(identity) == Path(path).stat().st_size
        # dcz-3 is the 40-byte header and a frame against the dictionary as raw content.
        data = Path(path).read_bytes()
        d = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        frame = zstandard.ZstdCompressor(level=3, dict_data=d, write_dict_id=False).compress(data)
        assert abs(int(dcz3) - (40 + len(frame))) <= max(16, len(frame) // 20)


def test_same_input_same_dictionary(tmp_path):
    site = make_site(tmp_path / "site")
    run("--train-dictionary", tmp_path / "a.dict", "--dictionary-size", "8k", site)
    # Other argument order, other names for the same files, other job count: the same bytes.
    (tmp_path / "link").symlink_to(site)
    run("--train-dictionary", tmp_path / "b.dict", "--dictionary-size=8k", "--jobs", "1",
        tmp_path / "link" / "d3", tmp_path / "link" / "d0", tmp_path / "link" / "d2",
        tmp_path / "link" / "d1")
    assert (tmp_path / "a.dict").read_bytes() == (tmp_path / "b.dict").read_bytes()


def test_copies_count_once_and_ssi_pages_stay_out(tmp_path):
    site = make_site(tmp_path / "site")
    for i in range(40):  # identical copies, and SSI pages whose template holds a secret
        (site / "copies").mkdir(exist_ok=True)
        (site / "copies" / f"c{i}.html").write_bytes((site / "d0" / "page0.html").read_bytes())
        ssi = site / "ssi" / f"s{i}.html"
        ssi.parent.mkdir(exist_ok=True)
        ssi.write_text(f'<!--#set var="pw" value="{SECRET}" -->\n' + page(random.Random(i), i))
        os.chmod(ssi, 0o744)  # XBitHack
    proc = run("--train-dictionary", tmp_path / "out.dict", "--dictionary-size", "8k", site)
    assert "240 files (40 identical to another" in proc.stdout
    assert "40 skipped as SSI" in proc.stdout
    assert SECRET.encode() not in (tmp_path / "out.dict").read_bytes()
    run("--train-dictionary", tmp_path / "ssi.dict", "--dictionary-size", "8k", "--include-ssi",
        site)
    assert SECRET.encode() in (tmp_path / "ssi.dict").read_bytes()  # it would be, otherwise


def test_the_output_is_never_input(tmp_path):
    site = make_site(tmp_path / "site")
    out = site / "d0" / "site.txt"  # a selected type, inside the tree
    run("--train-dictionary", out, "--dictionary-size", "8k", site)
    first = out.read_bytes()
    proc = run("--train-dictionary", out, "--dictionary-size", "8k", site)
    assert "200 files" in proc.stdout
    assert out.read_bytes() == first


def test_no_holdout_no_report(tmp_path):
    site = make_site(tmp_path / "site")
    proc = run("--train-dictionary", tmp_path / "out.dict", "--holdout", "0", site)
    assert "trained on 200" in proc.stdout and report(proc.stdout) == {}
    assert (tmp_path / "out.dict").stat().st_size <= 65536


def test_too_little_input_and_bad_options(tmp_path):
    site = make_site(tmp_path / "site", n=3)
    proc = run("--train-dictionary", tmp_path / "out.dict", site, check_rc=1)
    assert "could not train" in proc.stderr
    assert not (tmp_path / "out.dict").exists()
    for args, message in [
        (["--dictionary-size", "100"], "--dictionary-size must be"),
        (["--holdout", "95%"], "--holdout must be"),
        (["--dry-run"], "--dry-run and --force do not apply"),
    ]:
        proc = run("--train-dictionary", tmp_path / "x.dict", *args, site, check_rc=2)
        assert message in proc.stderr
