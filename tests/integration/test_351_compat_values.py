# SPDX-License-Identifier: Apache-2.0
"""Drop-in replacement for mod_deflate and mod_brotli, their directives' values (the meaning of
each is checked in test_350_compat_directives.py): `apache2 -t` accepts the values those modules
accept and refuses the values they refuse."""
import pytest

from mc_process import free_port
from mc_server import HttpdServer


VALID = """
DeflateCompressionLevel 1
DeflateCompressionLevel 9
DeflateWindowSize 1
DeflateWindowSize 15
DeflateMemLevel 1
DeflateMemLevel 9
DeflateBufferSize 1
DeflateBufferSize 8096
DeflateFilterNote ratio_only
DeflateFilterNote Input n_in
DeflateFilterNote Output n_out
DeflateFilterNote Ratio n_ratio
DeflateAlterETag AddSuffix
DeflateAlterETag NoChange
DeflateAlterETag Remove
DeflateInflateLimitRequestBody 0
DeflateInflateLimitRequestBody 10485760
DeflateInflateRatioLimit 1
DeflateInflateRatioLimit 200
DeflateInflateRatioBurst 1
DeflateInflateRatioBurst 3
BrotliCompressionQuality 0
BrotliCompressionQuality 11
BrotliCompressionWindow 10
BrotliCompressionWindow 24
BrotliCompressionMaxInputBlock 16
BrotliCompressionMaxInputBlock 24
BrotliFilterNote br_ratio
BrotliFilterNote Input b_in
BrotliFilterNote Output b_out
BrotliFilterNote Ratio b_ratio
BrotliAlterETag AddSuffix
BrotliAlterETag NoChange
BrotliAlterETag Remove
<Directory "@HTDOCS@/static">
    DeflateCompressionLevel 5
    BrotliCompressionQuality 5
</Directory>
"""

INVALID = [
    "DeflateCompressionLevel 0", "DeflateCompressionLevel 10", "DeflateCompressionLevel abc",
    "DeflateWindowSize 0", "DeflateWindowSize 16",
    "DeflateMemLevel 0", "DeflateMemLevel 10",
    "DeflateBufferSize 0", "DeflateBufferSize abc",
    "DeflateFilterNote Sideways name",
    "DeflateAlterETag Sometimes",
    "DeflateInflateLimitRequestBody -1", "DeflateInflateLimitRequestBody lots",
    "DeflateInflateRatioLimit 0", "DeflateInflateRatioLimit x",
    "DeflateInflateRatioBurst -1",
    "BrotliCompressionQuality 12", "BrotliCompressionQuality -1",
    "BrotliCompressionWindow 9", "BrotliCompressionWindow 25",
    "BrotliCompressionMaxInputBlock 15", "BrotliCompressionMaxInputBlock 25",
    "BrotliFilterNote Sideways name",
    "BrotliAlterETag Sometimes",
]


def configtest(env, name: str, extra: str):
    srv = HttpdServer(env, name, site_template=None, extra_conf=extra, trace=False)
    srv.port = free_port()
    srv.render()
    p = srv.configtest()
    return srv, p, p.stdout + p.stderr


def test_mc_350_14_compat_values_accepted(env):
    _, p, out = configtest(env, "t350-valid", VALID)
    assert p.returncode == 0 and "Syntax OK" in out, out


@pytest.mark.parametrize("directive", INVALID)
def test_mc_350_15_compat_invalid_refused(env, directive):
    srv, p, out = configtest(env, "t350-bad", f"# before\n{directive}\n")
    assert p.returncode != 0, f"{directive!r} accepted:\n{out}"
    lines = srv.conf_path.read_text().splitlines()
    n = lines.index(directive) + 1
    assert directive.split()[0] in out, out
    assert f"line {n} of {srv.conf_path}" in out, out
