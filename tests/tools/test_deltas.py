# SPDX-License-Identifier: Apache-2.0
"""multicompress-precompress's dcz delta sidecars: for every file of a family of content-hashed
names (`app.HASH.js`, `index-HASH.js`), FILE.dcz-<first 16 hex of the dictionary's SHA-256>
against the N most recent other members, each a complete dcz body (RFC 9842 §4)."""
import hashlib
import os
import random
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import zstandard

from pc_util import SIDE, parse_summary, run, snapshot

DCZ_MAGIC = bytes([0x5E, 0x2A, 0x4D, 0x18, 0x20, 0x00, 0x00, 0x00])
DELTA = re.compile(r"\.dcz-[0-9a-f]{16}$")


def bundle(version: int, n: int = 60000) -> bytes:
    """A minified bundle; each release changes a few constants."""
    rng = random.Random(42)
    out, i = [], 0
    while sum(map(len, out)) < n:
        k = rng.randint(0, 9999)
        if i % 97 == version % 97:
            k += version
        out.append(f"function f{i}(a,b){{return a*{k}+b.x{i % 13};}}")
        i += 1
    return "".join(out).encode()


def make_family(root: Path, versions, pattern="app.{}.js", base_mtime=1_700_000_000) -> list:
    """Writes each version under its content hash; older versions get older mtimes."""
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for age, data in enumerate(versions):
        h = hashlib.sha256(data).hexdigest()[:20]
        p = root / pattern.format(h)
        p.write_bytes(data)
        os.utime(p, (base_mtime + age * 100, base_mtime + age * 100))
        paths.append(p)
    return paths


def deltas(root: Path):
    return sorted(p for p in root.rglob("*") if DELTA.search(p.name))


def deltas_of(path: Path):
    return sorted(p for p in path.parent.iterdir() if p.name.startswith(path.name + ".dcz-"))


