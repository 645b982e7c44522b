# SPDX-License-Identifier: Apache-2.0
"""The servers under test: config generation, start, readiness, /proc accounting and stop
(Apache here, nginx in nginx_server.py).

Every server runs in its own session (so a Ctrl-C on the terminal reaches only bench/run, which
then stops the servers in order) and is stopped by PID: SIGTERM to the parent, then SIGKILL to
whatever of its processes is still there, identified by PID and start time."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import time

APACHE_BIN = "/usr/sbin/apache2"
APACHE_MODULES = "/usr/lib/apache2/modules"

# Debian's apache2 mpm_event sizing (/etc/apache2/mods-available/mpm_event.conf), the headline
# configuration: 2 children of 25 threads at the start, more started (up to 150 workers) when
# fewer than 25 are idle. "wide" is 4 x 80 threads up front, for the 256 slow streams of the RSS
# test (Debian's 150 workers could not hold them all at once).
SIZING = {
    "debian": ["StartServers 2", "MinSpareThreads 25", "MaxSpareThreads 75", "ThreadLimit 64",
               "ThreadsPerChild 25", "MaxRequestWorkers 150", "MaxConnectionsPerChild 0"],
    "wide": ["StartServers 4", "ServerLimit 4", "ThreadLimit 80", "ThreadsPerChild 80",
             "MaxRequestWorkers 320", "MinSpareThreads 80", "MaxSpareThreads 320",
             "MaxConnectionsPerChild 0"],
}

# Media types set explicitly in every server, so all of them see the same type for a file.
MEDIA_TYPES = {
    "html": "text/html",
    "css": "text/css",
    "js": "application/javascript",
    "json": "application/json",
    "svg": "image/svg+xml",
    "txt": "text/plain",
}
COMPRESSIBLE = sorted(set(MEDIA_TYPES.values()))

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLK_TCK = os.sysconf("SC_CLK_TCK")

# File extension of a precompressed copy, per coding.
PRE_EXT = {"gzip": "gz", "br": "br", "zstd": "zst"}


# bench/floor/mod_mc_floor.c, built with the module: plain Apache plus the access check a sidecar
# hit may not skip (a subrequest lookup of a URL in the same directory), and nothing else.
FLOOR_MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "build",
                            "bench", "bench", "mod_mc_floor.so")
# bench/floor/mod_mc_libfloor.c, built beside it: a handler that is only the library's one call
# (bench/run's `library floor` rows, bench/vs_nginx.py --lib-floor).
LIBFLOOR_MODULE = os.path.join(os.path.dirname(FLOOR_MODULE), "mod_mc_libfloor.so")


def _load_if_built(module: str, so: str) -> list[str] | None:
    so = os.path.abspath(so)
    return [f"LoadModule {module} {so}"] if os.path.isfile(so) else None


def floor_conf(path: str | None = None) -> list[str] | None:
    """The line that makes a plain Apache the `floor` of a sidecar hit (bench/floor/), or None
    when the module is not built."""
    return _load_if_built("mc_floor_module", path or FLOOR_MODULE)


def libfloor_conf(path: str | None = None) -> list[str] | None:
    """The line that loads bench/floor's mod_mc_libfloor into a plain Apache (each virtual host
    then says `MCLibFloor CODING LEVEL`), or None when it is not built."""
    return _load_if_built("mc_libfloor_module", path or LIBFLOOR_MODULE)


def readable_by_workers(root) -> None:
    """Makes a temp tree (docroot, sidecars) readable by the servers' workers, which run as
    www-data: directories 0755, files 0644, `root` itself included."""
    for here, dirs, files in os.walk(root):
        for d in dirs:
            os.chmod(os.path.join(here, d), 0o755)
        for f in files:
            os.chmod(os.path.join(here, f), 0o644)
    os.chmod(root, 0o755)


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _run_user() -> tuple[str, str]:
    import grp
    import pwd
    for user, group in (("www-data", "www-data"), ("nobody", "nogroup")):
        try:
            pwd.getpwnam(user)
            grp.getgrnam(group)
            return user, group
        except KeyError:
            continue
    raise RuntimeError("no www-data or nobody user to run the servers as")


def _proc_stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces; everything after the last ')' is fixed.
    return data[data.rindex(")") + 2:].split()


class Server:
    """One server process tree. `ports` maps a variant key such as ("gzip", 6) to its port."""

    label = "?"

    def __init__(self, workdir: str, docroot: str, ports: dict[tuple[str, int], int],
                 tls: tuple[str, str] | None = None):
        """`tls`: (certificate, key) PEM files: every port then speaks TLS, with HTTP/2 offered
        by ALPN next to HTTP/1.1."""
        self.tls = tls
        self.workdir = workdir
        self.docroot = docroot
        self.ports = ports
        self.proc: subprocess.Popen | None = None
        self.log_path = os.path.join(workdir, "error.log")
        self.stdout_path = os.path.join(workdir, "stdout.log")
        self._known: dict[int, str] = {}   # pid -> start time, for a safe final kill
        os.makedirs(workdir, exist_ok=True)

    # --- lifecycle -------------------------------------------------------------------------
    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self, timeout: float = 20.0) -> None:
        self.write_config()
        out = open(self.stdout_path, "wb")
        try:
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            out.close()
        deadline = time.monotonic() + timeout
        pending = {port: self.is_tls(key) for key, port in self.ports.items()}
        while pending:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label} exited with {self.proc.returncode} at startup:\n"
                                   + self.log_tail())
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.label} did not answer on ports {sorted(pending)}:\n"
                                   + self.log_tail())
            for port, tls in list(pending.items()):
                if _answers(port, tls):
                    del pending[port]
            if pending:
                time.sleep(0.1)
        self.remember_pids()

    def is_tls(self, key: tuple[str, int]) -> bool:
        """Whether the port of `key` speaks TLS."""
        return self.tls is not None

    def pids(self) -> list[int]:
        """The parent and its live children."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        parent = self.proc.pid
        out = [parent]
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            st = _proc_stat(int(entry))
            if st is not None and int(st[1]) == parent:
                out.append(int(entry))
        return out

    def remember_pids(self) -> None:
        for pid in self.pids():
            st = _proc_stat(pid)
            if st is not None:
                self._known[pid] = st[19]

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None:
            return
        self.remember_pids()
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        # Anything left (a hung parent, an orphaned child): SIGKILL by PID, if it is still ours.
        deadline = time.monotonic() + timeout
        while True:
            alive = [pid for pid, start in self._known.items()
                     if (st := _proc_stat(pid)) is not None and st[19] == start and st[0] != "Z"]
            if not alive or time.monotonic() > deadline:
                break
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if self.proc.poll() is None:
                try:
                    self.proc.wait(1)
                except subprocess.TimeoutExpired:
                    pass
            time.sleep(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None

    # --- accounting --------------------------------------------------------------------------
    def cpu_seconds(self) -> float:
        """utime+stime of the parent and live children (all their threads), plus the parent's
        cutime+cstime (children that already exited and were reaped)."""
        ticks = 0
        parent = self.proc.pid if self.proc else None
        for pid in self.pids():
            st = _proc_stat(pid)
            if st is None:
                continue
            # Fields after the command: state=0, ppid=1, ... utime=11, stime=12, cutime=13, cstime=14.
            ticks += int(st[11]) + int(st[12])
            if pid == parent:
                ticks += int(st[13]) + int(st[14])
        return ticks / CLK_TCK

    def rss_bytes(self) -> tuple[int, int]:
        """(RSS, anonymous RSS) summed over the server's processes. RSS also counts file pages
        the process has mapped (each request's mmap of the file it serves), which are shared page
        cache; RssAnon is the heap, stacks and encoder state the server really adds."""
        total = anon = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
                        elif line.startswith("RssAnon:"):
                            anon += int(line.split()[1]) * 1024
            except OSError:
                continue
        return total, anon

    def log_tail(self, n: int = 30) -> str:
        chunks = []
        for path in (self.log_path, self.stdout_path):
            try:
                with open(path, errors="replace") as f:
                    lines = f.read().splitlines()[-n:]
                if lines:
                    chunks.append(f"--- {path}\n" + "\n".join(lines))
            except OSError:
                pass
        return "\n".join(chunks)

    def error_lines(self) -> list[str]:
        try:
            with open(self.log_path, errors="replace") as f:
                return [ln for ln in f if "[error]" in ln or ":error]" in ln or "[crit]" in ln
                        or ":crit]" in ln or "[emerg]" in ln or ":emerg]" in ln
                        or "[alert]" in ln or ":alert]" in ln]
        except OSError:
            return []


def _answers(port: int, tls: bool = False) -> bool:
    try:
        if tls:
            import ssl
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=2, context=ctx)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/small.html")
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return resp.status == 200
    except OSError:
        return False
    except http.client.HTTPException:
        return False


