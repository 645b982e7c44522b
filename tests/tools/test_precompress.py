# SPDX-License-Identifier: Apache-2.0
"""Integration tests of multicompress-precompress: the real binary on sample trees.

The binary comes from $MC_PRECOMPRESS (CTest sets it to the built target):
    MC_PRECOMPRESS=build/mod_multicompress/tools/multicompress-precompress \
        /usr/bin/python3 -m pytest -q tests/tools
"""
import os
import pty
import random
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import zstandard

from pc_util import (COMPRESSIBLE, IMAGE, MAX_ZSTD_WINDOW, NOISE, SIDE, TINY, binary, decode,
                     make_tree, no_temp_files, parse_summary, run, sidecars, snapshot,
                     words_text)

@pytest.fixture
def tree(tmp_path):
    return make_tree(tmp_path / "htdocs")


# ---- what a run writes


def test_sidecars_decode_to_the_source(tree):
    proc = run(tree)
    assert proc.stderr == ""
    for name in COMPRESSIBLE:
        src = tree / name
        st = src.stat()
        for coding, suffix in SIDE.items():
            side = Path(str(src) + suffix)
            assert side.is_file(), f"missing {side}"
            data = side.read_bytes()
            assert len(data) < st.st_size
            assert decode(coding, data) == src.read_bytes(), f"{side} does not decode to {src}"
            # Fresh for MultiCompressStatic: mtime(sidecar) >= mtime(source); we make it equal.
            assert side.stat().st_mtime_ns == st.st_mtime_ns
            assert side.stat().st_mode & 0o777 == st.st_mode & 0o666
    assert no_temp_files(tree)

    s = parse_summary(proc.stdout)
    assert s["selected"] == len(COMPRESSIBLE) + 2  # + tiny + noise; the png is not selected
    assert s["scanned"] == len(COMPRESSIBLE) + 3
    assert (s["compressed"], s["fresh"], s["not_smaller"], s["too_small"], s["failed"]) == \
        (len(COMPRESSIBLE), 0, 1, 1, 0)
    for coding in SIDE:
        row = s["encodings"][coding]
        assert (row["written"], row["fresh"], row["not_smaller"], row["failed"]) == \
            (len(COMPRESSIBLE), 0, 1, 0)
        assert row["ratio"].endswith("%") and float(row["ratio"][:-1]) < 60


def test_skipped_files_get_no_sidecar(tree):
    run(tree)
    for name in (IMAGE, TINY, NOISE):
        for suffix in SIDE.values():
            assert not Path(str(tree / name) + suffix).exists(), f"{name}{suffix} was written"
    # Sidecars are never compressed again (no FILE.gz.br and the like).
    assert not [p for p in sidecars(tree) if p.with_suffix("").suffix in SIDE.values()]


def test_levels_are_the_strongest_by_default(tree):
    run(tree)
    # gzip's XFL byte is 2 for the slowest level (9), 4 for the fastest (1); RFC 1952 §2.3.1.
    assert (tree / "js/app.js.gz").read_bytes()[8] == 2
    run("--force", "--encodings", "gzip", "--levels", "gzip=1", tree)
    assert (tree / "js/app.js.gz").read_bytes()[8] == 4


def test_zstd_window_at_most_8_mib(tmp_path):
    # 10 MiB of text whose repeats sit further apart than 8 MiB can reach, and a small file.
    root = tmp_path / "big"
    root.mkdir()
    rng = random.Random(23)
    block = words_text(rng, 600 * 1024)
    (root / "big.txt").write_text((block * 18)[: 10 * 1024 * 1024])
    (root / "small.css").write_text(words_text(rng, 3000))
    run("--encodings", "zstd", root)
    for name, expect_max in (("big.txt", MAX_ZSTD_WINDOW), ("small.css", 4096)):
        data = (root / (name + ".zst")).read_bytes()
        params = zstandard.get_frame_parameters(data)
        assert 0 < params.window_size <= expect_max, (name, params.window_size)
        assert decode("zstd", data) == (root / name).read_bytes()


# ---- freshness


