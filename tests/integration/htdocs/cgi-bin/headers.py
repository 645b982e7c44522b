#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A text body with the response headers the test asks for.
# Query: h=NAME:VALUE (repeatable), size=BYTES (default 4096), ct=CONTENT-TYPE (default
# text/html). The body is mc_bodies.text_body(size).
import os
import sys
from urllib.parse import parse_qs

q = parse_qs(os.environ.get("QUERY_STRING", ""))
size = int(q.get("size", ["4096"])[0])
ctype = q.get("ct", ["text/html"])[0]

body = bytearray()
n = 0
while len(body) < size:
    body += b"<p>line %06d: the quick brown fox jumps over the lazy dog</p>\n" % n
    n += 1
body = bytes(body[:size])

out = sys.stdout.buffer
out.write(b"Content-Type: " + ctype.encode() + b"\r\n")
for h in q.get("h", []):
    out.write(h.encode() + b"\r\n")
out.write(b"\r\n")
out.write(body)
out.flush()
