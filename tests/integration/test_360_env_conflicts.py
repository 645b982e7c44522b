# SPDX-License-Identifier: Apache-2.0
"""As a drop-in for mod_deflate and mod_brotli: mod_deflate's environment variables set with
SetEnvIf or SetEnv (no-gzip, no-brotli, no-zstd, gzip-only-text/html, force-gzip), and the refusal
to run beside mod_deflate or mod_brotli, whichever order they are loaded in."""
import pytest

from mc_bodies import static_file
from mc_client import assert_encoded, request
from mc_drop_in import CODINGS, start_dropin, stop_checked
from mc_process import free_port
from mc_server import HttpdServer

ALL = "zstd, br, gzip"

SITE = r"""
# server context: evaluated right after the request line (post_read_request)
SetEnvIf X-Mc-Env "^no-gzip$" no-gzip
SetEnvIf X-Mc-Env "^no-brotli$" no-brotli
SetEnvIf X-Mc-Env "^no-zstd$" no-zstd
SetEnvIf X-Mc-Env "^gzip-only$" gzip-only-text/html
SetEnvIf X-Mc-Env "^force-gzip$" force-gzip
SetEnvIf X-Mc-Env "^no-br-zstd$" no-brotli no-zstd

Alias /env "@HTDOCS@/static"
<Location /env/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
</Location>
Alias /env-deflate "@HTDOCS@/static"
<Location /env-deflate/>
    AddOutputFilterByType DEFLATE;BROTLI_COMPRESS;ZSTD @TEXT_TYPES@
</Location>
# SetEnv (fixups) in a section, the other common way
Alias /setenv-nogzip "@HTDOCS@/static"
<Location /setenv-nogzip/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    SetEnv no-gzip 1
</Location>
Alias /setenv-force "@HTDOCS@/static"
<Location /setenv-force/>
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    SetEnv force-gzip 1
</Location>
# the mod_deflate manual's idiom: BrowserMatch / SetEnvIfNoCase by file name
Alias /envif "@HTDOCS@/static"
<Location /envif/>
    SetOutputFilter MULTICOMPRESS
    SetEnvIfNoCase Request_URI "\.css$" no-gzip dont-vary
</Location>
"""


@pytest.fixture(scope="module")
def srv(env):
    s = start_dropin(env, "t360", SITE)
    yield s
    stop_checked(s)


def get(srv, path, ae, env_value=None):
    headers = [("X-Mc-Env", env_value)] if env_value else []
    return request(srv.port, path, ae, headers=headers)


@pytest.mark.parametrize("prefix", ["/env/", "/env-deflate/"])
@pytest.mark.parametrize("ae", [ALL, "gzip", "br", "zstd", "*"])
def test_mc_360_01_no_gzip_means_nothing(env, srv, prefix, ae):
    r = get(srv, prefix + "page.html", ae, "no-gzip")
    assert_encoded(r, None, static_file(env, "page.html"), vary=False)
    # sanity: the same request without the variable is compressed
    assert get(srv, prefix + "page.html", ae).header("Content-Encoding") is not None


@pytest.mark.parametrize("ae", [ALL, "gzip", "br", "zstd"])
def test_mc_360_02_no_gzip_setenv(env, srv, ae):
    r = request(srv.port, "/setenv-nogzip/style.css", ae)
    assert_encoded(r, None, static_file(env, "style.css"), vary=False)


@pytest.mark.parametrize("ae,want", [("br", None), ("br, gzip", "gzip"),
                                     ("br;q=1, zstd;q=0.5", "zstd"), (ALL, "zstd"),
                                     ("br, gzip;q=0.1, zstd;q=0.2", "zstd")])
@pytest.mark.parametrize("prefix", ["/env/", "/env-deflate/"])
def test_mc_360_03_no_brotli(env, srv, prefix, ae, want):
    """A brotli client gets its next choice."""
    r = get(srv, prefix + "page.html", ae, "no-brotli")
    assert_encoded(r, want, static_file(env, "page.html"))


@pytest.mark.parametrize("ae,want", [("zstd", None), (ALL, "br"), ("zstd, gzip", "gzip"),
                                     ("zstd;q=1, gzip;q=0.9, br;q=0.8", "gzip")])
@pytest.mark.parametrize("prefix", ["/env/", "/env-deflate/"])
def test_mc_360_04_no_zstd(env, srv, prefix, ae, want):
    r = get(srv, prefix + "page.html", ae, "no-zstd")
    assert_encoded(r, want, static_file(env, "page.html"))


