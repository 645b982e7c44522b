# SPDX-License-Identifier: Apache-2.0
"""pytest fixtures: the environment, the main test server (event MPM, started once), a
factory for servers a test starts itself, and the error_log check after every test."""
from __future__ import annotations

import os
import re
import shutil

import pytest

from mc_env import McEnv
from mc_process import process_alive
from mc_server import CRASH_PATTERNS, HttpdServer, LogCheck, start_main
from mc_stores import StoreProcess


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "log_allow(*patterns): error_log lines ([warn] or worse) the test expects")


@pytest.fixture(scope="session")
def env() -> McEnv:
    e = McEnv(McEnv.locate_ini())
    for path in (e.module_path, e.mctest_path):
        if path is None or not path.exists():
            pytest.fail(f"module not built: {path} (config {e.ini_path})", pytrace=False)
    # Each pytest process renders into gen/run-<pid>/; directories of processes that are gone
    # are removed (a concurrent run with the same build tree keeps its own).
    if e.gen_dir.exists():
        for old in e.gen_dir.glob("run-*"):
            pid = old.name[4:]
            if pid.isdigit() and not process_alive(int(pid)):
                shutil.rmtree(old, ignore_errors=True)
    e.gen_dir = e.gen_dir / f"run-{os.getpid()}"
    return e


@pytest.fixture(scope="session")
def main(env):
    """The main test server: main.conf.template under the event MPM."""
    srv = start_main(env, "event", "main")
    yield srv
    srv.stop()
    # what the per-test checks have not seen: shutdown
    lines = srv.log_lines(getattr(srv, "checked_upto", 0))
    crashes = [l for l in lines if any(p.search(l) for p in CRASH_PATTERNS)]
    assert not crashes, crashes


@pytest.fixture(scope="module")
def memcache_store():
    """A memcached of the test module's own, stopped by PID when its tests end."""
    s = StoreProcess("memcache").start()
    yield s
    s.cleanup()


@pytest.fixture
def make_server(env):
    """Creates servers that are stopped when the test ends, passed or failed."""
    servers: list[HttpdServer] = []

    def make(name: str, **kw) -> HttpdServer:
        srv = HttpdServer(env, name, **kw)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()


@pytest.fixture
def log_allow(request) -> list[str]:
    """Patterns a test appends to when it expects [warn]/[error] lines."""
    return request.node.mc_allow


def _allow_patterns(item) -> list[re.Pattern]:
    pats = [p for m in item.iter_markers("log_allow") for p in m.args]
    pats.extend(getattr(item, "mc_allow", []))
    return [re.compile(p) for p in pats]


def _scan(item, marks: dict[int, int]) -> tuple[list[str], dict[int, int]]:
    allow = _allow_patterns(item)
    problems, ends = [], {}
    for srv in HttpdServer.registry:
        size = srv.log_size()
        ends[id(srv)] = size
        srv.checked_upto = size
        if not srv.log_check:
            continue
        check = LogCheck.of(srv, allow)
        lines = srv.log_lines(marks.get(id(srv), 0))
        problems.extend(f"{srv.name} ({srv.error_log}): {l}" for l in check.problems(lines))
    return problems, ends


def pytest_sessionfinish(session, exitstatus):
    # Safety net (e.g. after Ctrl-C): no server outlives the session.
    for srv in HttpdServer.registry:
        srv.stop()


def pytest_runtest_setup(item):
    item.mc_allow = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    # error_log lines the test produced make the test fail (not just error at teardown).
    marks = {id(s): s.log_size() for s in HttpdServer.registry}
    outcome = yield
    problems, ends = _scan(item, marks)
    item.mc_marks = ends
    if problems and outcome.excinfo is None:
        pytest.fail("unexpected error_log lines:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture(autouse=True)
def _error_log_after(request):
    """Lines written after the test body (e.g. while its servers stop) fail at teardown."""
    yield
    marks = getattr(request.node, "mc_marks", None)
    if marks is None:
        return
    # Autouse fixtures are set up first, so make_server's servers are stopped by now.
    problems, _ = _scan(request.node, marks)
    if problems:
        pytest.fail("unexpected error_log lines after the test:\n" + "\n".join(problems),
                    pytrace=False)
