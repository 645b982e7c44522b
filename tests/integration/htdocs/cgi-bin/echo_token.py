#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A page that holds a token from its query string, with the response headers the test names:
# the model of a dynamic page whose bytes differ per request (a session's PIN, a user's name).
# Query: t=TOKEN, h=NAME:VALUE (repeatable). The body is a few KB of page text around the token.
import os
import sys
from urllib.parse import parse_qs

q = parse_qs(os.environ.get("QUERY_STRING", ""))
token = q.get("t", ["none"])[0].encode()
out = sys.stdout.buffer
out.write(b"Content-Type: text/html\r\n")
for h in q.get("h", []):
    out.write(h.encode() + b"\r\n")
out.write(b"\r\n")
body = b"<html><body>\n<p>Your account page. PIN: " + token + b"</p>\n"
body += b"<p>navigation, footer and the text every page of this site shares</p>\n" * 40
out.write(body + b"</body></html>\n")
out.flush()
