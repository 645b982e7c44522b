# SPDX-License-Identifier: Apache-2.0
"""nginx under test: Debian's nginx with gzip and ngx_brotli in a temp prefix (the lifecycle,
readiness and accounting are servers.Server's)."""

from __future__ import annotations

import os

from servers import COMPRESSIBLE, MEDIA_TYPES, Server, _run_user

NGINX_BIN = "/usr/sbin/nginx"
NGINX_BROTLI = "/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so"
NGINX_BROTLI_STATIC = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"


class Nginx(Server):
    """Debian's nginx with gzip and ngx_brotli (libnginx-mod-http-brotli-filter and -static), in
    a temp prefix, `daemon off`, 2 worker processes (one per core), `sendfile on` (Debian's
    nginx.conf). Port keys: (coding, level) compresses live, ("identity", 0) does not compress,
    ("static", 0) serves FILE.gz / FILE.br when they exist (`gzip_static`, `brotli_static`)."""

    label = "nginx"

    def __init__(self, workdir: str, docroot: str, ports: dict[tuple[str, int], int],
                 send_buffer: int | None = None, tls: tuple[str, str] | None = None,
                 label: str | None = None):
        super().__init__(workdir, docroot, ports, tls)
        if label:
            self.label = label
        self.send_buffer = send_buffer
        self.conf_path = os.path.join(workdir, "nginx.conf")

    def command(self) -> list[str]:
        return [NGINX_BIN, "-p", self.workdir + "/", "-c", self.conf_path, "-e", self.log_path]

    def write_config(self) -> None:
        user, group = _run_user()
        tmp = os.path.join(self.workdir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        types = "\n".join(f"        {t} {ext};" for ext, t in MEDIA_TYPES.items())
        servers = []
        sndbuf = f" sndbuf={self.send_buffer}" if self.send_buffer else ""
        tls, certs = "", ""
        if self.tls:
            tls = " ssl http2"
            certs = (f"\n        ssl_certificate {self.tls[0]};"
                     f"\n        ssl_certificate_key {self.tls[1]};")
        for (coding, level), port in sorted(self.ports.items(), key=lambda kv: kv[1]):
            if coding == "static":
                comp = "gzip off; brotli off; gzip_static on; brotli_static on;"
            elif coding == "gzip":
                comp = f"gzip on; gzip_comp_level {level}; brotli off;"
            elif coding == "br":
                comp = f"brotli on; brotli_comp_level {level}; gzip off;"
            else:
                comp = "gzip off; brotli off;"
            servers.append(f"""    server {{
        listen 127.0.0.1:{port} reuseport{sndbuf}{tls};
        root {self.docroot};{certs}
        {comp}
    }}""")
        conf = f"""load_module {NGINX_BROTLI};
load_module {NGINX_BROTLI_STATIC};
user {user} {group};
daemon off;
master_process on;
worker_processes 2;
pid {self.workdir}/nginx.pid;
error_log {self.log_path} warn;
events {{
    worker_connections 2048;
}}
http {{
    types {{
{types}
    }}
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 30;
    keepalive_requests 1000000;
    client_body_temp_path {tmp}/client;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    gzip_types {' '.join(t for t in COMPRESSIBLE if t != 'text/html')};
    gzip_vary on;
    brotli_types {' '.join(t for t in COMPRESSIBLE if t != 'text/html')};
{chr(10).join(servers)}
}}
"""
        with open(self.conf_path, "w") as f:
            f.write(conf)
