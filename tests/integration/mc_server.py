# SPDX-License-Identifier: Apache-2.0
"""One httpd instance for the integration tests (pyhttpd's httpd.py and log.py, written fresh).

- `HttpdServer` renders conf/*.template into a fresh directory, starts Debian's apache2 with
  `-k start` on a free 127.0.0.1 port, waits until it answers, stops it by the PID in its
  PidFile (SIGWINCH, graceful-stop as Debian's apache2.service stops it; then SIGTERM, then
  SIGKILL) and reads its error_log.
- `LogCheck` finds crash lines and unexpected [warn]/[error] lines in an error_log.
- `start_main` starts the main suite's site (main.conf.template).
"""
from __future__ import annotations

import hashlib
import http.client
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from mc_process import (children_of, clean_env, free_port, process_alive, wait_cgid_socket,
                        wait_gone)

if TYPE_CHECKING:
    from mc_env import McEnv

# Content types the test configurations attach the filters to.
TEXT_TYPES = ("text/html text/css text/javascript application/javascript application/json "
              "image/svg+xml text/plain")
MPMS = ("event", "worker", "prefork")


def _traversable_by_others(path: Path) -> bool:
    for p in [path, *path.parents]:
        if p.exists() and not (p.stat().st_mode & stat.S_IXOTH):
            return False
    return True


def _run_user() -> tuple[str, str] | None:
    """User/Group for the children when we run as root (httpd refuses to serve as root)."""
    if os.geteuid() != 0:
        return None
    for user in ("www-data", "daemon", "nobody"):
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            continue
        import grp
        return user, grp.getgrgid(pw.pw_gid).gr_name
    raise RuntimeError("no unprivileged user for httpd's children")


# ---------------------------------------------------------------------------------------------
# Error log checks (pyhttpd log.py)

CRASH_PATTERNS = [
    re.compile(p) for p in (
        r"child pid \d+ exit signal",
        r"Segmentation fault",
        r"AH00052",           # child pid N exit signal ...
        r"AH00060",           # seg fault or similar nasty error detected in the parent
        r"\[[\w.-]*:emerg\]",
        r"ERROR: AddressSanitizer",
        r"ERROR: LeakSanitizer",
        r"runtime error:",    # UBSan
        r"terminate called",  # a C++ exception escaped
    )
]
LEVEL_RE = re.compile(r"\[(?:[\w.-]+:)?(warn|error|crit|alert|emerg)\]")


GRACEFUL_STOP_SECONDS = 10  # a request left hanging: then SIGTERM

# Under ASan every child runs the leak check as it exits; with three pytest processes on two
# cores that can take more than the 3 s after which httpd's parent sends SIGTERM again and logs
# AH00045 (httpd's own HTTP/2 tests ignore that line everywhere). Only there it is allowed: a
# child that needs SIGKILL (AH00046) or is given up (AH00047) still fails the test.
SLOW_EXIT = re.compile(r"AH00045: child process \d+ still did not exit, sending a SIGTERM")


def asan_binary(apache_bin: Path) -> bool:
    """Whether httpd is started through tests/soak/asan_run.sh's ASan wrapper."""
    return "asan" in apache_bin.name


@dataclass
class LogCheck:
    """Crash lines are always fatal; [warn] and worse fail unless a pattern allows them."""
    allow: list[re.Pattern] = field(default_factory=list)

    @classmethod
    def of(cls, srv: "HttpdServer", allow: Iterable[re.Pattern] = ()) -> "LogCheck":
        """The check of `srv`'s error_log: `allow`, and SLOW_EXIT when it runs under ASan."""
        pats = list(allow)
        if asan_binary(srv.env.apache_bin):
            pats.append(SLOW_EXIT)
        return cls(pats)

    def problems(self, lines: Iterable[str]) -> list[str]:
        bad = []
        for line in lines:
            if any(p.search(line) for p in CRASH_PATTERNS):
                bad.append("CRASH: " + line)
            elif LEVEL_RE.search(line) and not any(p.search(line) for p in self.allow):
                bad.append(line)
        return bad


