# SPDX-License-Identifier: Apache-2.0
"""Processes and ports for the integration harness: the environment apache2 runs with, free
ports on 127.0.0.1, and stopping, waiting for and measuring processes by PID (/proc)."""
from __future__ import annotations

import os
import pwd
import re
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterable


def clean_env() -> dict[str, str]:
    """The environment for apache2: nothing from /etc/apache2/envvars is needed with -f."""
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "LANG": "C"}
    for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    return env

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a daemon's parent may not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


def wait_gone(pids: Iterable[int], timeout: float) -> bool:
    pids = list(pids)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(process_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return not any(process_alive(p) for p in pids)


def stop_process(proc: "subprocess.Popen | None", timeout: float = 10) -> None:
    """SIGTERM by PID, then SIGKILL after `timeout` s; reaps the process (a helper server a
    test started: memcached, redis, prometheus, a backend)."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def children_of(pid: int) -> list[int]:
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            kids.append(int(d))
    return kids


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wait_cgid_socket(srv, deadline: float) -> None:
    """Waits until mod_cgid's daemon of the started HttpdServer `srv` has given its socket
    (ScriptSock plus the parent's PID) to User. The daemon binds and listens with mode 0700 and
    chowns the socket only after that (modules/generators/mod_cgid.c): a CGI request in between
    fails with EACCES, which mod_cgid does not retry (503, "unable to connect to cgi daemon after
    multiple tries"). Nothing to wait for without a User (not root), or our ScriptSock."""
    conf = srv.conf_path.read_text()
    user = re.search(r"^User (\S+)$", conf, re.M)
    if srv.mpm == "prefork" or not srv.pid or user is None or \
            f'ScriptSock "{srv.cgid_sock}"' not in conf:
        return
    uid = pwd.getpwnam(user.group(1)).pw_uid
    sock = Path(f"{srv.cgid_sock}.{srv.pid}")
    while time.monotonic() < deadline:
        try:
            if sock.stat().st_uid == uid:
                return
        except OSError:
            pass
        time.sleep(0.02)
