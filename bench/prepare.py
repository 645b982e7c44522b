# SPDX-License-Identifier: Apache-2.0
"""bench/run's preparations and helpers: the Debian packages it needs, the Release build, the
versions and host it reports, the codecs (Python's zlib, brotli and zstandard) that write the
precompressed copies and check every body, and one HTTP/1.1 fetch."""

from __future__ import annotations

import os
import platform
import subprocess
import time
import zlib

import nginx_server
import servers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (Debian package, how to tell it is there)
APT_DEPS = [
    ("apache2", "/usr/sbin/apache2"),
    ("apache2-dev", "/usr/bin/apxs"),
    ("nginx", "/usr/sbin/nginx"),
    ("libnginx-mod-http-brotli-filter", nginx_server.NGINX_BROTLI),
    ("libnginx-mod-http-brotli-static", nginx_server.NGINX_BROTLI_STATIC),
    ("wrk", "/usr/bin/wrk"),
    ("nghttp2-client", "/usr/bin/h2load"),
    ("curl", "/usr/bin/curl"),
    ("openssl", "/usr/bin/openssl"),
    ("cmake", "/usr/bin/cmake"),
    ("g++", "/usr/bin/g++"),
    ("pkg-config", "/usr/bin/pkg-config"),
    ("zlib1g-dev", "/usr/include/zlib.h"),
    ("libbrotli-dev", "/usr/include/brotli/encode.h"),
    ("libzstd-dev", "/usr/include/zstd.h"),
    ("libdeflate-dev", "/usr/include/libdeflate.h"),
    ("libbenchmark-dev", "/usr/include/benchmark/benchmark.h"),
    ("npm", "/usr/bin/npm"),
    ("python3-matplotlib", "py:matplotlib"),
    ("python3-brotli", "py:brotli"),
    ("python3-zstandard", "py:zstandard"),
    # corpus files from Debian packages
    ("python3-dev", "/usr/share/doc/python3/python-policy.html"),
    ("valgrind", "/usr/share/doc/valgrind/html/licenses.html"),
    ("apache2-data", "/usr/share/apache2/icons/apache_pb.svg"),
]


class Interrupted(Exception):
    pass


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------
def _present(check: str) -> bool:
    if check.startswith("py:"):
        try:
            __import__(check[3:])
            return True
        except ImportError:
            return False
    return os.path.exists(check)


def ensure_deps() -> None:
    missing = [pkg for pkg, check in APT_DEPS if not _present(check)]
    if not missing:
        return
    log(f"installing Debian packages: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, timeout=600)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                   check=True, env=env, timeout=1200, stdout=subprocess.DEVNULL)
    still = [pkg for pkg, check in APT_DEPS if not _present(check)]
    if still:
        raise RuntimeError(f"still missing after apt-get install: {' '.join(still)}")


def build(build_dir: str, with_module: bool) -> tuple[str | None, str | None]:
    """Configures and builds (Release); returns (module .so, bench_encoders) paths."""
    log(f"building in {build_dir} (Release)")
    cfg = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
           "-DMC_BUILD_TESTS=OFF", f"-DMC_BUILD_MODULE={'ON' if with_module else 'OFF'}"]
    # Only what the bench needs (the module, the precompress tool for the sidecars, bench/floor's
    # two modules: the hits' floor rows and vs_nginx.py --lib-floor; not the tests), so --quick
    # stays short on a fresh checkout.
    targets = ["mc_core"] + (["mod_multicompress", "multicompress-precompress", "mod_mc_floor",
                              "mod_mc_libfloor"] if with_module else [])
    if os.path.exists("/usr/include/benchmark/benchmark.h"):
        targets.append("bench_encoders")
    for cmd in (cfg, ["cmake", "--build", build_dir, "-j2", "--target", *targets]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{(r.stdout + r.stderr)[-4000:]}")
    so = os.path.join(build_dir, "mod_multicompress", "httpd", "mod_multicompress.so")
    enc = os.path.join(build_dir, "bench", "bench_encoders")
    if with_module and not os.path.isfile(so):
        raise RuntimeError(f"build succeeded but {so} is missing")
    return (so if with_module else None), (enc if os.path.isfile(enc) else None)


def versions() -> dict[str, str]:
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            return (r.stdout + r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"

    def dpkg(pkg):
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                           text=True)
        return r.stdout.strip() or "?"

    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "?"
    return {
        "mod_multicompress": git,
        "apache2": first_line([servers.APACHE_BIN, "-v"]).replace("Server version: ", ""),
        "nginx": first_line([nginx_server.NGINX_BIN, "-v"]).replace("nginx version: ", ""),
        "ngx_brotli": dpkg("libnginx-mod-http-brotli-filter"),
        "ngx_brotli static": dpkg("libnginx-mod-http-brotli-static"),
        "zlib": dpkg("zlib1g"),
        "brotli": dpkg("libbrotli1"),
        "zstd": dpkg("libzstd1"),
        "wrk": dpkg("wrk"),
        "h2load": dpkg("nghttp2-client"),
        "openssl": dpkg("openssl"),
    }


def host(load_start: float) -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{os.cpu_count()} CPUs ({model}), {platform.system()} {platform.release()}, "
            f"1-minute load average {load_start:.2f} at the start, "
            f"{os.getloadavg()[0]:.2f} at the end")


# ---------------------------------------------------------------------------------------------
def compress(coding: str, level: int, data: bytes) -> bytes:
    if coding == "gzip":
        c = zlib.compressobj(level, zlib.DEFLATED, 31, 8)
        return c.compress(data) + c.flush()
    if coding == "br":
        import brotli
        return brotli.compress(data, quality=level)
    import zstandard
    return zstandard.ZstdCompressor(level=level).compress(data)


def decode(coding: str, body: bytes) -> bytes:
    if coding == "identity":
        return body
    if coding == "gzip":
        d = zlib.decompressobj(31)
        out = d.decompress(body)
        if not d.eof or d.unused_data:
            raise ValueError("gzip stream not properly terminated")
        return out
    if coding == "br":
        import brotli
        return brotli.decompress(body)
    import zstandard
    d = zstandard.ZstdDecompressor().decompressobj()
    out = d.decompress(body)
    if not d.eof:
        raise ValueError("zstd frame not finished")
    return out


def fetch(port: int, path: str, encoding: str) -> tuple[int, dict[str, str], bytes]:
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": encoding})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()
