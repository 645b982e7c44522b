# SPDX-License-Identifier: Apache-2.0
"""Debian's Chromium, headless, driven by playwright-core (tests/browser), for the browser tests
(test_460_browser.py, test_495_dictionary_browser.py, test_497_demo.py): the checks before a
run, each test's own output directory, one run of a tests/browser script with every Chromium
process stopped by PID afterwards, also on failure, and a HOME whose NSS database trusts a test
certificate (`trust_store`).

Needs: chromium (Debian package), node + npm; `npm ci` runs in tests/browser when its
node_modules is missing. MC_CHROMIUM overrides /usr/bin/chromium; MC_SKIP_BROWSER=1 skips.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from mc_env import McEnv
from mc_process import wait_gone
from mc_tls import repo_root

CHROMIUM = os.environ.get("MC_CHROMIUM", "/usr/bin/chromium")
CERTUTIL = "certutil"


def browser_dir(env: McEnv) -> Path:
    return repo_root(env) / "tests" / "browser"


def ensure_node_modules(env: McEnv) -> None:
    """`npm ci` from the committed package-lock.json when node_modules is missing (never a
    browser download: playwright-core has no install script, and it is told to skip)."""
    d = browser_dir(env)
    if (d / "node_modules" / "playwright-core" / "package.json").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm not installed (apt-get install nodejs npm)", pytrace=False)
    p = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=d, capture_output=True,
                       text=True, timeout=600, check=False,
                       env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
    if p.returncode != 0:
        pytest.fail(f"npm ci in {d} failed:\n{p.stdout}\n{p.stderr}", pytrace=False)


def require_browser(env: McEnv) -> None:
    """Skips under MC_SKIP_BROWSER=1; fails without Chromium; installs node_modules."""
    if os.environ.get("MC_SKIP_BROWSER") == "1":
        pytest.skip("MC_SKIP_BROWSER=1")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found (apt-get install chromium)", pytrace=False)
    ensure_node_modules(env)


def output_dir(env: McEnv, name: str) -> Path:
    """<build>/tests/integration/gen/browser-output/<name>/, emptied: one test's screenshots and
    report. Only this subdirectory is removed, never another test's."""
    out = env.gen_dir.parent / "browser-output" / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return out


def processes_using(marker: str) -> list[int]:
    """PIDs whose command line contains `marker` (our unique profile directory)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(d))
        except OSError:
            continue
    return pids


def run_script(env: McEnv, script: str, args: list[str], out: Path, profile: Path,
               timeout: float = 150) -> dict:
    """Runs `node tests/browser/<script> --out OUT --profile PROFILE --chromium CHROMIUM
    <args>` and returns its JSON report (also written to OUT/report.json, stderr to
    OUT/node-stderr.txt) with `_rc`, `_stderr` and `_left_over` (the PIDs of browser processes
    still using the profile after node ended, killed here). After `timeout` s node gets SIGTERM
    (playwright then closes the browser), 15 s later SIGKILL; whatever still uses the profile
    is killed by PID and the profile removed, whatever happened."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not installed (apt-get install nodejs npm)", pytrace=False)
    cmd = [node, str(browser_dir(env) / script), *args,
           "--out", str(out), "--profile", str(profile), "--chromium", CHROMIUM]
    proc = subprocess.Popen(cmd, cwd=browser_dir(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    left: list[int] = []
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)  # playwright closes the browser on SIGTERM
        try:
            stdout, stderr = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        pytest.fail(f"browser run exceeded {timeout}s:\n{stdout[-3000:]}\n{stderr[-3000:]}",
                    pytrace=False)
    finally:
        if proc.poll() is None:  # e.g. Ctrl-C in communicate()
            proc.kill()
            proc.wait()
        # No browser may outlive the run: whatever still uses our profile is ours.
        left = processes_using(str(profile))
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_gone(left, timeout=5)
        shutil.rmtree(profile, ignore_errors=True)
    (out / "report.json").write_text(stdout)
    (out / "node-stderr.txt").write_text(stderr)
    try:
        report = json.loads(stdout)
    except ValueError:
        pytest.fail(f"no JSON from {' '.join(cmd)} (rc={proc.returncode}):\n{stdout[-3000:]}\n"
                    f"{stderr[-3000:]}", pytrace=False)
    report["_rc"] = proc.returncode
    report["_stderr"] = stderr
    report["_left_over"] = left
    return report


def check_ran(report: dict) -> None:
    """The run as such: no error, node's exit status 0, a Chromium answered, no browser
    process outlived it, nothing unexpected in the server's error_log (`_log_problems`)."""
    assert "error" not in report, report["error"]
    assert report["_rc"] == 0, report["_stderr"][-3000:]
    assert report["chromiumVersion"].startswith(("Chrome/", "HeadlessChrome/")), report
    assert not report["_left_over"], \
        f"browser processes left after the run: {report['_left_over']}"
    assert not report["_log_problems"], report["_log_problems"]


def trust_store(home: Path, cert: Path) -> None:
    """$HOME/.pki/nssdb with `cert` trusted (what Chromium on Linux reads). The certificate is
    a self-signed leaf (CA:FALSE, mc_tls.make_cert): trusted as a peer, "P,,"; as a CA ("C,,")
    Chromium 156 rejects it with ERR_CERT_INVALID."""
    if shutil.which(CERTUTIL) is None:
        pytest.fail("certutil not installed (apt-get install libnss3-tools)", pytrace=False)
    db = home / ".pki" / "nssdb"
    db.mkdir(parents=True)
    for args in (["-N", "--empty-password"],
                 ["-A", "-t", "P,,", "-n", "mc-test", "-i", str(cert)]):
        p = subprocess.run([CERTUTIL, "-d", f"sql:{db}", *args], capture_output=True, text=True,
                           timeout=60, check=False)
        if p.returncode != 0:
            pytest.fail(f"certutil {' '.join(args)}: {p.stdout}{p.stderr}", pytrace=False)
