# SPDX-License-Identifier: Apache-2.0
"""The cache store as anyone on its network sees it: raw memcached (text protocol) and redis
(RESP) commands from Python, the entry layout of mod_multicompress/core/include/mc/cache_entry.h,
and the key the module stores an entry under. Used by the tests that tamper with the store."""
from __future__ import annotations

import hashlib
import hmac
import re
import socket
import struct
import urllib.parse
import zlib
from pathlib import Path

from mc_stores import StoreProcess

# ---------------------------------------------------------------------------------------------
# Raw access to the store, as anyone on its network has it

def _recv_until(s: socket.socket, done) -> bytes:
    buf = b""
    while not done(buf):
        chunk = s.recv(1 << 20)
        if not chunk:
            raise AssertionError(f"store closed the connection; got {buf[:200]!r}")
        buf += chunk
    return buf


def _resp_command(store: StoreProcess, *args: bytes):
    """One redis command; the reply parsed (bulk string, integer, array of bulk strings)."""
    req = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
    with socket.create_connection(("127.0.0.1", store.port), timeout=5) as s:
        s.sendall(req)
        buf = _recv_until(s, lambda b: b"\r\n" in b)

        def need(n):
            nonlocal buf
            while len(buf) < n:
                buf += _recv_until(s, lambda b: len(b) > 0)

        def parse(at):
            end = buf.index(b"\r\n", at)
            kind, head = buf[at:at + 1], buf[at + 1:end]
            if kind in (b"+", b":"):
                return head, end + 2
            if kind == b"-":
                raise AssertionError(f"redis: {head!r}")
            if kind == b"$":
                n = int(head)
                if n < 0:
                    return None, end + 2
                need(end + 2 + n + 2)
                return buf[end + 2:end + 2 + n], end + 2 + n + 2
            if kind == b"*":
                items, pos = [], end + 2
                for _ in range(int(head)):
                    while b"\r\n" not in buf[pos:]:
                        need(len(buf) + 1)
                    item, pos = parse(pos)
                    items.append(item)
                return items, pos
            raise AssertionError(f"redis reply {buf[:100]!r}")

        return parse(0)[0]


def _mc_command(store: StoreProcess, line: bytes, data: bytes | None = None,
                end: bytes = b"END\r\n") -> bytes:
    with socket.create_connection(("127.0.0.1", store.port), timeout=5) as s:
        s.sendall(line + b"\r\n" + (data + b"\r\n" if data is not None else b""))
        return _recv_until(s, lambda b: b.endswith(end) or b.startswith(b"ERROR")
                           or b.startswith(b"CLIENT_ERROR") or b.startswith(b"SERVER_ERROR"))


def store_keys(store: StoreProcess) -> set[bytes]:
    if store.kind == "redis":
        return set(_resp_command(store, b"KEYS", b"*"))
    out = _mc_command(store, b"lru_crawler metadump all")
    keys = set()
    for line in out.split(b"\n"):  # metadump ends its lines with \n alone
        m = re.match(rb"key=(\S+)", line)
        if m:
            keys.add(urllib.parse.unquote_to_bytes(m.group(1)))
    return keys


def store_get(store: StoreProcess, key: bytes) -> bytes | None:
    if store.kind == "redis":
        return _resp_command(store, b"GET", key)
    out = _mc_command(store, b"get " + key)
    if out.startswith(b"END"):
        return None
    head, _, rest = out.partition(b"\r\n")
    n = int(head.split()[3])
    return rest[:n]


def store_set(store: StoreProcess, key: bytes, value: bytes) -> None:
    if store.kind == "redis":
        assert _resp_command(store, b"SET", key, value) == b"OK"
        return
    out = _mc_command(store, b"set %s 0 0 %d" % (key, len(value)), value, end=b"\r\n")
    assert out == b"STORED\r\n", out


# ---------------------------------------------------------------------------------------------
# Entries, as mc/cache_entry.h lays them out

HEADER = struct.Struct("<3sBBBBBQQqQ")  # magic, version, flags, coding, level, K, lengths...
CODING_NUMBER = {"gzip": 1, "deflate": 2, "br": 3, "zstd": 4}


def parse_entry(value: bytes) -> dict:
    magic, version, flags, coding, level, klen, blen, size, mtime, inode = \
        HEADER.unpack_from(value)
    assert (magic, version) == (b"MCE", 1), value[:8]
    key = value[HEADER.size:HEADER.size + klen]
    body = value[HEADER.size + klen:HEADER.size + klen + blen]
    return dict(flags=flags, coding=coding, level=level, key=key, body=body, size=size,
                mtime=mtime, inode=inode, trailer=value[HEADER.size + klen + blen:])


def make_entry(e: dict, body: bytes | None = None, secret: bytes | None = None,
               fix_crc: bool = True) -> bytes:
    """An entry like `e` (a parse_entry result) with another body: what a forger who can read
    the store writes. With fix_crc=False the old CRC is kept."""
    body = e["body"] if body is None else body
    out = HEADER.pack(b"MCE", 1, 1 if secret else 0, e["coding"], e["level"], len(e["key"]),
                      len(body), e["size"], e["mtime"], e["inode"]) + e["key"] + body
    out += struct.pack("<I", zlib.crc32(out)) if fix_crc else e["trailer"][:4]
    if secret:
        out += hmac.new(secret, out, hashlib.sha256).digest()
    return out


def module_key(path: Path, coding: str, server: str) -> bytes:
    """The module's cache key (mc_cache.cc cache_key): SHA-1 of the file's identity and of the
    virtual host that serves it (scheme://ServerName:port)."""
    st = path.stat()
    mtime_us = st.st_mtime_ns // 1000
    ident = f"{path}|{st.st_size}|{mtime_us}|{st.st_ino}|{st.st_dev}|{coding}|@{server}"
    return b"mc2-" + hashlib.sha1(ident.encode()).hexdigest().encode()


def store_key(store: StoreProcess, path: Path, coding: str, *, port: int,
              server_name: str = "127.0.0.1") -> bytes:
    """The key in the store: mod_socache_memcache and mod_socache_redis write the namespace
    ("mc-cache"), a colon and the module's key in hex. The test servers' ServerName is
    127.0.0.1, without a port: the virtual host's port is the one it listens on."""
    server = f"http://{server_name}:{port}"
    return b"mc-cache:" + module_key(path, coding, server).hex().encode()
