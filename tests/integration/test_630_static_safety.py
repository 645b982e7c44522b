# SPDX-License-Identifier: Apache-2.0
"""Sidecars and the cache: what may be sent.

A sidecar (FILE.zst, FILE.br, FILE.gz) is sent only when httpd itself would send that file at
its own URL to the same client: the symlink Options (FollowSymLinks, SymLinksIfOwnerMatch,
neither), the access rules of <Directory>, <Files>, <FilesMatch>, <Location> and .htaccess that
apply to the sidecar's name, its handler, and file permissions. Otherwise FILE is compressed
live. Refused sidecars cost no error-log line per request, and an unreadable one is reported
once per child for each version of the file. A cache hit is sent only while the default handler
could still open FILE.
"""
from __future__ import annotations

import os
import pwd
import time
from pathlib import Path

import pytest

from mc_client import request
from mc_decode import decode
from mc_server import HttpdServer, LEVEL_RE
from mc_stores import (SOURCE_LOG_CONF, SUFFIX, compress, copy_static, get, log_lines_matching,
                       poll_until, pid_of_log_line, reference, write_file, write_sidecar)

CODINGS = ("zstd", "br", "gzip")
ONE_CHILD = ("StartServers 1\nServerLimit 1\nThreadsPerChild 16\nMaxRequestWorkers 16\n"
             "MinSpareThreads 1\nMaxSpareThreads 16\n")
SECRET = b"<p>SECRET: a file outside the DocumentRoot, never to be sent</p>\n" * 200

SITE = SOURCE_LOG_CONF + """
<Directory "@HTDOCS@/own">
    Options SymLinksIfOwnerMatch
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/follow">
    Options FollowSymLinks
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
# Options None (from the DocumentRoot)
<Directory "@HTDOCS@/nolinks">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
# the link's target, outside the DocumentRoot, that httpd would send at the link's URL when
# the Options allow the link
<Directory "@GEN@/secret">
    Require all granted
</Directory>
<Directory "@HTDOCS@/deny">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
    <Files "*.br">
        Require all denied
    </Files>
    # depends on the client: 127.0.0.1 is not 192.0.2.1
    <FilesMatch "\\.zst$">
        Require ip 192.0.2.1
    </FilesMatch>
</Directory>
<Directory "@HTDOCS@/htd">
    AllowOverride AuthConfig FileInfo
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/loc">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
<LocationMatch "^/loc/.*\\.html\\.gz$">
    Require all denied
</LocationMatch>
<Directory "@HTDOCS@/hand">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
    AddHandler cgi-script .gz
</Directory>
<Directory "@HTDOCS@/perm">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressStatic On
</Directory>
<Directory "@HTDOCS@/cached">
    AddOutputFilterByType MULTICOMPRESS @TEXT_TYPES@
    MultiCompressCache On
</Directory>
"""
DIRS = ("own", "follow", "nolinks", "deny", "htd", "loc", "hand", "perm", "cached")
# httpd's own lines when the sidecar's URL itself is requested
REFUSALS = r"AH00037|AH01630|AH01797|AH00132|AH01215|AH02811|Options ExecCGI"


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: files owned by another user than the children's")


@pytest.fixture(scope="module")
def srv(env):
    s = HttpdServer(env, "static-safety", site_template=None, extra_conf=SITE,
                    extra_modules=["authz_host", "socache_shmcb"], mpm_conf=ONE_CHILD,
                    htdocs_copies=[(d, "static") for d in DIRS])
    try:
        s.start()
        (s.gen / "secret").mkdir()
        os.chmod(s.gen / "secret", 0o755)
        s.htdocs.joinpath("htd", ".htaccess").write_text(
            '<Files "*.html.gz">\n    Require all denied\n</Files>\n')
        os.chmod(s.htdocs / "htd" / ".htaccess", 0o644)
        yield s
    finally:
        s.stop()


def copy_in(srv: HttpdServer, d: str, name: str = "page.html") -> tuple[str, Path, bytes]:
    url, path = copy_static(srv, name, f"/{d}", d)
    return url, path, path.read_bytes()


