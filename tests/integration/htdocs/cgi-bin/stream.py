#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Streams a response the way progressive pages and event streams do: a first line, a flush,
# a pause, then more lines. Query: sleep=SECONDS (default 2), lines=N (default 3),
# ct=CONTENT-TYPE (default text/plain).
import os
import sys
import time
from urllib.parse import parse_qs

q = parse_qs(os.environ.get("QUERY_STRING", ""))
pause = float(q.get("sleep", ["2"])[0])
lines = int(q.get("lines", ["3"])[0])
ctype = q.get("ct", ["text/plain; charset=utf-8"])[0]

out = sys.stdout.buffer
out.write(b"Content-Type: " + ctype.encode() + b"\r\n\r\n")
for i in range(1, lines + 1):
    if i > 1:
        time.sleep(pause)
    text = "line %d of %d: streamed by stream.py, decodable before the script ends. " % (i, lines)
    out.write((text * 5).encode() + b"\n")
    out.flush()
