// SPDX-License-Identifier: Apache-2.0
// Dictionaries that deploy themselves (RFC 9842), in Debian's Chromium against mod_multicompress,
// one profile, as a returning visitor meets them:
//
// 1. the first page (--first) carries `Link: <DICT>; rel="compression-dictionary"`
//    (MultiCompressDictionary): waits until Chromium fetched DICT by itself and offers it (a
//    navigation to a probe page under the site's pattern goes out with Available-Dictionary);
// 2. the next pages (--next, a static file and a CGI) in new tabs: they may come as dcz;
// 3. the release page (--app) loads a content-hashed bundle (MultiCompressUseAsDictionary auto):
//    waits until Chromium offers it to the bundle's family (a probe <script>), runs the deploy
//    (--deploy, a shell script: the next bundle, its deltas, the new release page), then loads
//    the release page again in a new tab: its new bundle may come as a dcz delta.
//
//   node deploy_check.mjs --base https://127.0.0.1:PORT/ --out DIR --home DIR --deploy SCRIPT \
//        [--dict /dict/site.v1.dict] [--first /pages/a.html] \
//        [--next /pages/b.html,/pages/cgi/page.py?n=7] [--probe /pages/probe-] \
//        [--app /app/index.html] [--script-probe /assets/app.probe-] [--profile DIR] [...]
//
// It asserts nothing itself: tests/integration/test_499_dictionary_deploy_browser.py reads the
// JSON report (every response Chromium saw, with the step it belongs to; what each page shows;
// the probes; the deploy's output) and decides. Chromium trusts the server's certificate through
// HOME=--home (its .pki/nssdb), as dictionary_check.mjs explains.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { allHeaders, describeResponse, parseOptions, runChromium } from './chromium.mjs';