# ---------------------------------------------------------------------------------------------
# Server

class StartError(RuntimeError):
    pass


class HttpdServer:
    """One httpd instance in its own generated directory."""

    # Every server ever started in this process, for the per-test error_log check.
    registry: list["HttpdServer"] = []

    def __init__(self, env: McEnv, name: str, site_template: str | None = "main.conf.template",
                 mpm: str = "event", *, extra_conf: str = "", load_mc: bool = True,
                 extra_modules: Sequence[str] = (), log_level: str = "notice",
                 trace: bool = True, mpm_conf: str | None = None,
                 htdocs_copies: Sequence[tuple[str, str]] = ()):
        if mpm not in MPMS:
            raise ValueError(mpm)
        self.env = env
        self.name = name
        self.mpm = mpm
        self.site_template = site_template
        self.extra_conf = extra_conf
        self.load_mc = load_mc
        self.extra_modules = list(extra_modules)
        self.log_level = log_level
        self.trace = trace
        self.mpm_conf = mpm_conf
        self.htdocs_copies = list(htdocs_copies)
        self.port = 0
        self.gen: Path = Path()
        # False for a server that is meant to fail: its test reads the log itself.
        self.log_check = True
        self.running = False
        self.pid: int | None = None
        self.short_sock_dir: Path | None = None
        self.cgid_sock = Path()

    # ---- paths
    @property
    def conf_path(self) -> Path:
        return self.gen / "conf" / "httpd.conf"

    @property
    def htdocs(self) -> Path:
        return self.gen / "htdocs"

    @property
    def error_log(self) -> Path:
        return self.gen / "logs" / "error_log"

    @property
    def access_log(self) -> Path:
        return self.gen / "logs" / "access_log"

    @property
    def pid_file(self) -> Path:
        return self.gen / "run" / "httpd.pid"

    def _script_sock(self) -> Path:
        """mod_cgid's socket: in the server's run/ directory, unless that path is too long for
        a Unix socket (108 bytes with the ".PID" cgid appends; AH01254 otherwise): then in a
        short directory under /tmp named after the server directory, removed by stop()."""
        sock = self.gen / "run" / "cgid.sock"
        if len(str(sock)) <= 90:
            return sock
        digest = hashlib.sha1(str(self.gen).encode()).hexdigest()[:12]
        short = Path("/tmp") / f"mc-sock-{digest}"
        short.mkdir(mode=0o755, exist_ok=True)
        os.chmod(short, 0o755)
        self.short_sock_dir = short
        return short / "cgid.sock"

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    # ---- rendering
    def _new_gen_dir(self) -> Path:
        base = self.env.gen_dir
        if not _traversable_by_others(base.parent if not base.exists() else base) \
                and os.geteuid() == 0:
            base = Path(tempfile.gettempdir()) / "mc-integration"
        base.mkdir(parents=True, exist_ok=True)
        os.chmod(base, 0o755)
        gen = Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir=base))
        os.chmod(gen, 0o755)
        return gen

    def module_list(self) -> list[str]:
        mods = [f"mpm_{self.mpm}", "authz_core", "mime", "dir", "alias", "env", "setenvif",
                "headers", "filter", "include", "log_config"]
        mods.append("cgi" if self.mpm == "prefork" else "cgid")
        mods.extend(m for m in self.extra_modules if m not in mods)
        return mods

    def default_mpm_conf(self) -> str:
        if self.mpm == "prefork":
            return ("StartServers 2\nMinSpareServers 2\nMaxSpareServers 10\n"
                    "ServerLimit 64\nMaxRequestWorkers 64\n")
        return ("StartServers 2\nServerLimit 4\nThreadsPerChild 32\nMaxRequestWorkers 128\n"
                "MinSpareThreads 8\nMaxSpareThreads 128\n")

    def substitutions(self) -> dict[str, str]:
        cgi = (f'ScriptSock "{self.cgid_sock}"' if self.mpm != "prefork" else "")
        return {
            "GEN": str(self.gen),
            "HTDOCS": str(self.htdocs),
            "PORT": str(self.port),
            "TEXT_TYPES": TEXT_TYPES,
            "CGI_CONF": cgi,
        }

    def render_template(self, name: str, extra: dict[str, str] | None = None) -> str:
        return self.render_text((self.env.src_dir / "conf" / name).read_text(), extra)

    def render_text(self, text: str, extra: dict[str, str] | None = None) -> str:
        subs = {**self.substitutions(), **(extra or {})}
        text = re.sub(r"@([A-Z_]+)@", lambda m: subs.get(m.group(1), m.group(0)), text)
        left = re.findall(r"@[A-Z_]+@", text)
        if left:
            raise ValueError(f"unknown template variables {sorted(set(left))}")
        return text

    def render(self) -> None:
        self.gen = self._new_gen_dir()
        self.cgid_sock = self._script_sock()
        for d in ("conf", "logs", "run"):
            (self.gen / d).mkdir()
        # htdocs: the committed tree, plus copies of its directories under other names
        # (dest, src) for per-directory configurations.
        shutil.copytree(self.env.src_dir / "htdocs", self.htdocs)
        for dest, src in self.htdocs_copies:
            shutil.copytree(self.env.src_dir / "htdocs" / src, self.htdocs / dest,
                            dirs_exist_ok=True)
        for root, dirs, files in os.walk(self.gen):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for f in files:
                p = os.path.join(root, f)
                os.chmod(p, 0o755 if f.endswith(".py") else 0o644)
        self.write_conf()

    def write_conf(self) -> None:
        user = _run_user()
        modules = self.env.load_module_lines(self.module_list())
        if self.load_mc:
            modules += f'\nLoadModule multicompress_module "{self.env.module_path}"'
        if self.env.mctest_path:
            modules += f'\nLoadModule mctest_module "{self.env.mctest_path}"'
        log_level = self.log_level
        if self.load_mc and self.trace:
            log_level += " multicompress:trace1"
        site = self.render_template(self.site_template) if self.site_template else ""
        site += "\n" + self.render_text(self.extra_conf)
        self.conf_path.write_text(self.render_template("httpd.conf.template", {
            "MODULES": modules,
            "USER": f"User {user[0]}\nGroup {user[1]}" if user else "",
            "LOGLEVEL": f"LogLevel {log_level}",
            "MPM_CONF": self.mpm_conf or self.default_mpm_conf(),
            "SITE": site,
        }))

    # ---- control
    def cmd(self, *args: str) -> list[str]:
        return [str(self.env.apache_bin), "-d", str(self.gen), "-f", str(self.conf_path), *args]

    def check_config(self) -> subprocess.CompletedProcess:
        """`apache2 -t` of a server that is never started (its log is not checked)."""
        self.log_check = False
        if not self.port:
            self.port = free_port()
        self.render()
        return self.configtest()

    def configtest(self) -> subprocess.CompletedProcess:
        return subprocess.run(self.cmd("-t"), capture_output=True, text=True, env=clean_env(),
                              timeout=60, check=False)

    def start(self, attempts: int = 3) -> "HttpdServer":
        last = ""
        if self not in HttpdServer.registry:
            HttpdServer.registry.append(self)
        for _ in range(attempts):
            self.port = free_port()
            self.render()
            p = subprocess.run(self.cmd("-k", "start"), capture_output=True, text=True,
                               env=clean_env(), timeout=60, check=False)
            if p.returncode == 0 and self._wait_live():
                self.running = True
                return self
            last = (f"rc={p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}\n"
                    f"error_log:\n{self.read_log()}")
            self._kill_leftovers()
            if "could not bind" not in last and "Address already in use" not in last:
                break
        raise StartError(f"httpd '{self.name}' did not start ({self.gen})\n{last}")

    def try_start(self) -> tuple[bool, str]:
        """Starts without raising; returns (answering, stdout+stderr+error_log). The caller
        must stop() the server when it came up."""
        self.port = free_port()
        self.render()
        if self not in HttpdServer.registry:
            HttpdServer.registry.append(self)
        p = subprocess.run(self.cmd("-k", "start"), capture_output=True, text=True,
                           env=clean_env(), timeout=60, check=False)
        live = p.returncode == 0 and self._wait_live(timeout=5)
        self.running = live
        if not live:
            self._kill_leftovers()
        return live, p.stdout + p.stderr + self.read_log()

    def _read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def _wait_live(self, timeout: float = 15.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self._read_pid()
            if pid and process_alive(pid):
                self.pid = pid
                if self.is_live():
                    wait_cgid_socket(self, deadline)
                    return True
            elif pid and not process_alive(pid):
                return False
            time.sleep(0.05)
        return False

    def is_live(self) -> bool:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            conn.request("GET", "/__is_live__")
            conn.getresponse().read()
            conn.close()
            return True
        except OSError:
            return False

    def child_pids(self) -> list[int]:
        return children_of(self.pid) if self.pid else []

    def graceful(self, timeout: float = 15.0) -> None:
        """`-k graceful` (SIGUSR1 to the parent): a new generation of children with the
        configuration read again; returns once a child that was not there before answers."""
        old = set(self.child_pids())
        p = subprocess.run(self.cmd("-k", "graceful"), capture_output=True, text=True,
                           env=clean_env(), timeout=60, check=False)
        assert p.returncode == 0, p.stdout + p.stderr
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if set(self.child_pids()) - old and self.is_live():
                wait_cgid_socket(self, deadline)
                return
            time.sleep(0.05)
        raise AssertionError(f"no new generation of children after graceful ({self.gen})")

    def stop(self) -> None:
        """Graceful stop (SIGWINCH), as Debian's apache2.service stops httpd; SIGTERM after
        GRACEFUL_STOP_SECONDS, SIGKILL 15 s later. SIGTERM first would race event's
        close_worker_sockets against a connection's end: a SIGSEGV of httpd's own (soak README)."""
        if not self.running:
            return
        self.running = False
        pid = self._read_pid() or self.pid
        if not pid:
            return
        kids = children_of(pid)
        for sig, wait in ((signal.SIGWINCH, GRACEFUL_STOP_SECONDS), (signal.SIGTERM, 15)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
            if wait_gone([pid, *kids], timeout=wait):
                break
        else:
            for p in [pid, *kids]:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            wait_gone([pid, *kids], timeout=5)
        if self.short_sock_dir is not None:
            shutil.rmtree(self.short_sock_dir, ignore_errors=True)

    def _kill_leftovers(self) -> None:
        pid = self._read_pid()
        if pid and process_alive(pid):
            self.running = True
            self.pid = pid
            self.stop()

    # ---- logs
    def log_size(self) -> int:
        try:
            return self.error_log.stat().st_size
        except OSError:
            return 0

    def read_log(self, since: int = 0) -> str:
        try:
            with open(self.error_log, "rb") as f:
                f.seek(since)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_lines(self, since: int = 0) -> list[str]:
        return self.read_log(since).splitlines()

    def write_htaccess(self, rel_dir: str, text: str) -> None:
        p = self.htdocs / rel_dir / ".htaccess"
        p.write_text(text)
        os.chmod(p, 0o644)



# Copies of htdocs directories for the per-directory sections of main.conf.template.
MAIN_COPIES = [(d, "static") for d in ("dir", "dir/sub", "dir/sub2", "files", "loc", "loc/sub",
                                       "ht", "ht/sub", "ht2", "ht3", "ht-none")]
MAIN_COPIES.append(("cgi-plain", "cgi-bin"))


def start_main(env: McEnv, mpm: str, name: str | None = None, **kw) -> HttpdServer:
    """A server with main.conf.template (the main suite's site) under `mpm`."""
    return HttpdServer(env, name or f"main-{mpm}", "main.conf.template", mpm,
                       htdocs_copies=MAIN_COPIES, **kw).start()
