# SPDX-License-Identifier: Apache-2.0
"""The demo (conf/demo) for test_497_demo.py: made by conf/demo/prepare.sh exactly as
scripts/demo.sh makes it, in a directory of its own on free ports (`DemoServer`), and
scripts/demo.sh itself started on an existing build (`demo_sh`)."""
from __future__ import annotations

import configparser
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from mc_process import free_port
from mc_server import HttpdServer, StartError
from mc_tls import repo_root


def precompress_path(env) -> Path:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(env.ini_path)
    p = cp["global"].get("precompress_path")
    if not p or not Path(p).exists():
        pytest.fail(f"multicompress-precompress not built ({env.ini_path})", pytrace=False)
    return Path(p)


class DemoServer(HttpdServer):
    """The demo in a directory of its own, made by conf/demo/prepare.sh."""

    def __init__(self, env, name: str):
        super().__init__(env, name, site_template=None)
        self.tls_port = 0

    @property
    def conf_path(self) -> Path:
        return self.gen / "httpd.conf"

    @property
    def pid_file(self) -> Path:
        return self.gen / "logs" / "httpd.pid"

    def render(self) -> None:
        self.gen = self._new_gen_dir()
        self.tls_port = free_port()
        while self.tls_port == self.port:
            self.tls_port = free_port()
        p = subprocess.run(
            [str(repo_root(self.env) / "conf" / "demo" / "prepare.sh"), "--dir", str(self.gen),
             "--module", str(self.env.module_path), "--precompress", str(precompress_path(self.env)),
             "--http-port", str(self.port), "--https-port", str(self.tls_port),
             "--modules", str(self.env.modules_dir)],
            capture_output=True, text=True, timeout=300, check=False)
        if p.returncode != 0:
            raise StartError(f"prepare.sh failed: {p.stdout}{p.stderr}")

    def site_dictionary(self) -> dict:
        """What prepare.sh wrote about the dictionary it trained: url, bytes, sha256, hex."""
        return json.loads((self.htdocs / "site-dictionary" / "dictionary.json").read_text())

    def releases(self) -> list[dict]:
        page = (self.htdocs / "dictionary" / "index.html").read_text()
        return json.loads(re.search(r'<script type="application/json" id="releases">(.*?)</script>',
                                    page, re.S).group(1))


def demo_sh(env, demo_dir: Path, http_port: int, https_port: int, **kw) -> subprocess.Popen:
    environ = {**os.environ, "MC_DEMO_BUILD_DIR": str(env.module_path.parents[2]),
               "MC_DEMO_APACHE": str(env.apache_bin),
               "MC_DEMO_DIR": str(demo_dir), "MC_DEMO_HTTP_PORT": str(http_port),
               "MC_DEMO_HTTPS_PORT": str(https_port)}
    return subprocess.Popen([str(repo_root(env) / "scripts" / "demo.sh")], env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