def check_delta(delta: Path, source: Path, dictionary: Path):
    """A complete dcz body: header with the dictionary's hash, a frame that decodes against it
    (raw content) within the window a client accepts, FILE's mtime, no execute bit."""
    dict_bytes = dictionary.read_bytes()
    digest = hashlib.sha256(dict_bytes).digest()
    assert delta.name == source.name + ".dcz-" + digest.hex()[:16]
    body = delta.read_bytes()
    assert body[:8] == DCZ_MAGIC and body[8:40] == digest
    frame = body[40:]
    max_window = max(8 << 20, len(dict_bytes) * 5 // 4)
    assert zstandard.get_frame_parameters(frame).window_size <= max_window
    d = zstandard.ZstdCompressionDict(dict_bytes, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    out = zstandard.ZstdDecompressor(dict_data=d, max_window_size=max_window).decompress(frame)
    assert out == source.read_bytes()
    assert delta.stat().st_mtime_ns == source.stat().st_mtime_ns
    assert delta.stat().st_mode & 0o777 == source.stat().st_mode & 0o666
    return len(body)


def test_each_member_gets_deltas_against_the_n_most_recent_others(tmp_path):
    site = tmp_path / "site"
    v = make_family(site / "assets", [bundle(i) for i in range(5)])  # v[4] is the newest
    other = make_family(site / "assets", [bundle(i) for i in range(2)], "index-{}.js")
    (site / "assets" / "plain.js").write_bytes(bundle(9))
    proc = run("--verbose", site)
    newest = v[4]
    for f in v:
        # The 3 most recent others, by mtime.
        others = [m for m in reversed(v) if m != f][:3]
        assert [p.name for p in deltas_of(f)] == sorted(
            f.name + ".dcz-" + hashlib.sha256(m.read_bytes()).hexdigest()[:16] for m in others)
        for m in others:
            d = Path(str(f) + ".dcz-" + hashlib.sha256(m.read_bytes()).hexdigest()[:16])
            size = check_delta(d, f, m)
            assert size < min(Path(str(f) + s).stat().st_size for s in SIDE.values())
    # Another family (another separator and stem) is its own: one delta each way.
    assert len(deltas_of(other[0])) == 1 and len(deltas_of(other[1])) == 1
    assert deltas_of(site / "assets" / "plain.js") == []
    # Sidecars and deltas are never compressed themselves.
    assert not [p for p in site.rglob("*") if ".dcz-" in p.name and p.suffix in SIDE.values()]
    s = parse_summary(proc.stdout)
    assert s["encodings"]["dcz"]["written"] == 5 * 3 + 2
    assert f"wrote {newest}.dcz-" in proc.stdout


def test_second_run_keeps_fresh_deltas_and_touching_rewrites(tmp_path):
    v = make_family(tmp_path / "a", [bundle(i) for i in range(3)])
    run(tmp_path)
    before = snapshot(tmp_path)
    s = parse_summary(run(tmp_path).stdout)
    assert snapshot(tmp_path) == before
    assert s["encodings"]["dcz"]["fresh"] == 6 and s["encodings"]["dcz"]["written"] == 0
    os.utime(v[0], (1_800_000_000, 1_800_000_000))  # now the newest: its deltas are stale
    s = parse_summary(run(tmp_path).stdout)
    assert s["encodings"]["dcz"]["written"] == 2  # v[0] against v[1] and v[2]
    for d in deltas_of(v[0]):
        assert d.stat().st_mtime_ns == v[0].stat().st_mtime_ns


def test_fewer_deltas_and_removed_dictionaries_remove_stale_ones(tmp_path):
    v = make_family(tmp_path / "a", [bundle(i) for i in range(4)])
    run(tmp_path)
    assert len(deltas(tmp_path)) == 12
    proc = run("--deltas", "1", "--verbose", tmp_path)
    assert len(deltas(tmp_path)) == 4  # each file against the most recent other
    assert "removed stale" in proc.stdout
    newest_hash = hashlib.sha256(v[3].read_bytes()).hexdigest()[:16]
    assert deltas_of(v[0])[0].name.endswith(newest_hash)
    v[3].unlink()  # a deploy removed the newest: deltas against it are orphans
    run("--deltas", "1", tmp_path)
    assert not [d for f in v[:3] for d in deltas_of(f) if d.name.endswith(newest_hash)]
    assert [len(deltas_of(f)) for f in v[:3]] == [1, 1, 1]
    # Like its other sidecars, the deltas of the deleted file itself are left alone.
    assert len(deltas_of(v[3])) == 1
    # --deltas 0 makes none and leaves existing ones alone.
    before = snapshot(tmp_path)
    run("--deltas", "0", tmp_path)
    assert snapshot(tmp_path) == before


def test_delta_only_when_smaller_than_the_sidecars(tmp_path):
    """Unrelated 'versions' (no letter in common) give a delta no smaller than br-11."""
    def text(alphabet, seed):
        r = random.Random(seed)
        return " ".join("".join(r.choice(alphabet) for _ in range(r.randint(3, 8)))
                        for _ in range(8000)).encode()
    v = make_family(tmp_path / "a", [text("abcdefghij", 1), text("klmnopqrst", 2)])
    proc = run("--verbose", tmp_path)
    assert deltas(tmp_path) == []
    assert parse_summary(proc.stdout)["encodings"]["dcz"]["not_smaller"] == 2
    assert f"not smaller: {v[0]}.dcz-" in proc.stdout


def test_dry_run_lists_deltas_and_writes_nothing(tmp_path):
    v = make_family(tmp_path / "a", [bundle(i) for i in range(2)])
    before = snapshot(tmp_path)
    proc = run("--dry-run", tmp_path)
    assert snapshot(tmp_path) == before
    h0 = hashlib.sha256(v[0].read_bytes()).hexdigest()[:16]
    assert f"would write {v[1]}.dcz-{h0} (against {v[0].name})" in proc.stdout
    assert parse_summary(proc.stdout)["encodings"]["dcz"]["written"] == 2  # "to write"


def test_deltas_are_not_family_members(tmp_path):
    """A delta sidecar or ordinary sidecar never becomes a dictionary or gets deltas itself."""
    v = make_family(tmp_path / "a", [bundle(i) for i in range(2)])
    run("--types", "+zst,dcz", tmp_path, check_rc=2)  # sidecar extensions are refused as types
    run(tmp_path)
    run(tmp_path)
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(names) == 2 + 2 * 3 + 2, names
    assert all(".dcz-" not in n or DELTA.search(n) for n in names)
    assert v[0].name + ".dcz-" + hashlib.sha256(v[1].read_bytes()).hexdigest()[:16] in names


# ---- real releases from npm, against the zstd CLI

RELEASES = [  # (package@old, package@new, file in the tarball)
    ("jquery@3.7.0", "jquery@3.7.1", "package/dist/jquery.min.js"),
    ("bootstrap@5.3.2", "bootstrap@5.3.3", "package/dist/css/bootstrap.min.css"),
]


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """`npm pack` of each release (as bench/corpus.py does); the file from the tarball."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm not installed (apt-get install npm): the test packs real releases")
    cache = tmp_path_factory.mktemp("npm")
    out = {}
    for old, new, member in RELEASES:
        for spec in (old, new):
            p = subprocess.run([npm, "pack", "--silent", "--pack-destination", str(cache), spec],
                               capture_output=True, text=True, timeout=180)
            assert p.returncode == 0, f"npm pack {spec}: {p.stderr}"
            with tarfile.open(cache / p.stdout.strip().splitlines()[-1]) as tar:
                out[spec] = tar.extractfile(member).read()
    return out


def cli_patch_from(tmp_path, old: bytes, new: bytes, level: int, *flags) -> bytes:
    (tmp_path / "old").write_bytes(old)
    (tmp_path / "new").write_bytes(new)
    p = subprocess.run(["zstd", "-q", f"-{level}", *flags, f"--patch-from={tmp_path / 'old'}",
                        "-c", str(tmp_path / "new")], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("level", [3, 19])
def test_real_releases_no_larger_than_zstd_patch_from(tmp_path, releases, level):
    for old_spec, new_spec, member in RELEASES:
        old, new = releases[old_spec], releases[new_spec]
        ext = ".min.js" if member.endswith(".js") else ".min.css"
        site = tmp_path / old_spec.split("@")[0]
        v = make_family(site, [old, new], "app.{}" + ext)
        run("--levels", f"dcz={level}", site)
        digest = hashlib.sha256(old).hexdigest()[:16]
        delta = Path(f"{v[1]}.dcz-{digest}")
        size = check_delta(delta, v[1], v[0])
        cli = len(cli_patch_from(tmp_path, old, new, level))
        cli_no_check = len(cli_patch_from(tmp_path, old, new, level, "--no-check"))
        # The frame after the 40-byte header against `zstd --patch-from` at the same level.
        assert size - 40 <= cli_no_check <= cli, (new_spec, level, size, cli_no_check, cli)
        # The zstd CLI decodes it as it is (the dcz header is a skippable frame).
        p = subprocess.run(["zstd", "-q", "-d", f"--patch-from={v[0]}", "-c", str(delta)],
                           capture_output=True, timeout=60)
        assert p.returncode == 0 and p.stdout == new
        if new_spec == "jquery@3.7.1" and level == 3:
            assert size <= 372  # zstd's raw-content dictionary API: 332 + the header


def test_delta_options(tmp_path):
    make_family(tmp_path / "a", [bundle(i) for i in range(2)])
    assert "see --deltas" in run("--encodings", "dcz", tmp_path, check_rc=2).stderr
    assert "--deltas must be 0..64" in run("--deltas", "65", tmp_path, check_rc=2).stderr
    assert "dcz level must be 1..19" in run("--levels", "dcz=20", tmp_path, check_rc=2).stderr