const opt = parseOptions('deploy_check.mjs', {
  home: { type: 'string', default: '' },
  deploy: { type: 'string', default: '' },
  dict: { type: 'string', default: '/dict/site.v1.dict' },
  first: { type: 'string', default: '/pages/a.html' },
  next: { type: 'string', default: '/pages/b.html,/pages/cgi/page.py?n=7' },
  probe: { type: 'string', default: '/pages/probe-' },
  app: { type: 'string', default: '/app/index.html' },
  'script-probe': { type: 'string', default: '/assets/app.probe-' },
  'poll-ms': { type: 'string', default: '15000' },
});
const timeout = Number(opt.timeout);
const pollMs = Number(opt['poll-ms']);
const url = (path) => new URL(path, opt.base).href;
const pathOf = (u) => { const x = new URL(u); return x.pathname + x.search; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Every response of the context, in order, with the step that was running when it came.
let step = 'start';
const pending = [];

async function describe(resp, stepName) {
  try {
    return await describeFully(resp, stepName);
  } catch (e) {  // e.g. a probe's tab closed before its headers were read
    return { step: stepName, path: pathOf(resp.url()), status: resp.status(), error: String(e) };
  }
}

async function describeFully(resp, stepName) {
  const { record, headers, reqHeaders } = await describeResponse(resp);
  Object.assign(record, {
    step: stepName,
    path: pathOf(resp.url()),
    link: headers['link'] ?? null,
    etag: headers['etag'] ?? null,
    useAsDictionary: headers['use-as-dictionary'] ?? null,
    cacheControl: headers['cache-control'] ?? null,
    availableDictionary: reqHeaders['available-dictionary'] ?? null,
    dictionaryId: reqHeaders['dictionary-id'] ?? null,
    secFetchDest: reqHeaders['sec-fetch-dest'] ?? null,
    secFetchMode: reqHeaders['sec-fetch-mode'] ?? null,
  });
  if (record.status === 200 && ['document', 'script'].includes(record.type)) {
    try {
      const body = await resp.body();
      record.bodyLength = body.length;
      record.bodySha256 = createHash('sha256').update(body).digest('base64');
    } catch (e) {
      record.bodyError = String(e);
    }
  }
  return record;
}

// What a page shows: its marker, the bundle's marker and checksum, Navigation and Resource
// Timing (sizes as they came over the wire, and as decoded).
async function pageState(page) {
  return page.evaluate(() => {
    const timing = (r) => ({
      path: new URL(r.name).pathname, protocol: r.nextHopProtocol,
      contentEncoding: r.contentEncoding ?? null, transferSize: r.transferSize,
      encodedBodySize: r.encodedBodySize, decodedBodySize: r.decodedBodySize,
    });
    const text = (id) => (document.getElementById(id) || {}).textContent ?? null;
    return {
      title: document.title,
      marker: text('marker'),
      app: document.body ? (document.body.dataset.app ?? null) : null,
      sum: document.body ? (document.body.dataset.sum ?? null) : null,
      version: text('version'),
      isSecureContext: window.isSecureContext,
      navigation: performance.getEntriesByType('navigation').map(timing)[0] ?? null,
      resources: performance.getEntriesByType('resource').map(timing),
    };
  });
}

// Loads `path` in a new tab, waits for `selector`, reports the page and takes a screenshot.
async function visit(context, name, path, selector) {
  step = name;
  const result = { step: name, path, screenshot: join(opt.out, `${name}.png`) };
  const page = await context.newPage();
  try {
    const main = await page.goto(url(path), { waitUntil: 'load', timeout });
    result.status = main ? main.status() : null;
    try {
      await page.waitForSelector(selector, { state: 'attached', timeout: 5000 });
    } catch (e) {
      result.selectorError = String(e).split('\n')[0];
    }
    Object.assign(result, await pageState(page));
    await page.screenshot({ path: result.screenshot, fullPage: true });
  } catch (e) {
    result.error = String(e && e.stack || e);
  }
  return { result, page };
}

// Chromium fetches a Link'ed dictionary by itself, once the page is idle, and keeps it once the
// response is complete. Waits (bounded) for that fetch to finish while the first page is the only
// one (the probes below carry the Link too), then until a navigation the dictionary's pattern
// covers goes out with Available-Dictionary (a probe page, 404).
async function waitForSiteDictionary(context, out) {
  const t0 = Date.now();
  while (!out.dictionaryFetched && Date.now() - t0 < pollMs) await sleep(100);
  step = 'site-probe';
  const probes = [];
  for (let n = 1; Date.now() - t0 < 2 * pollMs; n++) {
    const path = `${opt.probe}${n}.html`;
    const page = await context.newPage();
    try {
      const resp = await page.goto(url(path), { waitUntil: 'load', timeout });
      const h = resp ? await allHeaders(resp.request()) : {};
      probes.push({ path, t: Date.now() - t0, status: resp ? resp.status() : null,
                    availableDictionary: h['available-dictionary'] ?? null,
                    dictionaryId: h['dictionary-id'] ?? null,
                    acceptEncoding: h['accept-encoding'] ?? null });
    } finally {
      await page.close();
    }
    if (probes[probes.length - 1].availableDictionary) break;
    await sleep(250);
  }
  return probes;
}

// The same for a script's dictionary: a <script src> the bundle's pattern covers (404).
async function waitForScriptDictionary(page) {
  const t0 = Date.now();
  const probes = [];
  for (let n = 1; Date.now() - t0 < pollMs; n++) {
    const path = `${opt['script-probe']}${n}.js`;
    const reqP = page.waitForRequest((r) => new URL(r.url()).pathname === path, { timeout });
    await page.evaluate((src) => new Promise((resolve) => {
      const s = document.createElement('script');
      s.src = src;
      s.onload = s.onerror = () => resolve();
      document.head.append(s);
    }), path);
    const h = await allHeaders(await reqP);
    probes.push({ path, t: Date.now() - t0,
                  availableDictionary: h['available-dictionary'] ?? null,
                  acceptEncoding: h['accept-encoding'] ?? null });
    if (probes[probes.length - 1].availableDictionary) break;
    await sleep(250);
  }
  return probes;
}

// The deploy, between two visits: the script given, its output in the report.
function deploy() {
  if (!opt.deploy) return { skipped: true };
  try {
    const out = execFileSync('/bin/sh', [opt.deploy], { encoding: 'utf8', timeout: 120000,
                                                        stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, output: out };
  } catch (e) {
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

async function run(context, out) {
  context.on('response', (resp) => { pending.push(describe(resp, step)); });
  context.on('requestfinished', (req) => {
    if (pathOf(req.url()) === opt.dict && !out.dictionaryFetched) out.dictionaryFetched = { step };
  });
  const pages = [];
  const keep = async (v) => { out.visits.push(v.result); pages.push(v.page); return v; };
  // 1. the first page, the site dictionary fetched by Chromium, then offered
  const first = await keep(await visit(context, 'first', opt.first, '#marker'));
  if (first.result.error) return;
  out.siteProbes = await waitForSiteDictionary(context, out);
  // 2. the next pages, each in a new tab
  for (const [i, path] of opt.next.split(',').filter(Boolean).entries()) {
    await keep(await visit(context, `next-${i + 1}`, path, '#marker'));
  }
  // 3. the release, the deploy, the next release
  const v1 = await keep(await visit(context, 'release-1', opt.app, 'body[data-app]'));
  if (v1.result.error) return;
  step = 'script-probe';
  out.scriptProbes = await waitForScriptDictionary(v1.page);
  step = 'deploy';
  out.deploy = deploy();
  await keep(await visit(context, 'release-2', opt.app, 'body[data-app="v2"]'));
  for (const p of pages) await p.close().catch(() => {});
}

runChromium(opt, {
  fields: { home: opt.home, visits: [], dictionaryFetched: null },
  launch: {
    ignoreHTTPSErrors: false,
    env: opt.home ? { ...process.env, HOME: opt.home } : process.env,
    viewport: { width: 900, height: 600 },
  },
  body: async (context, out) => {
    try {
      await run(context, out);
    } finally {
      out.responses = await Promise.all(pending);
    }
  },
});
