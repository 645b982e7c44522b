# SPDX-License-Identifier: Apache-2.0
"""Invalid directive values stop `apache2 -t` (and startup) with a message naming the
directive, the file and the line; valid boundary values pass. The module refuses to run
beside mod_deflate or mod_brotli."""
import re

import pytest

from mc_process import free_port
from mc_server import HttpdServer

# Directives placed on a line of their own at the end of the configuration.
INVALID = [
    "MultiCompressEncodings gzip foo",
    "MultiCompressEncodings compress",
    "MultiCompressEncodings gzip gzip",
    "MultiCompressEncodings",
    "MultiCompressLevel gzip 0",
    "MultiCompressLevel gzip 10",
    "MultiCompressLevel br 12",
    "MultiCompressLevel br -1",
    "MultiCompressLevel zstd 0",
    "MultiCompressLevel zstd 20",
    "MultiCompressLevel zstd 3x",
    "MultiCompressLevel foo 5",
    "MultiCompressLevel gzip",
    "MultiCompressWindow gzip 8",
    "MultiCompressWindow gzip 16",
    "MultiCompressWindow br 9",
    "MultiCompressWindow br 25",
    "MultiCompressWindow zstd 9",
    "MultiCompressWindow zstd 24",
    "MultiCompressWindow zstd 27",
    "MultiCompressMinLength -1",
    "MultiCompressMinLength abc",
    "MultiCompressMinLength 10X",
    "MultiCompressBufferSize 0",
    "MultiCompressBufferSize abc",
    "MultiCompressBufferSize -8192",
    "MultiCompressAlterETag Sometimes",
    "MultiCompressAlterETag",
]

VALID = """
MultiCompressEncodings zstd br gzip deflate
<Location /case/>
    MultiCompressEncodings GZIP Br ZSTD
</Location>
MultiCompressLevel gzip 1
MultiCompressLevel gzip 9
MultiCompressLevel br 0
MultiCompressLevel br 11
MultiCompressLevel zstd 1
MultiCompressLevel zstd 19
MultiCompressLevel deflate 9
MultiCompressWindow gzip 9
MultiCompressWindow gzip 15
MultiCompressWindow br 10
MultiCompressWindow br 24
MultiCompressWindow zstd 10
MultiCompressWindow zstd 23
MultiCompressMinLength 0
MultiCompressMinLength 1048576
MultiCompressBufferSize 8192
MultiCompressBufferSize 65536
MultiCompressAlterETag AddSuffix
MultiCompressAlterETag NoChange
MultiCompressAlterETag Remove
"""


def configtest(env, tmp_name: str, extra: str):
    srv = HttpdServer(env, tmp_name, site_template=None, extra_conf=extra, trace=False)
    srv.port = free_port()
    srv.render()
    p = srv.configtest()
    return srv, p, p.stdout + p.stderr


def line_of(conf: str, needle: str) -> int:
    for i, line in enumerate(conf.splitlines(), 1):
        if line.strip() == needle.strip():
            return i
    raise AssertionError(f"{needle!r} not in the configuration")


def test_mc_700_01_valid_values_pass(env):
    srv, p, out = configtest(env, "cfg-valid", VALID)
    assert p.returncode == 0, out
    assert "Syntax OK" in out


def test_mc_700_02_valid_in_every_section(env):
    sections = "\n".join(
        f"<{kind} {arg}>\n    MultiCompressEncodings br gzip\n    MultiCompressLevel br 5\n"
        f"    MultiCompressWindow zstd 20\n    MultiCompressMinLength 1k\n</{kind}>"
        for kind, arg in (("Directory", '"@HTDOCS@/x"'), ("Location", "/y/"),
                          ("Files", '"*.css"'), ("VirtualHost", "127.0.0.1:@PORT@")))
    srv, p, out = configtest(env, "cfg-sections", sections)
    assert p.returncode == 0, out


@pytest.mark.parametrize("directive", INVALID)
def test_mc_700_03_invalid_value_fails_configtest(env, directive):
    srv, p, out = configtest(env, "cfg-bad", f"# before\n{directive}\n# after\n")
    conf = srv.conf_path.read_text()
    n = line_of(conf, directive)
    assert p.returncode != 0, f"{directive!r} accepted:\n{out}"
    name = directive.split()[0]
    assert name in out, out
    assert re.search(rf"[Ss]yntax error on line {n} of {re.escape(str(srv.conf_path))}", out), \
        out
    assert "Segmentation fault" not in out


@pytest.mark.parametrize("directive", ["MultiCompressLevel br 99",
                                       "MultiCompressEncodings gzip lzma"])
def test_mc_700_04_invalid_in_directory_section(env, directive):
    srv, p, out = configtest(
        env, "cfg-bad-dir", f'<Directory "@HTDOCS@/static">\n    {directive}\n</Directory>\n')
    n = line_of(srv.conf_path.read_text(), directive)
    assert p.returncode != 0, out
    assert directive.split()[0] in out
    assert f"line {n} of {srv.conf_path}" in out, out


def test_mc_700_05_invalid_value_stops_startup(env, make_server):
    srv = make_server("cfg-bad-start", site_template=None,
                      extra_conf="MultiCompressLevel zstd 42\n")
    srv.log_check = False
    live, out = srv.try_start()
    assert not live, "httpd started with MultiCompressLevel zstd 42"
    assert "MultiCompressLevel" in out, out


@pytest.mark.parametrize("other", ["deflate", "brotli"])
def test_mc_700_06_refuses_mod_deflate_and_mod_brotli(env, make_server, other):
    srv = make_server(f"cfg-with-{other}", site_template=None, extra_modules=[other])
    srv.log_check = False
    live, out = srv.try_start()
    assert not live, f"httpd started with mod_{other} and mod_multicompress both loaded"
    assert re.search(rf"mod_{other}", out), out
    for bad in ("Segmentation fault", "exit signal", "AddressSanitizer"):
        assert bad not in out
