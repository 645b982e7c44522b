// SPDX-License-Identifier: Apache-2.0
// Walks through the demo (conf/demo, as scripts/demo.sh starts it) in Debian's Chromium as a
// visitor would, in one profile: every capability's page, the values its panel shows (read from
// the page's DOM, which the page filled from Resource Timing, Server-Timing and the server's own
// pages), and a screenshot of each. Prints one JSON object on stdout and asserts nothing:
// tests/integration/test_497_demo.py reads it and decides; scripts/demo-screenshots.sh keeps
// one screenshot for the README.
//
//   node demo_check.mjs --base https://localhost:PORT/ --other https://127.0.0.1:PORT/ \
//        --out DIR --home DIR [--profile DIR] [--chromium /usr/bin/chromium]
//
// --other is the demo's second site (the cross-site page needs two). The certificate must be
// trusted for real (HOME=--home, whose .pki/nssdb holds it): Chromium keeps no dictionary from
// a response whose certificate had an error. Never downloads a browser.
import { join } from 'node:path';
import { allHeaders, parseOptions, runChromium } from './chromium.mjs';

const opt = parseOptions('demo_check.mjs', {
  other: { type: 'string', default: '' },
  home: { type: 'string', default: '' },
  'poll-ms': { type: 'string', default: '15000' },
});
const timeout = Number(opt.timeout);
const url = (path, base = opt.base) => new URL(path, base).href;

// What a page's tables say: every row of `selector` as {data-* attributes, cells}.
function rows(page, selector) {
  return page.$$eval(selector, (trs) => trs.map((tr) => ({
    data: Object.assign({}, tr.dataset),
    cells: Array.from(tr.children).map((td) => td.textContent.trim()),
  })));
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim()).catch(() => null);
const dataset = (page, name) => page.$eval('body', (b, n) => b.dataset[n] ?? null, name);
const json = async (page, name) => JSON.parse(await dataset(page, name) ?? 'null');

// Opens `path`, waits until app.js has drawn the page and `ready` (a selector) is there, runs
// `read`, takes a screenshot; returns {path, status, ...read()} or {path, error}.
async function visit(context, name, path, { ready = null, read = null, base = opt.base, wait = timeout } = {}) {
  const page = await context.newPage();
  const result = { name, path, url: url(path, base), screenshot: join(opt.out, `${name}.png`) };
  try {
    const resp = await page.goto(result.url, { waitUntil: 'load', timeout });
    result.status = resp ? resp.status() : null;
    await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout });
    if (ready) await page.waitForSelector(ready, { state: 'attached', timeout: wait });
    await page.waitForTimeout(300);  // the resources table redraws 100 ms after a new entry
    result.resources = await rows(page, 'table.resources tbody tr');
    if (read) Object.assign(result, await read(page));
    await page.screenshot({ path: result.screenshot, fullPage: true });
  } catch (e) {
    result.error = String(e && e.stack || e);
    await page.screenshot({ path: result.screenshot, fullPage: true }).catch(() => {});
  } finally {
    await page.close();
  }
  return result;
}

// Chromium keeps a dictionary a moment after its response is complete: adds script elements
// for URLs the bundle's pattern matches (answered 404) until one goes out with
// Available-Dictionary.
async function waitForDictionary(context) {
  const page = await context.newPage();
  const probes = [];
  try {
    await page.goto(url('/dictionary/'), { waitUntil: 'load', timeout });
    const t0 = Date.now();
    for (let n = 1; Date.now() - t0 < Number(opt['poll-ms']); n++) {
      const path = `/assets/app.probe-${n}.js`;
      const reqP = page.waitForRequest((r) => new URL(r.url()).pathname === path, { timeout });
      await page.evaluate((src) => new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = src;
        s.onload = s.onerror = () => resolve();
        document.head.append(s);
      }), path);
      const h = await allHeaders(await reqP);
      probes.push({ path, t: Date.now() - t0, availableDictionary: h['available-dictionary'] ?? null });
      if (h['available-dictionary']) break;
      await page.waitForTimeout(250);
    }
  } finally {
    await page.close();
  }
  return probes;
}

async function crossSite(context) {
  const result = { name: 'cross-site', screenshot: join(opt.out, 'cross-site.png') };
  const page = await context.newPage();
  try {
    // From the second site's cross-site page: sign in at the first, come back, open the account.
    await page.goto(url('/cross-site/', opt.other), { waitUntil: 'load', timeout });
    await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout });
    await page.screenshot({ path: result.screenshot, fullPage: true });
    result.signInHref = await page.getAttribute('#sign-in', 'href');
    await Promise.all([page.waitForURL(/\/account\/sign-in\.html/, { timeout }), page.click('#sign-in')]);
    await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout });
    result.cookies = (await context.cookies(url('/account/'))).map((c) => c.name);
    await Promise.all([page.waitForURL(/\/cross-site\/$/, { timeout }), page.click('#back')]);
    await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout });
    await Promise.all([page.waitForURL(/\/account\/$/, { timeout }), page.click('#account')]);
    await page.waitForSelector('body[data-account]', { state: 'attached', timeout });
    result.crossSite = await json(page, 'account');
    result.crossSiteVerdict = await text(page, '#verdict');
    await page.screenshot({ path: join(opt.out, 'account-cross-site.png'), fullPage: true });
    await Promise.all([page.waitForURL(/\/account\/$/, { timeout }), page.click('#again')]);
    await page.waitForSelector('body[data-account]', { state: 'attached', timeout });
    result.sameSite = await json(page, 'account');
    result.sameSiteVerdict = await text(page, '#verdict');
  } catch (e) {
    result.error = String(e && e.stack || e);
  } finally {
    await page.close();
  }
  return result;
}

