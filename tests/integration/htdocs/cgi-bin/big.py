#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Streams a large, barely compressible body with no Content-Length.
# Query: size=BYTES (default 50 MiB), seed=N (default 1). The body is base64 text of a seeded
# random stream, one 65537-byte line per block; mc_bodies.big_body_blocks() produces the same bytes.
import base64
import os
import random
import sys
from urllib.parse import parse_qs

q = parse_qs(os.environ.get("QUERY_STRING", ""))
size = int(q.get("size", [str(50 * 1024 * 1024)])[0])
seed = int(q.get("seed", ["1"])[0])

out = sys.stdout.buffer
out.write(b"Content-Type: text/plain\r\n\r\n")
rng = random.Random(seed)
left = size
while left > 0:
    block = base64.b64encode(rng.randbytes(49152)) + b"\n"
    out.write(block[:left])
    left -= len(block)
out.flush()
