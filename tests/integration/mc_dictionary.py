# SPDX-License-Identifier: Apache-2.0
"""Shared-dictionary compression (RFC 9842, the coding dcz) for test_492_dictionary.py and
test_493_dictionary_fleet.py: the site, the bundles and documents a server gets, decoders for
dcz with python3-zstandard and the zstd CLI, and requests that name a dictionary."""
from __future__ import annotations

import base64
import hashlib
import http.client
import shutil
import subprocess
from pathlib import Path

import zstandard

from mc_bodies import mctest_body
from mc_client import Response, request
from mc_server import HttpdServer


DCZ_MAGIC = bytes.fromhex("5e2a4d1820000000")
AE = "dcz, zstd, br, gzip"

SITE = """
MultiCompressEncodings dcz zstd br gzip
Alias /d "@HTDOCS@/dict"
<Directory "@HTDOCS@/dict">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS text/plain application/javascript text/javascript text/css text/html
</Directory>
<LocationMatch "^/d/app\\.v[0-9]+\\.js$">
    MultiCompressUseAsDictionary "/d/app.*.js" dest=script
</LocationMatch>
# a site-wide dictionary for live pages
<Location /d/site-dict.txt>
    MultiCompressUseAsDictionary "/mctest/*" id=site-v1
</Location>
<Location /d/stream-dict.txt>
    MultiCompressUseAsDictionary "/cgi-bin/*"
</Location>
<Location /mctest/>
    MultiCompressEncodings dcz zstd br gzip
</Location>
<Location /d/small-only/>
    MultiCompressUseAsDictionary "/d/small-only/*"
    MultiCompressDictionaryMaxSize 1K
</Location>
<Location /d/off/>
    MultiCompressUseAsDictionary Off
</Location>
Alias /dc "@HTDOCS@/dict-cache"
<Directory "@HTDOCS@/dict-cache">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS application/javascript text/javascript
    MultiCompressCache On
    MultiCompressUseAsDictionary "/dc/lib.*.js"
</Directory>
Alias /ds "@HTDOCS@/dict-static"
<Directory "@HTDOCS@/dict-static">
    Require all granted
    AddOutputFilterByType MULTICOMPRESS application/javascript text/javascript
    MultiCompressStatic On
    MultiCompressUseAsDictionary "/ds/*"
</Directory>
<Location /mc-metrics>
    SetHandler multicompress-metrics
</Location>
@STORE_LINE@
"""


def script(version: int, size: int = 30000) -> bytes:
    """A deterministic JavaScript bundle; versions differ in a few places, as releases do."""
    lines = []
    for i in range(size // 60):
        n = i * 7919 % 10007
        tag = f"v{version}" if i % 97 == 0 else "v1"
        lines.append(f"function f{i}(a){{return a*{n}+{i % 13}; /* {tag} */}}")
    lines.append(f'document.body.dataset.app = "v{version}";')
    return ("\n".join(lines) + "\n").encode()


def available(data: bytes) -> str:
    return ":" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


def dcz_decode(body: bytes, dictionary: bytes) -> bytes:
    """Checks the dcz header and decodes the frame with python3-zstandard (raw content)."""
    assert body[:8] == DCZ_MAGIC, body[:8].hex()
    assert body[8:40] == hashlib.sha256(dictionary).digest()
    d = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    return zstandard.ZstdDecompressor(dict_data=d).decompressobj().decompress(body[40:])


def cli_decode(tmp: Path, body: bytes, dictionary: bytes) -> bytes:
    """The zstd CLI: --patch-from takes the dictionary, the skippable frame is skipped."""
    zstd = shutil.which("zstd")
    assert zstd, "zstd CLI missing (apt-get install zstd)"
    old = tmp / "old.bin"
    old.write_bytes(dictionary)
    src = tmp / "body.zst"
    src.write_bytes(body)
    out = tmp / "out.bin"
    p = subprocess.run([zstd, "-q", "-f", "-d", f"--patch-from={old}", str(src), "-o", str(out)],
                       capture_output=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    return out.read_bytes()


def frame_window(body: bytes) -> int:
    params = zstandard.get_frame_parameters(body[40:])
    return params.window_size


def make_server(env, name: str, store_spec: str | None = None,
                modules: tuple[str, ...] = ()) -> HttpdServer:
    line = f"MultiCompressCacheStore {store_spec}" if store_spec else "# default store: shmcb"
    s = HttpdServer(env, name, extra_conf=SITE.replace("@STORE_LINE@", line),
                    extra_modules=list(modules))
    return s


def populate(srv: HttpdServer) -> dict[str, bytes]:
    d = srv.htdocs / "dict"
    (d / "small-only").mkdir(parents=True, exist_ok=True)
    (d / "off").mkdir(parents=True, exist_ok=True)
    files = {
        "app.v1.js": script(1), "app.v2.js": script(2), "app.v3.js": script(3),
        "site-dict.txt": mctest_body(40000),
        "small-only/big.txt": mctest_body(5000), "small-only/tiny.txt": mctest_body(800),
        "off/app.v9.js": script(9),
    }
    for rel, data in files.items():
        (d / rel).write_bytes(data)
    st = srv.htdocs / "dict-static"
    st.mkdir(parents=True, exist_ok=True)
    for v in (1, 2):
        data = script(v, 40000)
        (st / f"lib.{v}.js").write_bytes(data)
        (st / f"lib.{v}.js.zst").write_bytes(zstandard.ZstdCompressor(level=19).compress(data))
        files[f"ds/lib.{v}.js"] = data
    c = srv.htdocs / "dict-cache"
    c.mkdir(parents=True, exist_ok=True)
    for v in (1, 2):
        (c / f"lib.{v}.js").write_bytes(script(v, 50000))
        files[f"dc/lib.{v}.js"] = (c / f"lib.{v}.js").read_bytes()
    return files


def get_as(port: int, path: str, ae: str | None, headers=(), method: str = "GET",
           host: str | None = None) -> Response:
    """request() with a Host of our choosing (http.client sends its own otherwise)."""
    if host is None:
        return request(port, path, ae, headers=headers, method=method)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        if ae is not None:
            conn.putheader("Accept-Encoding", ae)
        for k, v in headers:
            conn.putheader(k, v)
        conn.endheaders()
        resp = conn.getresponse()
        return Response(resp.status, resp.reason, list(resp.getheaders()), resp.read())
    finally:
        conn.close()


def learn(srv, path: str, data: bytes, ae: str = "identity", host: str | None = None) -> None:
    r = get_as(srv.port, path, ae, host=host)
    assert r.status == 200 and r.decoded() == data
    assert r.header("Use-As-Dictionary"), r


def dcz_get(srv, path: str, dictionary: bytes, ae: str = AE, headers=(), method="GET",
            host: str | None = None):
    return get_as(srv.port, path, ae, method=method, host=host,
                  headers=[("Available-Dictionary", available(dictionary)), *headers])