// The site dictionary as a first visitor meets it, in one tab: the first navigation under
// /site-dictionary/ (no dictionary named; its Link header announces one), the dictionary's
// fetch that Link starts, then the second navigation (the page's link to the documentation),
// which should name it and arrive as dcz, and a third, a page of the documentation. Chromium
// keeps the dictionary a moment after its response is complete: the second navigation is
// repeated (reloaded) while it names none, up to `tries` times; every try is in the report.
async function siteDictionary(context, tries = 5) {
  const page = await context.newPage();
  const result = { name: 'site-dictionary', path: '/site-dictionary/', screenshot: join(opt.out, 'site-dictionary.png') };
  const fetches = [];
  page.on('response', async (resp) => {
    if (!new URL(resp.url()).pathname.startsWith('/dict/')) return;
    const h = await allHeaders(resp);
    const done = await resp.finished().then(() => true, () => false);
    fetches.push({ path: new URL(resp.url()).pathname, status: resp.status(), done,
                   useAsDictionary: h['use-as-dictionary'] ?? null, cacheControl: h['cache-control'] ?? null });
  });
  // One navigation (`go` starts it), its request's Available-Dictionary and the page's panel.
  const arrive = async (go) => {
    const [resp] = await Promise.all([page.waitForNavigation({ waitUntil: 'load', timeout }), go()]);
    const req = await allHeaders(resp.request());
    await page.waitForSelector('body[data-arrival]', { state: 'attached', timeout });
    return { url: page.url(), status: resp.status(), availableDictionary: req['available-dictionary'] ?? null,
             arrival: await json(page, 'arrival'), coding: await text(page, '#page-coding'),
             dictionaryCell: await text(page, '#page-dictionary') };
  };
  try {
    result.first = await arrive(() => page.goto(url(result.path), { timeout }));
    result.config = await text(page, 'pre.config');
    result.train = await text(page, '#train');
    result.curl = await text(page, '#curl-site');
    const t0 = Date.now();
    while (!fetches.some((f) => f.done) && Date.now() - t0 < Number(opt['poll-ms'])) await page.waitForTimeout(100);
    result.fetchMs = Date.now() - t0;
    result.dictionaryFetches = fetches.slice();
    await page.screenshot({ path: result.screenshot, fullPage: true });
    result.second = [await arrive(() => page.click('#next'))];
    while (result.second.at(-1).coding !== 'dcz' && result.second.length < tries) {
      await page.waitForTimeout(500);
      result.second.push(await arrive(() => page.reload({ timeout })));
    }
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(opt.out, 'site-dictionary-second.png'), fullPage: true });
    result.third = await arrive(() => page.click('nav.docs-toc a[href$="-a-site-dictionary.html"]'));
    await page.screenshot({ path: join(opt.out, 'site-dictionary-third.png'), fullPage: true });
  } catch (e) {
    result.error = String(e && e.stack || e);
    await page.screenshot({ path: result.screenshot, fullPage: true }).catch(() => {});
  } finally {
    await page.close();
  }
  return result;
}

