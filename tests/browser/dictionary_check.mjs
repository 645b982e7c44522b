// SPDX-License-Identifier: Apache-2.0
// Compression dictionary transport (RFC 9842) in Debian's Chromium against mod_multicompress:
// loads page v1 (its script is offered as a dictionary), waits until Chromium offers that
// dictionary, then loads page v2 (its script may come as dcz) in the same profile, and prints
// what the browser saw as one JSON object on stdout. It asserts nothing itself:
// tests/integration/test_495_dictionary_browser.py reads the JSON and decides.
//
//   node dictionary_check.mjs --base [LABEL=]https://127.0.0.1:PORT/[,[LABEL=]URL...] --out DIR \
//        --home DIR [--profile DIR] [--chromium /usr/bin/chromium] [--dir /dict/]
//
// The origins are visited in order, in one profile (LABEL defaults to the URL's scheme).
//
// Certificates: Chromium must trust the server's certificate for real (HOME=--home, whose
// .pki/nssdb holds it), since Chromium keeps no dictionary from a response whose certificate
// had an error, so neither --ignore-certificate-errors nor playwright's ignoreHTTPSErrors.
// Never downloads a browser; the profile (--user-data-dir) is fresh and removed at the end.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { allHeaders, describeResponse, parseOptions, runChromium, track } from './chromium.mjs';

const opt = parseOptions('dictionary_check.mjs', {
  home: { type: 'string', default: '' },
  dir: { type: 'string', default: '/dict/' },
  'poll-ms': { type: 'string', default: '15000' },
});
const timeout = Number(opt.timeout);

const sha256 = (buf) => createHash('sha256').update(buf).digest('base64');

// One response as Chromium saw it (chromium.mjs), plus its validators and dictionary headers,
// the request's Available-Dictionary, Dictionary-ID and Sec-Fetch-Dest as sent on the wire
// (Available-Dictionary and Accept-Encoding are added by the network service, after the
// renderer), and for scripts the decoded body's SHA-256.
async function describe(resp) {
  const { record: out, headers, reqHeaders } = await describeResponse(resp);
  Object.assign(out, {
    etag: headers['etag'] ?? null,
    useAsDictionary: headers['use-as-dictionary'] ?? null,
    cacheControl: headers['cache-control'] ?? null,
    availableDictionary: reqHeaders['available-dictionary'] ?? null,
    dictionaryId: reqHeaders['dictionary-id'] ?? null,
    secFetchDest: reqHeaders['sec-fetch-dest'] ?? null,
  });
  if (out.type === 'script' && out.status === 200) {
    try {
      const body = await resp.body();
      out.bodyLength = body.length;
      out.bodySha256 = sha256(body);
    } catch (e) {
      out.bodyError = String(e);
    }
  }
  return out;
}

// What the page itself reports: its script's marker and checksum, Resource Timing.
async function pageState(page) {
  return page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] || {};
    return {
      app: document.body ? (document.body.dataset.app ?? null) : null,
      sum: document.body ? (document.body.dataset.sum ?? null) : null,
      text: (document.getElementById('version') || {}).textContent ?? null,
      codingText: (document.getElementById('coding') || {}).textContent ?? null,
      protocol: nav.nextHopProtocol ?? null,
      isSecureContext: window.isSecureContext,
      resources: performance.getEntriesByType('resource').map((r) => ({
        path: new URL(r.name).pathname, protocol: r.nextHopProtocol,
        contentEncoding: r.contentEncoding ?? null,
        encodedBodySize: r.encodedBodySize, decodedBodySize: r.decodedBodySize,
        transferSize: r.transferSize,
      })),
    };
  });
}

async function loadPage(page, url, marker, result) {
  const main = await page.goto(url, { waitUntil: 'load', timeout });
  result.status = main ? main.status() : null;
  try {
    await page.waitForSelector(`body[data-app="${marker}"]`, { state: 'attached', timeout: 5000 });
  } catch (e) {
    result.markerError = String(e).split('\n')[0];
  }
  Object.assign(result, await pageState(page));
}

// Chromium keeps a dictionary once its response is complete, asynchronously: until then a
// matching request goes without Available-Dictionary. Adds <script src=DIR/app.probe-N.js>
// (a URL the pattern matches, answered 404) until one goes with it; the last one's headers.
async function waitForDictionary(page, dir) {
  const t0 = Date.now();
  const probes = [];
  for (let n = 1; Date.now() - t0 < Number(opt['poll-ms']); n++) {
    const path = `${dir}app.probe-${n}.js`;
    const reqP = page.waitForRequest((r) => new URL(r.url()).pathname === path, { timeout });
    await page.evaluate((src) => new Promise((resolve) => {
      const s = document.createElement('script');
      s.src = src;
      s.onload = s.onerror = () => resolve();
      document.head.append(s);
    }), path);
    const req = await reqP;
    const h = await allHeaders(req);
    const probe = {
      path, t: Date.now() - t0,
      availableDictionary: h['available-dictionary'] ?? null,
      acceptEncoding: h['accept-encoding'] ?? null,
    };
    probes.push(probe);
    if (probe.availableDictionary) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return probes;
}

// fetch() of a URL the pattern matches: its destination is the empty string, not "script", so
// with match-dest=("script") Chromium must not offer the dictionary for it.
async function fetchProbe(page, dir) {
  const path = `${dir}app.fetch-probe.js`;
  const reqP = page.waitForRequest((r) => new URL(r.url()).pathname === path, { timeout });
  const status = await page.evaluate((u) => fetch(u).then((r) => r.status, (e) => String(e)), path);
  const req = await reqP;
  const h = await allHeaders(req);
  return {
    path, status,
    availableDictionary: h['available-dictionary'] ?? null,
    acceptEncoding: h['accept-encoding'] ?? null,
    secFetchDest: h['sec-fetch-dest'] ?? null,
  };
}

async function runOrigin(context, base, label) {
  const dir = opt.dir;
  const result = { base, label, v1: {}, v2: {} };
  const page = await context.newPage();
  const responses = track(page, describe);
  try {
    result.v1.url = new URL(`${dir}v1.html`, base).href;
    await loadPage(page, result.v1.url, 'v1', result.v1);
    result.probes = await waitForDictionary(page, dir);
    result.fetchProbe = await fetchProbe(page, dir);
    result.v1.responses = await responses();
  } catch (e) {
    result.error = String(e && e.stack || e);
  } finally {
    await page.close();
  }
  if (result.error) return result;
  const page2 = await context.newPage();
  const responses2 = track(page2, describe);
  result.v2.screenshot = join(opt.out, `dictionary-${label}-v2.png`);
  try {
    result.v2.url = new URL(`${dir}v2.html`, base).href;
    await loadPage(page2, result.v2.url, 'v2', result.v2);
    await page2.screenshot({ path: result.v2.screenshot, fullPage: true });
  } catch (e) {
    result.error = String(e && e.stack || e);
  } finally {
    result.v2.responses = await responses2();
    await page2.close();
  }
  return result;
}

runChromium(opt, {
  fields: { home: opt.home, origins: [] },
  launch: {
    ignoreHTTPSErrors: false,
    env: opt.home ? { ...process.env, HOME: opt.home } : process.env,
    viewport: { width: 900, height: 600 },
  },
  body: async (context, out) => {
    for (const item of opt.base.split(',').filter(Boolean)) {
      const m = /^([A-Za-z0-9_-]+)=(.*)$/.exec(item);
      const [label, base] = m ? [m[1], m[2]] : [new URL(item).protocol.replace(':', ''), item];
      out.origins.push(await runOrigin(context, base, label));
    }
  },
});