# ------------------------------------------------------------------------------------------------
class Apache(Server):
    """Debian's httpd, MPM event. `variant` is "deflate", "brotli", "multicompress" or "plain"
    (precompressed files served as plain files). Everything but the compression module and its
    directives is identical across variants."""

    def __init__(self, variant: str, workdir: str, docroot: str,
                 ports: dict[tuple[str, int], int], module_path: str | None = None,
                 send_buffer: int | None = None, extra_conf: list[str] | None = None,
                 vhost_conf: dict[tuple[str, int], list[str]] | None = None,
                 mods: list[str] | None = None, label: str | None = None,
                 sizing: str = "debian", sendfile: bool = False, mmap: bool = True,
                 tls: tuple[str, str] | None = None, plain_ports: set | None = None):
        """`extra_conf`: lines added to the server config after the module's own; `vhost_conf`:
        lines added inside the virtual host of a port key; `mods`: more modules to load from
        Debian's module directory (e.g. "socache_shmcb"); `sizing`: a key of SIZING; `sendfile`:
        EnableSendfile (Off is httpd's and Debian's default); `mmap`: EnableMMAP (On, the default);
        `tls`: (certificate, key): mod_ssl + mod_http2 (`Protocols h2 http/1.1`) on every port
        but the keys in `plain_ports`."""
        super().__init__(workdir, docroot, ports, tls)
        self.variant = variant
        self.send_buffer = send_buffer
        self.module_path = module_path
        self.extra_conf = list(extra_conf or [])
        self.vhost_conf = dict(vhost_conf or {})
        self.extra_mods = list(mods or [])
        self.sizing = sizing
        self.sendfile = sendfile
        self.mmap = mmap
        self.plain_ports = set(plain_ports or ())
        self.label = label or {"deflate": "mod_deflate", "brotli": "mod_brotli",
                               "multicompress": "mod_multicompress",
                               "plain": "precompressed"}[variant]
        self.conf_path = os.path.join(workdir, "httpd.conf")

    def is_tls(self, key: tuple[str, int]) -> bool:
        return self.tls is not None and key not in self.plain_ports

    def command(self) -> list[str]:
        return [APACHE_BIN, "-d", self.workdir, "-f", self.conf_path, "-DFOREGROUND"]

    def write_config(self) -> None:
        user, group = _run_user()
        run = os.path.join(self.workdir, "run")
        os.makedirs(run, exist_ok=True)
        mods = ["mpm_event", "authz_core", "mime", "filter"] + self.extra_mods
        if self.tls:
            mods += ["socache_shmcb", "ssl", "http2"]
        extra: list[str] = []
        if self.variant == "deflate":
            mods.append("deflate")
            extra.append(f"AddOutputFilterByType DEFLATE {' '.join(COMPRESSIBLE)}")
        elif self.variant == "brotli":
            mods.append("brotli")
            extra.append(f"AddOutputFilterByType BROTLI_COMPRESS {' '.join(COMPRESSIBLE)}")
        elif self.variant == "multicompress":
            extra.append(f"LoadModule multicompress_module {self.module_path}")
            extra.append("MultiCompressEncodings zstd br gzip")
            extra.append(f"AddOutputFilterByType MULTICOMPRESS {' '.join(COMPRESSIBLE)}")
        else:
            # Precompressed copies under /pre/<coding>-<level>/NAME.<ext>, served as they are.
            extra += ["AddEncoding gzip .gz", "AddEncoding br .br", "AddEncoding zstd .zst"]
        lines = [f"LoadModule {m}_module {APACHE_MODULES}/mod_{m}.so"
                 for m in dict.fromkeys(mods)]
        lines += [
            f"ServerRoot {self.workdir}",
            f"DefaultRuntimeDir {run}",
            f"PidFile {run}/httpd.pid",
            f"ErrorLog {self.log_path}",
            "LogLevel warn",
            f"User {user}",
            f"Group {group}",
            "ServerName 127.0.0.1",
            # Same MPM sizing and keep-alive for every Apache of a comparison.
            *SIZING[self.sizing],
            "KeepAlive On",
            "MaxKeepAliveRequests 0",
            "KeepAliveTimeout 30",
            "Timeout 60",
            f"EnableSendfile {'On' if self.sendfile else 'Off'}",
            f"EnableMMAP {'On' if self.mmap else 'Off'}",
            "TypesConfig /etc/mime.types",
        ]
        if self.send_buffer:
            lines.append(f"SendBufferSize {self.send_buffer}")
        lines += [f"AddType {t} .{ext}" for ext, t in MEDIA_TYPES.items()]
        lines += [
            f"DocumentRoot {self.docroot}",
            "<Directory />",
            "    Options None",
            "    AllowOverride None",
            "    Require all granted",
            "</Directory>",
        ]
        if self.tls:
            # Debian's ssl.conf, less what only matters to old clients.
            lines += [f"SSLSessionCache shmcb:{run}/ssl_scache(512000)",
                      "SSLSessionCacheTimeout 300",
                      "SSLProtocol all -SSLv3",
                      "SSLCipherSuite HIGH:!aNULL",
                      "Protocols h2 http/1.1"]
        lines += extra + self.extra_conf
        for (coding, level), port in sorted(self.ports.items(), key=lambda kv: kv[1]):
            lines.append(f"Listen 127.0.0.1:{port}")
            lines.append(f"<VirtualHost 127.0.0.1:{port}>")
            lines.append(f"    DocumentRoot {self.docroot}")
            if self.is_tls((coding, level)):
                lines += ["    ServerName 127.0.0.1", "    SSLEngine on",
                          f"    SSLCertificateFile {self.tls[0]}",
                          f"    SSLCertificateKeyFile {self.tls[1]}"]
            if self.variant == "deflate" and coding == "gzip":
                lines.append(f"    DeflateCompressionLevel {level}")
            elif self.variant == "brotli" and coding == "br":
                lines.append(f"    BrotliCompressionQuality {level}")
            elif self.variant == "multicompress" and coding in ("gzip", "br", "zstd"):
                lines.append(f"    MultiCompressLevel {coding} {level}")
            lines += ["    " + ln for ln in self.vhost_conf.get((coding, level), [])]
            lines.append("</VirtualHost>")
        with open(self.conf_path, "w") as f:
            f.write("\n".join(lines) + "\n")