const PAGES = [
  // The dictionary flow first, as a returning visitor's history: release 1, then release 2.
  ['release-1', '/dictionary/release.html?r=1', { ready: 'body[data-bundle]', read: async (p) => ({ bundle: await json(p, 'bundle') }) }],
  ['probe', null],
  ['release-2', '/dictionary/release.html?r=2', { ready: 'body[data-bundle]', read: async (p) => ({ bundle: await json(p, 'bundle') }) }],
  // The overview loads release 5: against release 2, also dcz.
  ['index', '/', {
    ready: '#responses-total',
    read: async (p) => {
      await p.waitForSelector('body[data-release]', { state: 'attached', timeout });
      await p.waitForTimeout(500);
      return {
        resources: await rows(p, 'table.resources tbody tr'),
        cards: await p.$$eval('#cards li', (ls) => ls.map((l) => ({ panel: l.dataset.panel, href: l.querySelector('a')?.getAttribute('href') ?? null, text: l.textContent }))),
        counters: await text(p, '#counters'),
        release: await dataset(p, 'release'),
        glossaryTerms: await p.$$eval('#glossary dt', (d) => d.length),
        h1Color: await p.$eval('header h1', (h) => getComputedStyle(h).color),
      };
    },
  }],
  ['index-again', '/', { ready: '#responses-total' }],
  ['dictionary', '/dictionary/', { ready: '#releases-table tbody tr', read: async (p) => ({ config: await text(p, 'pre.config'), curl: await text(p, '#curl-dictionary') }) }],
  ['delta-sidecars', '/delta-sidecars/', {
    ready: 'body[data-deltas]',
    read: async (p) => ({ got: await rows(p, '#got tbody tr'), deltas: await p.$$eval('#deltas td[data-file]', (tds) => tds.map((td) => Object.assign({}, td.dataset))), config: await text(p, 'pre.config'), curl: await text(p, '#curl-delta') }),
  }],
  ['site-dictionary', null],
  ['negotiation', '/negotiation/', {
    ready: '#others table',
    read: async (p) => ({
      accept: await text(p, '#browser-accept'), coding: await text(p, '#browser-coding'),
      others: await rows(p, '#others tbody tr'), config: await text(p, 'pre.config'),
    }),
  }],
  ['per-directory', '/per-directory/', {
    ready: '#dirs tbody tr:nth-child(7)',
    read: async (p) => ({ dirs: await rows(p, '#dirs tbody tr'), config: await text(p, 'pre.config') }),
  }],
  ['sidecars', '/sidecars/', {
    ready: '#samples tbody tr:nth-child(5)',
    read: async (p) => {
      await p.waitForFunction(() => !document.getElementById('precompress').textContent.startsWith('(loading'), null, { timeout });
      return { samples: await rows(p, '#samples tbody tr'), precompress: await text(p, '#precompress'), config: await text(p, 'pre.config') };
    },
  }],
  ['cache', '/cache/', {
    ready: 'body[data-cache-done]',
    read: async (p) => ({ requests: await rows(p, '#requests tbody tr'), counters: await text(p, '#cache-counters'), config: await text(p, 'pre.config') }),
  }],
  ['streaming', '/streaming/', {
    ready: 'body[data-stream]',
    read: async (p) => ({ stream: await json(p, 'stream'), events: await rows(p, '#events tbody tr'), config: await text(p, 'pre.config') }),
  }],
  ['request-body', '/request-body/', {
    ready: 'body[data-upload]',
    read: async (p) => ({ upload: await json(p, 'upload'), config: await text(p, 'pre.config') }),
  }],
  ['prometheus', '/prometheus/', {
    ready: '#series tbody tr',
    read: async (p) => ({ series: await rows(p, '#series tbody tr'), config: await text(p, 'pre.config') }),
  }],
  ['cpu-budget', '/cpu-budget/', {
    ready: '#load',
    wait: 40000,
    read: async (p) => {
      await p.click('#load');
      await p.waitForSelector('body[data-budget]', { state: 'attached', timeout: 40000 });
      return { budget: await json(p, 'budget'), summary: await text(p, '#budget-summary'), got: await rows(p, '#got tbody tr'), config: await text(p, 'pre.config') };
    },
  }],
  ['cross-site', null],
  // Last: the counters of everything above.
  ['status', '/status/', {
    ready: 'body[data-section] #section svg',
    read: async (p) => ({
      section: await dataset(p, 'section'),
      svgText: await p.$$eval('#section svg text', (ts) => ts.map((t) => t.textContent)),
      svgTitles: await p.$$eval('#section svg rect title', (ts) => ts.map((t) => t.textContent)),
      auto: await text(p, '#auto'), config: await text(p, 'pre.config'),
    }),
  }],
  ['server-status', '/server-status', { ready: '#mod_multicompress svg', read: async () => ({}) }],
];

runChromium(opt, {
  fields: { home: opt.home, pages: [] },
  launch: {
    ignoreHTTPSErrors: false,
    env: opt.home ? { ...process.env, HOME: opt.home } : process.env,
    viewport: { width: 1200, height: 900 },
  },
  body: async (context, out) => {
    for (const [name, path, how] of PAGES) {
      if (name === 'probe') {
        out.probes = await waitForDictionary(context);
      } else if (name === 'site-dictionary') {
        out.pages.push(await siteDictionary(context));
      } else if (name === 'cross-site') {
        out.pages.push(await crossSite(context));
      } else if (name === 'server-status') {
        // mod_status's own page: no app.js there, only the section and its picture.
        const page = await context.newPage();
        const r = { name, path, screenshot: join(opt.out, `${name}.png`) };
        try {
          await page.goto(url(path), { waitUntil: 'load', timeout });
          r.svg = await page.$$eval('#mod_multicompress svg', (s) => s.length);
          const box = await page.$('#mod_multicompress');
          await box.screenshot({ path: r.screenshot });
        } catch (e) {
          r.error = String(e && e.stack || e);
        } finally {
          await page.close();
        }
        out.pages.push(r);
      } else {
        out.pages.push(await visit(context, name, path, how));
      }
    }
  },
});
