# SPDX-License-Identifier: Apache-2.0
"""Helpers for the sidecar and cache tests: real memcached and redis-server processes
on free 127.0.0.1 ports, stopped by PID; sidecar writers; and the source log, which records what
MultiCompressNote source (and the MULTICOMPRESS_SOURCE env var) said about each request.

memcached and redis-server come from Debian's `memcached` and `redis-server` packages. Every
process started here is stopped by its PID when its fixture ends (passed or failed) and, as a
safety net, when the Python process exits.
"""
from __future__ import annotations

import atexit
import gzip
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import brotli
import zstandard

from mc_client import Response, request
from mc_process import free_port, process_alive, stop_process, wait_gone
from mc_server import HttpdServer

MEMCACHED_BIN = "/usr/bin/memcached"
REDIS_BIN = "/usr/bin/redis-server"


# ---------------------------------------------------------------------------------------------
# Store processes

class StoreStartError(RuntimeError):
    pass


class StoreProcess:
    """One memcached or redis-server in the foreground (not daemonized), so its PID is ours."""

    registry: list["StoreProcess"] = []

    def __init__(self, kind: str):
        if kind not in ("memcache", "redis"):
            raise ValueError(kind)
        self.kind = kind
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.workdir = Path(tempfile.mkdtemp(prefix=f"mc-{kind}-"))
        self.log_path = self.workdir / f"{kind}.log"

    @property
    def binary(self) -> str:
        return MEMCACHED_BIN if self.kind == "memcache" else REDIS_BIN

    @property
    def spec(self) -> str:
        """The MultiCompressCacheStore argument for this store."""
        return f"{self.kind}:127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _argv(self) -> list[str]:
        if self.kind == "memcache":
            argv = [MEMCACHED_BIN, "-l", "127.0.0.1", "-p", str(self.port), "-U", "0",
                    "-m", "64", "-c", "256", "-t", "2"]
            if os.geteuid() == 0:  # memcached refuses to run as root without -u
                argv += ["-u", _unprivileged_user()]
            return argv
        return [REDIS_BIN, "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--protected-mode", "no",
                "--daemonize", "no", "--dir", str(self.workdir), "--logfile", ""]

    def start(self, attempts: int = 3) -> "StoreProcess":
        if not Path(self.binary).exists():
            raise StoreStartError(f"{self.binary} not installed (apt-get install "
                                  f"{'memcached' if self.kind == 'memcache' else 'redis-server'})")
        StoreProcess.registry.append(self)
        last = ""
        for _ in range(attempts):
            self.port = free_port()
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(self._argv(), stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            if self._wait_ready():
                return self
            last = self.log_path.read_text(errors="replace")
            self.stop()
        raise StoreStartError(f"{self.kind} did not start on a free port:\n{last}")

    def ping(self, timeout: float = 1.0) -> bool:
        """True when the server answers its protocol's no-op."""
        probe, want = ((b"version\r\n", b"VERSION") if self.kind == "memcache"
                       else (b"PING\r\n", b"+PONG"))
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
                s.sendall(probe)
                return s.recv(64).startswith(want)
        except OSError:
            return False

    def _wait_ready(self, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return False
            if self.ping(0.5):
                return True
            time.sleep(0.05)
        return False

    def command(self, line: str) -> bytes:
        """Sends one protocol line and returns the first reply chunk (diagnostics)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(line.encode() + b"\r\n")
            return s.recv(65536)

    def item_count(self) -> int:
        """Items in the store: memcached `stats` curr_items, redis DBSIZE."""
        if self.kind == "memcache":
            m = re.search(rb"STAT curr_items (\d+)", self.command("stats"))
            return int(m.group(1)) if m else -1
        m = re.match(rb":(\d+)", self.command("DBSIZE"))
        return int(m.group(1)) if m else -1

    def stop(self) -> None:
        """SIGTERM by PID, then SIGKILL; reaps the process."""
        proc, self.proc = self.proc, None
        stop_process(proc)

    def kill(self) -> None:
        """SIGKILL by PID (the store dies under the server's feet)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)
        self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _unprivileged_user() -> str:
    for user in ("memcache", "nobody", "daemon"):
        try:
            pwd.getpwnam(user)
            return user
        except KeyError:
            continue
    return "root"


def stop_all_stores() -> None:
    for p in StoreProcess.registry:
        p.cleanup()
    StoreProcess.registry.clear()


atexit.register(stop_all_stores)


def dead_store_spec(kind: str) -> str:
    """A store address where nothing listens (a free port, closed again)."""
    return f"{kind}:127.0.0.1:{free_port()}"


# ---------------------------------------------------------------------------------------------
# Sidecars

ZSTD_SIDECAR_LEVEL = 19
BR_SIDECAR_LEVEL = 11
GZIP_SIDECAR_LEVEL = 9
SUFFIX = {"zstd": ".zst", "br": ".br", "gzip": ".gz"}


def compress(data: bytes, coding: str, *, level: int | None = None,
             zstd_window_log: int | None = None, zstd_content_size: bool = True) -> bytes:
    if coding == "gzip":
        return gzip.compress(data, GZIP_SIDECAR_LEVEL if level is None else level, mtime=0)
    if coding == "br":
        return brotli.compress(data, quality=BR_SIDECAR_LEVEL if level is None else level)
    if coding == "zstd":
        lvl = ZSTD_SIDECAR_LEVEL if level is None else level
        if zstd_window_log is None:
            cctx = zstandard.ZstdCompressor(level=lvl, write_content_size=zstd_content_size)
        else:
            params = zstandard.ZstdCompressionParameters.from_level(
                lvl, window_log=zstd_window_log, write_content_size=zstd_content_size)
            cctx = zstandard.ZstdCompressor(compression_params=params)
        if zstd_content_size:
            return cctx.compress(data)
        # compress() always knows the size; a stream writer without a size does not declare it
        out = cctx.compressobj()
        return out.compress(data) + out.flush()
    raise ValueError(coding)


def write_file(path: Path, data: bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o755)
    path.write_bytes(data)
    os.chmod(path, 0o644)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def write_sidecar(original: Path, coding: str, data: bytes | None = None, *,
                  newer_by: float = 0.0, **kw) -> Path:
    """FILE.zst/.br/.gz next to `original`, compressed from it unless `data` is given; its
    mtime is the original's plus `newer_by` seconds (negative: stale)."""
    body = compress(original.read_bytes(), coding, **kw) if data is None else data
    st = original.stat()
    return write_file(Path(str(original) + SUFFIX[coding]), body, st.st_mtime + newer_by)


def set_mtime(path: Path, mtime: float) -> None:
    os.utime(path, (mtime, mtime))


_copies = itertools.count(1)


def copy_static(srv: HttpdServer, name: str, url_prefix: str, rel_dir: str) -> tuple[str, Path]:
    """A private copy of htdocs/static/NAME in htdocs/REL_DIR (a file, and a cache key, nobody
    asked for yet): (URL path under URL_PREFIX, file path). Its mtime is in the past: a file
    younger than a second gets a weak ETag that turns strong later."""
    stem, _, ext = name.rpartition(".")
    new = f"{stem}-{os.getpid()}-{next(_copies)}.{ext}"
    path = srv.htdocs / rel_dir / new
    shutil.copyfile(srv.env.src_dir / "htdocs" / "static" / name, path)
    os.chmod(path, 0o644)
    set_mtime(path, time.time() - 1000)
    return f"{url_prefix}/{new}", path


# ---------------------------------------------------------------------------------------------
# The source log: one line per request, keyed by a request id header

SOURCE_NOTE = "mcsrc"
SOURCE_LOG_CONF = f"""
MultiCompressNote source {SOURCE_NOTE}
LogFormat "%{{X-MC-Id}}i %m %>s %{{{SOURCE_NOTE}}}n %{{MULTICOMPRESS_SOURCE}}e %B %U" mcsource
CustomLog "@GEN@/logs/source_log" mcsource
"""

_ids = itertools.count(1)


@dataclass
class Sourced:
    """A response and what the module's source note/env said about it."""
    resp: Response
    note: str
    env: str

    @property
    def source(self) -> str:
        return self.note


def source_log_path(srv: HttpdServer) -> Path:
    return srv.gen / "logs" / "source_log"


def wait_source(srv: HttpdServer, rid: str, timeout: float = 5.0) -> tuple[str, str]:
    """(note, env) logged for request id `rid`: the log line is written after the response."""
    path = source_log_path(srv)
    deadline = time.monotonic() + timeout
    while True:
        try:
            for line in path.read_text(errors="replace").splitlines():
                parts = line.split(" ")
                if parts and parts[0] == rid:
                    return parts[3], parts[4]
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"no source_log line for request {rid} in {path}")
        time.sleep(0.02)


def get(srv: HttpdServer, path: str, accept_encoding: str | Sequence[str] | None = None,
        headers: Sequence[tuple[str, str]] = (), method: str = "GET") -> Sourced:
    """One request, with the source note and env value the server logged for it."""
    rid = f"r{os.getpid()}-{next(_ids)}"
    resp = request(srv.port, path, accept_encoding, [("X-MC-Id", rid), *headers], method)
    note, env = wait_source(srv, rid)
    return Sourced(resp, note, env)


def reference(srv: HttpdServer, url: str) -> Sourced:
    """The identity response (no Accept-Encoding): the original's validators and type."""
    ref = get(srv, url)
    assert ref.resp.status == 200 and ref.resp.content_encoding is None, ref.resp
    assert ref.resp.header("ETag") and ref.resp.header("Last-Modified"), ref.resp
    return ref


def poll_until(fn, timeout: float = 6.0, interval: float = 0.1):
    """Calls fn() until it returns something true; returns the last value (true or not)."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def log_lines_matching(srv: HttpdServer, pattern: str, since: int = 0) -> list[str]:
    rx = re.compile(pattern)
    return [l for l in srv.log_lines(since) if rx.search(l)]


def pid_of_log_line(line: str) -> int | None:
    m = re.search(r"\[pid (\d+)", line)
    return int(m.group(1)) if m else None


__all__ = [
    "StoreProcess", "StoreStartError", "stop_all_stores", "dead_store_spec", "compress",
    "write_file", "write_sidecar", "set_mtime", "SOURCE_LOG_CONF", "SOURCE_NOTE", "Sourced",
    "get", "wait_source", "poll_until", "log_lines_matching", "pid_of_log_line", "SUFFIX",
    "process_alive", "wait_gone",
]
