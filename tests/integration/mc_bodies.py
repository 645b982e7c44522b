# SPDX-License-Identifier: Apache-2.0
"""Expected bodies for the integration tests: the same generators as the CGIs in
htdocs/cgi-bin and mod_mctest, and the committed static files as served without the module."""
from __future__ import annotations

import base64
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mc_env import McEnv


def text_body(size: int) -> bytes:
    """What cgi-bin/headers.py sends."""
    body = bytearray()
    n = 0
    while len(body) < size:
        body += b"<p>line %06d: the quick brown fox jumps over the lazy dog</p>\n" % n
        n += 1
    return bytes(body[:size])


def mctest_body(size: int) -> bytes:
    """What mod_mctest sends for size=SIZE."""
    out = bytearray()
    k = 0
    while len(out) < size:
        out += b"%07d mctest: the quick brown fox jumps over the lazy dog\n" % k
        k += 1
    return bytes(out[:size])


def big_body_blocks(size: int, seed: int = 1):
    """What cgi-bin/big.py sends, block by block."""
    rng = random.Random(seed)
    left = size
    while left > 0:
        block = base64.b64encode(rng.randbytes(49152)) + b"\n"
        yield block[:left]
        left -= len(block)


def static_file(env: McEnv, name: str) -> bytes:
    """The bytes of htdocs/static/NAME, as served without the module."""
    return (env.src_dir / "htdocs" / "static" / name).read_bytes()