def test_second_run_is_idempotent(tree):
    first = parse_summary(run(tree).stdout)
    before = snapshot(tree)
    proc = run(tree)
    assert snapshot(tree) == before, "the second run changed files"
    s = parse_summary(proc.stdout)
    assert (s["compressed"], s["fresh"], s["failed"]) == (0, len(COMPRESSIBLE), 0)
    for coding in SIDE:
        assert s["encodings"][coding]["written"] == 0
        assert s["encodings"][coding]["fresh"] == len(COMPRESSIBLE)
        # The sizes cover the sidecars present, so both runs report the same ones.
        for column in ("original", "sidecars", "ratio"):
            assert s["encodings"][coding][column] == first["encodings"][coding][column]


def test_touched_source_is_recompressed(tree):
    run(tree)
    before = snapshot(tree)
    app = tree / "js/app.js"
    app.write_text(app.read_text() + "function added() { return 42; }\n")
    later = app.stat().st_mtime_ns + 5_000_000_000
    os.utime(app, ns=(later, later))

    proc = run("--verbose", tree)
    s = parse_summary(proc.stdout)
    assert (s["compressed"], s["fresh"]) == (1, len(COMPRESSIBLE) - 1)
    after = snapshot(tree)
    for coding, suffix in SIDE.items():
        side = Path(str(app) + suffix)
        assert after[side] != before[side]
        assert side.stat().st_mtime_ns == later
        assert decode(coding, side.read_bytes()) == app.read_bytes()
        assert f"wrote {side} " in proc.stdout
    untouched = {p: v for p, v in after.items() if not str(p).startswith(str(app))}
    assert untouched == {p: v for p, v in before.items() if not str(p).startswith(str(app))}


def test_only_touching_mtime_is_enough(tree):
    run(tree)
    css = tree / "css/site.css"
    os.utime(css, ns=(css.stat().st_atime_ns, css.stat().st_mtime_ns + 1))
    s = parse_summary(run(tree).stdout)
    assert s["compressed"] == 1
    assert Path(str(css) + ".br").stat().st_mtime_ns == css.stat().st_mtime_ns


def test_not_smaller_removes_a_stale_sidecar(tree):
    old = time.time_ns() - 3600 * 10**9
    noise = tree / NOISE
    for suffix in SIDE.values():
        stale = Path(str(noise) + suffix)
        stale.write_bytes(b"stale")
        os.utime(stale, ns=(old, old))
    proc = run(tree)
    for suffix in SIDE.values():
        assert not Path(str(noise) + suffix).exists()
    assert "stale sidecars removed: 3" in proc.stdout


def test_force_rewrites_fresh_sidecars(tree):
    run(tree)
    before = snapshot(tree)
    s = parse_summary(run("--force", tree).stdout)
    assert s["compressed"] == len(COMPRESSIBLE)
    side = tree / "index.html.br"
    assert snapshot(tree)[side][0] != before[side][0]  # a new file, renamed into place


def test_dry_run_writes_nothing(tree):
    before = snapshot(tree)
    proc = run("--dry-run", tree)
    assert snapshot(tree) == before
    assert f"would write {tree / 'index.html.zst'}" in proc.stdout
    # Without compressing, the noise file cannot be known not to shrink: it is planned too.
    assert parse_summary(proc.stdout)["compressed"] == len(COMPRESSIBLE) + 1


# ---- options


def test_encodings_and_types(tree):
    run("--encodings", "br", "--types", "css,.SVG", tree)
    assert sorted(p.relative_to(tree).as_posix() for p in sidecars(tree)) == \
        ["css/site.css.br", "img/logo.svg.br"]


def test_types_can_extend_the_defaults(tree):
    (tree / "notes.rst").write_text(words_text(random.Random(1), 4000))
    run("--encodings", "gzip", "--types", "+rst", tree)
    assert (tree / "notes.rst.gz").exists() and (tree / "index.html.gz").exists()


def test_min_size(tree):
    (tree / TINY).write_text("x" * 300)
    run("--min-size", "0", tree)
    assert (tree / (TINY + ".gz")).exists()
    # A sidecar that became stale while its source shrank below --min-size is removed.
    (tree / TINY).write_text("x" * 300 + "y")
    os.utime(tree / TINY, ns=(time.time_ns() + 10**9,) * 2)
    run("--min-size", "1k", tree)
    assert not (tree / (TINY + ".gz")).exists()