def secret_link(srv: HttpdServer, path: Path, coding: str, link_owner: int) -> bytes:
    """FILE.SUFFIX -> a sidecar of SECRET outside the DocumentRoot (owned by root), the link
    itself owned by `link_owner`. Returns the bytes of the target."""
    body = compress(SECRET, coding)
    target = write_file(srv.gen / "secret" / (path.name + SUFFIX[coding]), body,
                        path.stat().st_mtime + 60)
    link = Path(str(path) + SUFFIX[coding])
    os.symlink(target, link)
    os.lchown(link, link_owner, -1)
    return body


def child_uid() -> int:
    return pwd.getpwnam(next(u for u in ("www-data", "daemon", "nobody")
                             if _has_user(u))).pw_uid


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def assert_live(got, coding: str, original: bytes, not_body: bytes) -> None:
    r = got.resp
    assert r.status == 200, r
    assert r.header_all("Content-Encoding") == [coding], r
    assert r.body != not_body, "the refused sidecar was sent"
    assert decode(r.body, coding) == original, "decoded body differs from the file"
    assert got.note == "live", got


def assert_quiet(srv: HttpdServer, mark: int) -> None:
    """No [warn] or worse since `mark`: a refused sidecar is not an error for every request."""
    time.sleep(0.2)
    bad = [l for l in srv.log_lines(mark) if LEVEL_RE.search(l)]
    assert not bad, "\n".join(bad)


def refused_repeatedly(srv, url: str, coding: str, original: bytes, not_body: bytes) -> None:
    mark = srv.log_size()
    for _ in range(5):
        assert_live(get(srv, url, coding), coding, original, not_body)
    assert_quiet(srv, mark)


# ---- symlinks

@pytest.mark.parametrize("coding", CODINGS)
def test_mc_630_01_symlink_owner_mismatch_not_followed(srv, log_allow, coding):
    """The leak: under SymLinksIfOwnerMatch a FILE.SUFFIX link owned by another user than its
    target is refused by httpd at its own URL (403); its target must not become FILE's body."""
    needs_root()
    log_allow.append(REFUSALS)
    url, path, original = copy_in(srv, "own")
    secret = secret_link(srv, path, coding, child_uid())
    assert request(srv.port, url + SUFFIX[coding]).status == 403
    refused_repeatedly(srv, url, coding, original, secret)


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_630_02_symlink_owner_match_followed(srv, coding):
    """Control: the same link owned by its target's owner is what httpd sends at its URL."""
    needs_root()
    url, path, _ = copy_in(srv, "own")
    secret = secret_link(srv, path, coding, os.geteuid())
    assert request(srv.port, url + SUFFIX[coding]).body == secret
    got = get(srv, url, coding)
    assert got.resp.status == 200 and got.note == "sidecar", got
    assert got.resp.body == secret


@pytest.mark.parametrize("coding", CODINGS)
def test_mc_630_03_symlink_follow_and_none(srv, log_allow, coding):
    """FollowSymLinks: any link is followed (httpd sends it); Options None: never."""
    needs_root()
    log_allow.append(REFUSALS)
    url, path, _ = copy_in(srv, "follow")
    secret = secret_link(srv, path, coding, child_uid())
    got = get(srv, url, coding)
    assert got.resp.status == 200 and got.note == "sidecar" and got.resp.body == secret, got

    url, path, original = copy_in(srv, "nolinks")
    secret = secret_link(srv, path, coding, os.geteuid())
    assert request(srv.port, url + SUFFIX[coding]).status == 403
    refused_repeatedly(srv, url, coding, original, secret)


# ---- access rules on the sidecar's name

def test_mc_630_04_files_section_denies_sidecar(srv, log_allow):
    """<Files "*.br"> Require all denied: page.html.br is never sent, as httpd would not send
    it at its URL; the .gz in the same directory is (control)."""
    log_allow.append(REFUSALS)
    url, path, original = copy_in(srv, "deny")
    br = write_sidecar(path, "br", newer_by=60).read_bytes()
    gz = write_sidecar(path, "gzip", newer_by=60).read_bytes()
    assert request(srv.port, url + ".br").status == 403
    refused_repeatedly(srv, url, "br", original, br)
    got = get(srv, url, "gzip")
    assert got.note == "sidecar" and got.resp.body == gz, got


