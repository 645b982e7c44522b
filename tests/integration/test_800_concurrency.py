# SPDX-License-Identifier: Apache-2.0
"""200 concurrent requests across encodings, files and filters all decode."""
import itertools
from concurrent.futures import ThreadPoolExecutor

from mc_bodies import static_file, text_body
from mc_client import assert_encoded, request

FILES = ["page.html", "style.css", "app.js", "data.json", "logo.svg", "license.txt",
         "small.html"]
CASES = [("/mc/", "gzip"), ("/mc/", "br"), ("/mc/", "zstd"), ("/mc/", None),
         ("/mc-deflate/", "deflate"), ("/f-three/", "zstd"), ("/f-two/", "gzip"),
         ("/lvl-br11/", "br"), ("/lvl-zstd19/", "zstd"), ("/lvl-gzip1/", "gzip")]


def run_concurrently(env, port: int, n: int = 200, workers: int = 100):
    jobs = []
    for i, ((prefix, coding), name) in enumerate(zip(itertools.cycle(CASES),
                                                    itertools.cycle(FILES))):
        if i >= n:
            break
        if prefix in ("/f-three/", "/f-two/"):
            name = "page.html"  # those filters are attached to text/html and text/css only
        jobs.append((prefix + name, coding, static_file(env, name)))
    # a few streamed CGI responses among them
    for i in range(0, n, 25):
        coding = ("gzip", "br", "zstd")[i % 3]
        jobs[i] = (f"/cgi-bin/headers.py?size={5000 + i * 100}", coding, text_body(5000 + i * 100))

    def one(job):
        path, coding, expected = job
        resp = request(port, path, coding, timeout=60)
        assert_encoded(resp, coding, expected)
        return coding

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(one, jobs))
    assert len(results) == n
    return results


def test_mc_800_01_concurrent_requests(env, main):
    results = run_concurrently(env, main.port)
    assert {"gzip", "br", "zstd", "deflate", None} <= set(results)
