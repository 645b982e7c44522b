# SPDX-License-Identifier: Apache-2.0
"""HTTPS and HTTP/2 for the integration tests (test_450_tls_h2.py, test_460_browser.py).

- `TlsServer`: an `HttpdServer` (mc_server.py) that also loads mod_ssl and mod_http2 and listens
  with TLS and `Protocols h2 http/1.1` on a second free port. Its HTTPS site is the demo's
  (conf/demo/htdocs copied into the server's directory, conf/multicompress.conf included,
  br-only/ and gzip-only/ as in conf/demo/httpd.conf.in), plus the integration documents under
  /static/ and their CGIs under /cgi-it/. The plain port serves as in every test server (the
  harness's liveness check uses it). A fresh self-signed certificate is made with openssl in
  the server's directory at each start; nothing is committed.
- `curl()` runs Debian's curl (raw bodies, headers from -D); `nghttp()` runs nghttp2-client's
  `nghttp` and parses its -v trace; `timed_stream()` reads a client's stdout as it arrives and
  decodes it incrementally, with timestamps.
"""
from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from mc_decode import StreamDecoder
from mc_env import McEnv
from mc_process import free_port
from mc_server import HttpdServer

CURL = "curl"
NGHTTP = "nghttp"

# The HTTPS site. @DEMO@ is the copy of conf/demo/htdocs; keep the per-directory part in step
# with conf/demo/httpd.conf.in.
TLS_SITE = r"""
# ---- mc_tls.py: HTTPS with HTTP/2 on @TLS_PORT@ (mod_ssl, mod_http2)
Listen 127.0.0.1:@TLS_PORT@ https
SSLSessionCache "shmcb:@GEN@/run/ssl_scache(512000)"

# The shipped configuration: MULTICOMPRESS by type for the usual text types.
Include "@MC_CONF@"
AddOutputFilterByType MULTICOMPRESS text/event-stream

<Directory "@DEMO@">
    Options None
    AllowOverride None
    Require all granted
</Directory>
# As conf/demo/httpd.conf.in: only br here, only gzip there.
<Directory "@DEMO@/br-only">
    MultiCompressEncodings br
    MultiCompressLevel br 5
</Directory>
<Directory "@DEMO@/gzip-only">
    MultiCompressEncodings gzip
</Directory>

<VirtualHost 127.0.0.1:@TLS_PORT@>
    Protocols h2 http/1.1
    SSLEngine on
    SSLCertificateFile "@GEN@/tls/cert.pem"
    SSLCertificateKeyFile "@GEN@/tls/key.pem"
    DocumentRoot "@DEMO@"
    DirectoryIndex index.html
    ScriptAlias /cgi-bin/ "@DEMO@/cgi-bin/"
    Alias /static/ "@HTDOCS@/static/"
    ScriptAlias /cgi-it/ "@HTDOCS@/cgi-bin/"
</VirtualHost>
"""


def repo_root(env: McEnv) -> Path:
    """The source tree (config.ini's src_dir is tests/integration)."""
    return env.src_dir.parent.parent