def test_jobs_give_identical_output(tmp_path):
    a = make_tree(tmp_path / "a")
    b = make_tree(tmp_path / "b")
    run("--jobs", "1", a)
    run("--jobs", "2", b)
    assert [p.relative_to(a) for p in sidecars(a)] == [p.relative_to(b) for p in sidecars(b)]
    for p in sidecars(a):
        assert p.read_bytes() == (b / p.relative_to(a)).read_bytes()


def test_symlinks(tree, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib.js").write_text(words_text(random.Random(2), 5000))
    (tree / "linked-dir").symlink_to(outside, target_is_directory=True)
    (tree / "linked.js").symlink_to(outside / "lib.js")
    run(tree)
    assert not list(outside.glob("*.gz")), "followed a symlinked directory"
    # A symlinked file is served under the link's name: its sidecar sits next to the link.
    assert decode("gzip", (tree / "linked.js.gz").read_bytes()) == (outside / "lib.js").read_bytes()


def test_several_roots_and_a_file_root(tree, tmp_path):
    other = make_tree(tmp_path / "other")
    s = parse_summary(run(tree, other, tree / "css", other / "js/app.js").stdout)
    assert s["compressed"] == 2 * len(COMPRESSIBLE)  # overlapping roots: each file once


# ---- errors


@pytest.mark.parametrize("args,message", [
    ([], "no directory given"),
    (["--encodings", "lz4", "{d}"], "unknown encoding 'lz4'"),
    (["--encodings", "deflate", "{d}"], "'deflate' has no sidecar"),
    (["--encodings", "", "{d}"], "at least one"),
    (["--levels", "br=12", "{d}"], "br level must be 0..11"),
    (["--levels", "zstd=0", "{d}"], "zstd level must be 1..19"),
    (["--levels", "gzip", "{d}"], "is not ENC=N"),
    (["--jobs", "0", "{d}"], "--jobs must be"),
    (["--jobs", "two", "{d}"], "--jobs must be"),
    (["--types", "gz", "{d}"], "sidecar extension"),
    (["--types", "a/b", "{d}"], "not a file name extension"),
    (["--min-size", "ten", "{d}"], "--min-size must be"),
    (["--frobnicate", "{d}"], "unknown option '--frobnicate'"),
    (["--jobs"], "needs a value"),
    (["--quiet=yes", "{d}"], "takes no value"),
    (["{d}/missing"], "missing: cannot access: No such file or directory"),
    (["{d}/index.html/sub"], "cannot access: Not a directory"),
    (["/dev/null"], "not a directory or regular file"),
])
def test_bad_arguments(tree, args, message):
    before = snapshot(tree)
    proc = run(*[a.format(d=tree) for a in args], check_rc=2)
    assert message in proc.stderr
    assert proc.stderr.startswith("multicompress-precompress: ")
    assert proc.stdout == ""
    assert snapshot(tree) == before


NOBODY = 65534


@pytest.fixture
def user_tree():
    """A sample tree and a command prefix that runs the tool without root's permission bypass:
    as root, the tree belongs to nobody and the tool runs as nobody (setpriv, util-linux)."""
    if os.geteuid() != 0:
        base = Path(tempfile.mkdtemp(prefix="mc-precompress-"))
        prefix = []
    else:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("running as root without setpriv to drop privileges")
        base = Path(tempfile.mkdtemp(prefix="mc-precompress-"))
        base.chmod(0o755)
        prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
        if subprocess.run([*prefix, binary(), "--version"], capture_output=True).returncode:
            shutil.rmtree(base)
            pytest.skip("user nobody cannot run the binary (a build directory under /root?)")
    tree = make_tree(base / "htdocs")
    if os.geteuid() == 0:
        for p in [tree, *tree.rglob("*")]:
            os.lchown(p, NOBODY, NOBODY)
    yield tree, prefix
    for p in [tree, *tree.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(base)


def test_unreadable_directory(user_tree):
    tree, prefix = user_tree
    (tree / "css").chmod(0)
    proc = run(tree / "css", check_rc=2, prefix=prefix)
    assert "css: cannot read directory: Permission denied" in proc.stderr
    assert proc.stdout == ""
    # A subdirectory: reported, counted, and the rest is done.
    proc = run(tree, check_rc=1, prefix=prefix)
    assert f"{tree / 'css'}: cannot read directory: Permission denied" in proc.stderr
    assert parse_summary(proc.stdout)["failed"] == 1
    assert (tree / "index.html.br").exists()


def test_unreadable_file_and_unwritable_directory(user_tree):
    tree, prefix = user_tree
    (tree / "css/site.css").chmod(0)
    (tree / "img").chmod(0o555)
    proc = run(tree, check_rc=1, prefix=prefix)
    assert f"{tree / 'css/site.css'}: cannot open: Permission denied" in proc.stderr
    assert f"{tree / 'img'}: cannot create a temporary file: Permission denied" in proc.stderr
    s = parse_summary(proc.stdout)
    assert (s["compressed"], s["failed"]) == (len(COMPRESSIBLE) - 2, 2)
    assert (tree / "js/app.js.zst").exists()
    assert no_temp_files(tree)


def test_per_file_errors_do_not_stop_the_run(tree):
    (tree / "js/app.js.gz").mkdir()  # a directory in the sidecar's place
    proc = run(tree, check_rc=1)
    assert "js/app.js.gz: exists and is not a regular file" in proc.stderr
    s = parse_summary(proc.stdout)
    assert (s["compressed"], s["failed"]) == (len(COMPRESSIBLE) - 1, 1)
    assert (tree / "js/app.js.br").exists() and (tree / "index.html.gz").exists()


def test_help():
    proc = run("--help")
    assert proc.stdout.startswith("Usage: multicompress-precompress")
    assert "--encodings" in proc.stdout and "--levels" in proc.stdout


# ---- terminal output


def test_no_progress_without_a_terminal(tree):
    proc = run(tree)
    assert proc.stderr == ""
    assert "\r" not in proc.stdout and "\x1b" not in proc.stdout


def run_on_pty(*args):
    """Runs the tool with stderr on a pseudo-terminal; returns (rc, stdout, tty bytes)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([binary(), *map(str, args)], stdout=subprocess.PIPE,
                                stderr=slave, stdin=subprocess.DEVNULL,
                                env=os.environ | {"TERM": "xterm"})
    finally:
        os.close(slave)
    tty = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        assert ready, "no output from the tool in 60 s"
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the slave side
            break
        if not chunk:
            break
        tty += chunk
    os.close(master)
    out = proc.stdout.read().decode()
    return proc.wait(timeout=60), out, bytes(tty)


def test_progress_bar_on_a_terminal(tree):
    rc, out, tty = run_on_pty(tree)
    assert rc == 0
    n = len(COMPRESSIBLE) + 1  # the noise file is tried too
    assert re.search(rb"\[[= >]*\]\s+\d+%\s+\d+/" + str(3 * n).encode() + rb" sidecars", tty), tty
    assert b"100%" in tty
    assert tty.endswith(b"\r\x1b[K"), "the bar is erased at the end"
    assert parse_summary(out)["compressed"] == len(COMPRESSIBLE)  # summary on stdout


@pytest.mark.parametrize("flag", ["--quiet", "--no-progress"])
def test_no_progress_bar_when_asked(tree, flag):
    rc, out, tty = run_on_pty(flag, tree)
    assert rc == 0 and tty == b""
    if flag == "--quiet":
        assert out == ""


# ---- interruption


def test_interrupt_leaves_no_temporary_files(tmp_path):
    root = tmp_path / "slow"
    root.mkdir()
    rng = random.Random(5)
    for i in range(4):
        (root / f"part{i}.txt").write_text(words_text(rng, 2 * 1024 * 1024))
    proc = subprocess.Popen([binary(), "--jobs", "1", "--encodings", "zstd,br", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Signal once a temporary file shows the work has begun (the handlers are installed by then).
    deadline = time.monotonic() + 60
    while no_temp_files(root) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal")
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert no_temp_files(root)
    for side in sidecars(root):  # whatever was finished is whole
        src = side.with_suffix("")
        assert decode({".zst": "zstd", ".br": "br"}[side.suffix], side.read_bytes()) == \
            src.read_bytes()