def test_mc_630_05_client_dependent_rule(srv, log_allow):
    """<FilesMatch "\\.zst$"> Require ip 192.0.2.1: the client 127.0.0.1 is refused."""
    log_allow.append(REFUSALS)
    url, path, original = copy_in(srv, "deny")
    zst = write_sidecar(path, "zstd", newer_by=60).read_bytes()
    assert request(srv.port, url + ".zst").status == 403
    refused_repeatedly(srv, url, "zstd", original, zst)


def test_mc_630_06_htaccess_files_section(srv, log_allow):
    log_allow.append(REFUSALS)
    url, path, original = copy_in(srv, "htd")
    gz = write_sidecar(path, "gzip", newer_by=60).read_bytes()
    br = write_sidecar(path, "br", newer_by=60).read_bytes()
    assert request(srv.port, url + ".gz").status == 403
    refused_repeatedly(srv, url, "gzip", original, gz)
    got = get(srv, url, "br")
    assert got.note == "sidecar" and got.resp.body == br, got


def test_mc_630_07_location_of_the_sidecar_url(srv, log_allow):
    log_allow.append(REFUSALS)
    url, path, original = copy_in(srv, "loc")
    gz = write_sidecar(path, "gzip", newer_by=60).read_bytes()
    assert request(srv.port, url + ".gz").status == 403
    refused_repeatedly(srv, url, "gzip", original, gz)


def test_mc_630_08_sidecar_with_another_handler(srv, log_allow):
    """AddHandler cgi-script .gz: httpd would not send the .gz file's bytes at its URL."""
    log_allow.append(REFUSALS)
    url, path, original = copy_in(srv, "hand")
    gz = write_sidecar(path, "gzip", newer_by=60).read_bytes()
    assert request(srv.port, url + ".gz").body != gz
    refused_repeatedly(srv, url, "gzip", original, gz)


# ---- file permissions: once per file and change

def test_mc_630_09_unreadable_sidecar_logged_once_per_file(srv, log_allow):
    """chmod 000 while the children run as another user: live compression; one MC00030 line for
    the file in the (one) child, not one per request; a new version of the file (chmod again,
    a new ctime) is reported once more."""
    needs_root()
    log_allow.append(r"MC00030")
    url, path, original = copy_in(srv, "perm")
    side = write_sidecar(path, "br", newer_by=60)
    body = side.read_bytes()
    os.chmod(side, 0o000)
    mark = srv.log_size()
    for _ in range(20):
        assert_live(get(srv, url, "br"), "br", original, body)
    time.sleep(0.2)
    lines = log_lines_matching(srv, r"MC00030", mark)
    assert len(lines) == 1, lines
    assert side.name in lines[0]
    pids = {pid_of_log_line(l) for l in lines}
    assert len(pids) == 1 and None not in pids

    time.sleep(0.02)
    os.chmod(side, 0o600)  # still not readable by the children; the file changed (ctime)
    mark = srv.log_size()
    for _ in range(20):
        assert_live(get(srv, url, "br"), "br", original, body)
    time.sleep(0.2)
    assert len(log_lines_matching(srv, r"MC00030", mark)) == 1, srv.log_lines(mark)

    # readable again: the sidecar is sent
    os.chmod(side, 0o644)
    got = get(srv, url, "br")
    assert got.note == "sidecar" and got.resp.body == body, got


# ---- the cache path: FILE itself

@pytest.mark.parametrize("coding", CODINGS)
def test_mc_630_10_cache_hit_needs_a_readable_file(srv, log_allow, coding):
    """A cached body is sent only while the default handler could open FILE: after chmod 000
    the answer is httpd's own 403, not the cached copy."""
    needs_root()
    log_allow.append(r"AH00132")
    url, path, original = copy_in(srv, "cached")
    assert get(srv, url, coding).note == "live"
    hit = poll_until(lambda: get(srv, url, coding).note == "cache")
    assert hit, "never a cache hit"
    os.chmod(path, 0o000)
    try:
        assert request(srv.port, url).status == 403  # without Accept-Encoding: httpd's answer
        got = get(srv, url, coding)
        assert got.resp.status == 403, got
        assert got.note != "cache", got
    finally:
        os.chmod(path, 0o644)
    got = get(srv, url, coding)
    assert got.resp.status == 200 and decode(got.resp.body, coding) == original, got
