# SPDX-License-Identifier: Apache-2.0
"""TLS + HTTP/2 for bench/run: a certificate made at bench time, one checked fetch over HTTP/2
(curl --http2, the body left encoded for the Python decoders) and the load generator (h2load,
Debian's nghttp2-client)."""

from __future__ import annotations

import os
import re
import subprocess


def make_certificate(directory: str) -> tuple[str, str]:
    """A self-signed ECDSA P-256 certificate for 127.0.0.1 (what a site's certificate mostly is
    today), valid for two days; returns (certificate, key) paths readable by the servers."""
    os.makedirs(directory, exist_ok=True)
    cert = os.path.join(directory, "cert.pem")
    key = os.path.join(directory, "key.pem")
    cmd = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
           "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
           "subjectAltName=IP:127.0.0.1,DNS:localhost", "-addext",
           "basicConstraints=critical,CA:FALSE", "-keyout", key, "-out", cert]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    os.chmod(cert, 0o644)
    os.chmod(key, 0o600)   # read by the servers' parents (root) before they drop privileges
    return cert, key


def fetch(port: int, path: str, encoding: str, workdir: str,
          extra: tuple[str, ...] = ()) -> tuple[int, dict[str, str], bytes]:
    """GET over TLS + HTTP/2 with curl (no --compressed: the body stays as sent), with the
    request headers `extra` ("Name: value") added. Returns the status, the headers (lower-case
    names) and the body; raises when the connection was not HTTP/2."""
    head = os.path.join(workdir, "h2-fetch.head")
    body = os.path.join(workdir, "h2-fetch.body")
    cmd = ["curl", "-sS", "-k", "--http2", "--max-time", "30", "-H", f"Accept-Encoding: {encoding}",
           *[a for h in extra for a in ("-H", h)], "-D", head, "-o", body,
           "-w", "%{http_version} %{http_code}",
           f"https://127.0.0.1:{port}{path}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise OSError(f"curl exited with {r.returncode}: {r.stderr.strip()[-500:]}")
    version, code = r.stdout.split()
    if version != "2":
        raise OSError(f"HTTP/{version}, not HTTP/2 (ALPN)")
    headers: dict[str, str] = {}
    with open(head, errors="replace") as f:
        for line in f:
            if ":" in line and not line.startswith("HTTP/"):
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
    with open(body, "rb") as f:
        data = f.read()
    return int(code), headers, data


def load(port: int, path: str, encoding: str, clients: int, seconds: int,
         threads: int = 1, headers: tuple[str, ...] = ()) -> tuple[subprocess.Popen, callable]:
    """Starts `h2load -tT -cN -m1 -D S` (N clients of one connection each, one request at a time
    on it, like wrk's keep-alive connections; `headers` added to every request) and returns
    (process, parse) where parse(output) gives a summary in the shape of bench/run's wrk one."""
    cmd = ["h2load", f"-t{threads}", f"-c{clients}", "-m1", "-D", str(seconds),
           "-H", f"Accept-Encoding: {encoding}", *[a for h in headers for a in ("-H", h)],
           f"https://127.0.0.1:{port}{path}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)

    def parse(out: str) -> dict:
        if "Application protocol: h2" not in out:
            raise RuntimeError(f"h2load did not speak h2: {' '.join(cmd)}:\n{out[-2000:]}")
        fin = re.search(r"finished in ([\d.]+)(m?s)", out)
        req = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                        r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
        codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
        traffic = re.search(r"traffic: .*?\((\d+)\) total", out)
        if not (fin and req and codes):
            raise RuntimeError(f"no h2load summary from {' '.join(cmd)}:\n{out[-2000:]}")
        secs = float(fin.group(1)) / (1000 if fin.group(2) == "ms" else 1)
        ok = int(codes.group(1)) + int(codes.group(2))
        return {"requests": ok, "duration_us": int(secs * 1e6),
                "bytes": int(traffic.group(1)) if traffic else 0,
                "connect": 0, "read": int(req.group(6)), "write": 0,
                "status": int(codes.group(3)) + int(codes.group(4)),
                "timeout": int(req.group(7)), "failed": int(req.group(5)),
                "lat_p50_us": None, "lat_p99_us": None}

    return proc, parse