def make_cert(directory: Path) -> tuple[Path, Path]:
    """A fresh self-signed P-256 certificate for 127.0.0.1 and localhost (CN 127.0.0.1, so that
    mod_ssl finds the ServerName in it)."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "basicConstraints=critical,CA:FALSE",
         "-addext", "extendedKeyUsage=serverAuth",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60)
    os.chmod(directory, 0o700)
    return cert, key


class TlsServer(HttpdServer):
    """A test server with an HTTPS + HTTP/2 virtual host on `tls_port` (see TLS_SITE)."""

    def __init__(self, env: McEnv, name: str, *, extra_conf: str = "", **kw):
        mods = ["ssl", "http2", "socache_shmcb", *kw.pop("extra_modules", ())]
        super().__init__(env, name, site_template=None, mpm=kw.pop("mpm", "event"),
                         extra_conf=TLS_SITE + "\n" + extra_conf, extra_modules=mods, **kw)
        self.tls_port = 0

    @property
    def demo_dir(self) -> Path:
        return self.gen / "demo"

    def https_url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.tls_port}{path}"

    def substitutions(self) -> dict[str, str]:
        subs = super().substitutions()
        subs.update({
            "TLS_PORT": str(self.tls_port),
            "DEMO": str(self.demo_dir),
            "MC_CONF": str(repo_root(self.env) / "conf" / "multicompress.conf"),
        })
        return subs

    def render(self) -> None:
        # start() picks self.port and calls render() on every attempt: a new TLS port too.
        self.tls_port = free_port()
        while self.tls_port == self.port:
            self.tls_port = free_port()
        super().render()
        shutil.copytree(repo_root(self.env) / "conf" / "demo" / "htdocs", self.demo_dir)
        for root, dirs, files in os.walk(self.demo_dir):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for f in files:
                p = os.path.join(root, f)
                os.chmod(p, 0o755 if os.path.basename(root) == "cgi-bin" else 0o644)
        make_cert(self.gen / "tls")

    def access_lines(self) -> list[str]:
        try:
            return self.access_log.read_text(errors="replace").splitlines()
        except OSError:
            return []

    def wait_access(self, patterns: Sequence[str], timeout: float = 5.0) -> list[str]:
        """Waits until each regex matches an access_log line (httpd logs a request after its
        response went out, so a fast client can be done first); returns those not found."""
        deadline = time.monotonic() + timeout
        while True:
            log = "\n".join(self.access_lines())
            missing = [p for p in patterns if not re.search(p, log)]
            if not missing or time.monotonic() > deadline:
                return missing
            time.sleep(0.05)


def demo_file(env: McEnv, rel: str) -> bytes:
    """The bytes of conf/demo/htdocs/REL."""
    return (repo_root(env) / "conf" / "demo" / "htdocs" / rel).read_bytes()


# ---------------------------------------------------------------------------------------------
# Clients

@dataclass
class ClientResponse:
    """What a command-line client received: status line, headers (names lower-cased, in
    order), the body as it came off the wire (still encoded unless the client decoded it)."""
    version: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    trace: str = ""
    decoded_by_client: bool = False  # the client decoded the body itself (curl --compressed,
                                     # nghttp for gzip and deflate)
    frames: list = field(default_factory=list)  # nghttp: its DataFrames

    def header_all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name.lower()]

    def header(self, name: str) -> str | None:
        vals = self.header_all(name)
        return ", ".join(vals) if vals else None

    def vary_tokens(self) -> list[str]:
        out = []
        for v in self.header_all("vary"):
            out.extend(t.strip().lower() for t in v.split(",") if t.strip())
        return out


def parse_header_dump(text: str) -> tuple[str, int, list[tuple[str, str]]]:
    """curl -D output -> (version, status, headers) of the last response in it."""
    blocks = [b for b in re.split(r"\r?\n\r?\n", text) if b.strip()]
    if not blocks:
        raise AssertionError(f"no response headers: {text!r}")
    lines = blocks[-1].splitlines()
    m = re.match(r"HTTP/([\d.]+) (\d{3})", lines[0])
    if not m:
        raise AssertionError(f"bad status line {lines[0]!r}")
    headers = []
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers.append((k.strip().lower(), v.strip()))
    return m.group(1), int(m.group(2)), headers


def curl(url: str, tmp: Path, *args: str, timeout: float = 60) -> ClientResponse:
    """`curl -sS -k ARGS URL`, body and headers to files in `tmp`; no decoding unless ARGS
    ask for it (--compressed)."""
    tmp.mkdir(parents=True, exist_ok=True)
    n = len(list(tmp.glob("curl-*.hdr")))
    hdr, body = tmp / f"curl-{n}.hdr", tmp / f"curl-{n}.body"
    cmd = [CURL, "-sS", "-k", "-D", str(hdr), "-o", str(body), *args, url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    assert p.returncode == 0, f"{' '.join(cmd)}: rc={p.returncode} {p.stderr}"
    version, status, headers = parse_header_dump(hdr.read_text(errors="replace"))
    data = body.read_bytes() if body.exists() else b""
    return ClientResponse(version, status, headers, data, " ".join(cmd))


_NG_SEND = re.compile(r"send HEADERS frame <.*stream_id=(\d+)>")
_NG_PATH = re.compile(r"^\s+:path: (\S+)")
_NG_RECV = re.compile(r"recv \(stream_id=(\d+)\) (:status|[^:\s][^:]*): (.*)$")
# The -v trace, token by token: a line "[  0.123] ...", a continuation line of a frame (padding,
# flags, settings, header fields of a sent frame), or the banner; anything else is response
# data that nghttp printed for the DATA frame whose trace line follows it.
_NG_TS = re.compile(rb"\[ *\d+\.\d{3}\] ")
_NG_LINE = re.compile(rb"\[ *\d+\.\d{3}\] [^\n]*\n")
_NG_CONT = re.compile(rb" {10}(?:; [^\n]*|\([a-z_]+[=(][^\n]*\)|\[[A-Z0-9_]+\(0x[0-9a-f]+\):\d+\]"
                      rb"|:?[a-z0-9-]+: [^\n]*)\n")
_NG_BANNER = re.compile(rb"The negotiated protocol: [^\n]*\n")
_NG_DATA = re.compile(rb"\[ *(\d+\.\d+)\] recv DATA frame <length=(\d+), flags=0x([0-9a-f]+), "
                      rb"stream_id=(\d+)>\n")
_NG_PADLEN = re.compile(rb" +\(padlen=(\d+)\)\n")


@dataclass
class DataFrame:
    t: float        # nghttp's timestamp (seconds since it started)
    length: int     # the frame's payload length on the wire (padding included)
    data: bytes     # what nghttp printed for it: the payload, or for gzip/deflate its inflated
                    # output (nghttp decodes those codings itself)
    end_stream: bool


def _nghttp_data_frames(raw: bytes) -> dict[int, list[DataFrame]]:
    frames: dict[int, list[DataFrame]] = {}
    pending = bytearray()
    pos, n = 0, len(raw)
    while pos < n:
        m = _NG_LINE.match(raw, pos) or _NG_CONT.match(raw, pos) or _NG_BANNER.match(raw, pos)
        if m is None:  # response data, up to the next trace line
            nxt = _NG_TS.search(raw, pos)
            end = nxt.start() if nxt else n
            pending += raw[pos:end]
            pos = end
            continue
        pos = m.end()
        d = _NG_DATA.match(m.group(0))
        if d is None:
            continue
        length, flags, sid = int(d.group(2)), int(d.group(3), 16), int(d.group(4))
        frames.setdefault(sid, []).append(
            DataFrame(float(d.group(1)), length, bytes(pending), bool(flags & 0x01)))
        pending.clear()
        if flags & 0x08 and (pm := _NG_PADLEN.match(raw, pos)):
            frames[sid][-1].length -= int(pm.group(1)) + 1
    assert not pending, f"nghttp trace: {len(pending)} bytes of data after the last frame"
    return frames


def nghttp(urls: Sequence[str], headers: Sequence[str] = (),
           timeout: float = 60) -> dict[str, ClientResponse]:
    """One `nghttp -v -y` run: one h2 connection, the URLs as concurrent streams. Returns
    {path: response}: the response header fields from the -v trace, `frames` (the DATA frames
    with nghttp's timestamps) and `body`, what nghttp printed for them: the raw body, except
    that nghttp inflates gzip and deflate itself (`decoded_by_client` is then True). For raw
    bodies, each frame's printed bytes must match the frame's length (checks the parsing)."""
    cmd = [NGHTTP, "-v", "-y", "-t", str(int(timeout)), *[f"-H{h}" for h in headers], *urls]
    p = subprocess.run(cmd, capture_output=True, timeout=timeout + 10, check=False)
    raw = p.stdout
    trace = raw.decode("latin-1")
    assert p.returncode == 0, \
        f"{' '.join(cmd)}: rc={p.returncode}\n{trace[-4000:]}{p.stderr.decode(errors='replace')}"
    paths: dict[int, str] = {}
    hdrs: dict[int, list[tuple[str, str]]] = {}
    pending = None
    for line in trace.splitlines():
        if m := _NG_SEND.search(line):
            pending = int(m.group(1))
        elif pending is not None and (m := _NG_PATH.match(line)):
            paths[pending] = m.group(1)
            pending = None
        elif m := _NG_RECV.search(line):
            hdrs.setdefault(int(m.group(1)), []).append((m.group(2).lower(), m.group(3)))
    frames = _nghttp_data_frames(raw)
    out = {}
    for sid, path in paths.items():
        h = hdrs.get(sid, [])
        status = int(dict(h).get(":status", "0"))
        fl = frames.get(sid, [])
        resp = ClientResponse("2", status, [(k, v) for k, v in h if not k.startswith(":")],
                              b"".join(f.data for f in fl), trace)
        coding = (resp.header("content-encoding") or "").strip().lower()
        resp.decoded_by_client = coding in ("gzip", "x-gzip", "deflate")
        if not resp.decoded_by_client:
            for f in fl:
                assert len(f.data) == f.length, \
                    f"nghttp trace of {path}: {len(f.data)} bytes printed for a DATA frame " \
                    f"of {f.length}"
        resp.frames = fl
        out[path] = resp
    return out


@dataclass
class TimedStream:
    """A streamed response read as it arrived: decoded text and when each line was decoded
    (seconds since the client started)."""
    body: bytes
    line_times: list[float] = field(default_factory=list)
    t_end: float = 0.0
    wire_bytes: int = 0


def timed_stream(cmd: Sequence[str], coding: str | None, timeout: float = 30) -> TimedStream:
    """Runs `cmd` (a client writing the raw body to stdout, e.g. curl -sN), reads its stdout
    as it comes, decodes incrementally and records when each newline-terminated line was
    decoded. The client process is killed if it outlives `timeout`."""
    t0 = time.monotonic()
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dec = StreamDecoder(coding)
    out = bytearray()
    res = TimedStream(b"")
    try:
        fd = proc.stdout.fileno()
        while True:
            left = timeout - (time.monotonic() - t0)
            if left <= 0:
                raise AssertionError(f"{' '.join(cmd)}: no end after {timeout}s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            res.wire_bytes += len(chunk)
            out += dec.feed(chunk)
            now = time.monotonic() - t0
            while len(res.line_times) < out.count(b"\n"):
                res.line_times.append(now)
        out += dec.finish()
        res.t_end = time.monotonic() - t0
        rc = proc.wait(timeout=10)
        err = proc.stderr.read().decode(errors="replace")
        assert rc == 0, f"{' '.join(cmd)}: rc={rc} {err}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    res.body = bytes(out)
    return res