def test_mc_360_05_no_brotli_no_zstd(env, srv):
    r = get(srv, "/env/page.html", ALL, "no-br-zstd")
    assert_encoded(r, "gzip", static_file(env, "page.html"))


@pytest.mark.parametrize("ae,coding", [("gzip", "gzip"), (ALL, "zstd"), ("br", "br")])
@pytest.mark.parametrize("prefix", ["/env/", "/env-deflate/"])
def test_mc_360_06_gzip_only_text_html(env, srv, prefix, ae, coding):
    """gzip-only-text/html (value 1, as SetEnvIf sets it): text/html is compressed, the rest is
    not."""
    html = get(srv, prefix + "page.html", ae, "gzip-only")
    assert_encoded(html, coding, static_file(env, "page.html"))
    for doc in ("style.css", "app.js", "data.json"):
        r = get(srv, prefix + doc, ae, "gzip-only")
        assert r.status == 200 and r.header("Content-Encoding") is None, (doc, r)
        assert r.body == static_file(env, doc)
    # sanity: without it css is compressed
    assert get(srv, prefix + "style.css", ae).header("Content-Encoding") == coding


@pytest.mark.parametrize("prefix", ["/env/", "/env-deflate/"])
def test_mc_360_07_force_gzip(env, srv, prefix):
    """force-gzip: a client that sends no Accept-Encoding gets gzip."""
    plain = get(srv, prefix + "page.html", None)
    assert plain.header("Content-Encoding") is None
    r = get(srv, prefix + "page.html", None, "force-gzip")
    assert_encoded(r, "gzip", static_file(env, "page.html"))


def test_mc_360_08_force_gzip_setenv(env, srv):
    r = request(srv.port, "/setenv-force/app.js", None)
    assert_encoded(r, "gzip", static_file(env, "app.js"))


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_360_09_setenvif_request_uri(env, srv, coding):
    css = request(srv.port, "/envif/style.css", coding)
    assert css.status == 200 and css.header("Content-Encoding") is None
    assert css.body == static_file(env, "style.css")
    html = request(srv.port, "/envif/page.html", coding)
    assert_encoded(html, coding, static_file(env, "page.html"))


# ---- refusing mod_deflate and mod_brotli, loaded before or after us

def conflict_server(env, name: str, before: list[str], after: list[str]) -> HttpdServer:
    extra = "\n".join(f'LoadModule {m}_module "{env.modules_dir / f"mod_{m}.so"}"' for m in after)
    srv = HttpdServer(env, name, site_template=None, extra_modules=before, extra_conf=extra,
                      trace=False)
    srv.log_check = False
    return srv


CONFLICTS = {
    "deflate-before": (["deflate"], [], ["deflate"]),
    "deflate-after": ([], ["deflate"], ["deflate"]),
    "brotli-before": (["brotli"], [], ["brotli"]),
    "brotli-after": ([], ["brotli"], ["brotli"]),
    "both": (["deflate"], ["brotli"], ["deflate", "brotli"]),
}


@pytest.mark.parametrize("case", list(CONFLICTS))
def test_mc_360_10_conflict_configtest(env, case):
    before, after, named = CONFLICTS[case]
    srv = conflict_server(env, f"t360-{case}", before, after)
    srv.port = free_port()
    srv.render()
    conf = srv.conf_path.read_text()
    ours = conf.index("multicompress_module")
    for m in before:
        assert conf.index(f"{m}_module") < ours
    for m in after:
        assert conf.index(f"{m}_module") > ours
    p = srv.configtest()
    out = p.stdout + p.stderr
    assert p.returncode != 0, f"apache2 -t passed with mod_{'/'.join(named)} loaded:\n{out}"
    assert "Syntax OK" not in out
    for m in named:
        assert f"mod_{m}" in out, out
        assert f"a2dismod {m}" in out, out


@pytest.mark.parametrize("case", ["deflate-after", "brotli-before"])
def test_mc_360_11_conflict_startup(env, case):
    before, after, named = CONFLICTS[case]
    srv = conflict_server(env, f"t360-start-{case}", before, after)
    live, out = srv.try_start()
    if live:
        srv.stop()
    assert not live, f"httpd started with mod_{named[0]} loaded"
    assert f"mod_{named[0]}" in out and f"a2dismod {named[0]}" in out, out
