# SPDX-License-Identifier: Apache-2.0
"""multicompress-precompress and files httpd runs through SSI (mod_include): `.shtml`, `.stm`,
`.shtm`, and `.html`/`.htm` with the owner-execute bit (XBitHack). A sidecar of such a file would
be the unprocessed template, `<!--#set var="dbpass" ...-->` included, sent instead of the page.
"""
import os
from pathlib import Path

from pc_util import SIDE, parse_summary, run, snapshot

TEMPLATE = ('<!--#set var="dbpass" value="s3cret" -->\n<html><body>\n'
            + "<p>Hello <!--#echo var=\"REMOTE_USER\" -->, the page body is long enough.</p>\n" * 40
            + "</body></html>\n")


def make_site(root: Path) -> Path:
    root.mkdir(parents=True)
    for name in ("page.shtml", "old.stm", "other.SHTM", "xbit.html", "xbit.htm", "plain.html"):
        (root / name).write_text(TEMPLATE)
    for name in ("xbit.html", "xbit.htm"):
        os.chmod(root / name, 0o744)  # XBitHack: the owner-execute bit
    return root


def sidecars_of(root: Path, name: str):
    return [Path(str(root / name) + s) for s in SIDE.values() if Path(str(root / name) + s).exists()]


def test_ssi_files_get_no_sidecar_and_are_counted(tmp_path):
    site = make_site(tmp_path / "site")
    proc = run("--types", "+shtml,stm,shtm", site)
    for name in ("page.shtml", "old.stm", "other.SHTM", "xbit.html", "xbit.htm"):
        assert sidecars_of(site, name) == [], name
    assert len(sidecars_of(site, "plain.html")) == 3  # the same bytes without the x bit
    s = parse_summary(proc.stdout)
    assert s["ssi"] == 5
    assert s["selected"] == 1
    assert "skipped (SSI)" not in proc.stdout  # listed only with --verbose or --dry-run


def test_ssi_files_are_listed_with_verbose_and_dry_run(tmp_path):
    site = make_site(tmp_path / "site")
    before = snapshot(site)
    dry = run("--dry-run", site)
    assert snapshot(site) == before
    assert f"skipped (SSI): {site / 'xbit.html'}" in dry.stdout
    assert f"skipped (SSI): {site / 'xbit.htm'}" in dry.stdout
    assert parse_summary(dry.stdout)["ssi"] == 2  # .shtml and friends are not selected types
    verbose = run("--verbose", "--types", "+shtml", site)
    assert f"skipped (SSI): {site / 'page.shtml'}" in verbose.stdout
    assert f"skipped (SSI): {site / 'xbit.html'}" in verbose.stdout


def test_include_ssi_compresses_them(tmp_path):
    site = make_site(tmp_path / "site")
    proc = run("--include-ssi", "--types", "+shtml", site)
    assert len(sidecars_of(site, "page.shtml")) == 3
    assert len(sidecars_of(site, "xbit.html")) == 3
    assert parse_summary(proc.stdout)["ssi"] == 0


def test_a_file_root_that_is_ssi_is_skipped(tmp_path):
    site = make_site(tmp_path / "site")
    proc = run(site / "page.shtml")
    assert sidecars_of(site, "page.shtml") == []
    assert parse_summary(proc.stdout)["ssi"] == 1


def test_symlink_to_an_executable_page_is_ssi(tmp_path):
    site = make_site(tmp_path / "site")
    (site / "link.html").symlink_to("xbit.html")
    run(site)
    assert sidecars_of(site, "link.html") == []


def test_sidecars_of_ssi_files_are_removed(tmp_path):
    """Written by an earlier run (or by hand) before the page became SSI: fresh or not, they go."""
    site = make_site(tmp_path / "site")
    os.chmod(site / "xbit.html", 0o644)
    run(site)
    assert len(sidecars_of(site, "xbit.html")) == 3
    os.chmod(site / "xbit.html", 0o744)  # now XBitHack runs it through mod_include
    dry = run("--dry-run", site)
    assert len(sidecars_of(site, "xbit.html")) == 3
    assert f"would remove sidecar of an SSI file {site / 'xbit.html.br'}" in dry.stdout
    proc = run("--verbose", site)
    assert sidecars_of(site, "xbit.html") == []
    assert f"removed sidecar of an SSI file {site / 'xbit.html.gz'}" in proc.stdout
    assert "sidecars of SSI files removed: 3" in proc.stdout
    assert len(sidecars_of(site, "plain.html")) == 3
