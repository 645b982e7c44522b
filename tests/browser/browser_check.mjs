// SPDX-License-Identifier: Apache-2.0
// Loads mod_multicompress pages in Debian's Chromium (headless, driven by playwright-core) and
// prints what the browser saw as one JSON object on stdout. It asserts nothing itself:
// tests/integration/test_460_browser.py reads the JSON and decides.
//
//   node browser_check.mjs --base https://127.0.0.1:PORT --out DIR \
//        [--pages /,/br-only/,/gzip-only/] [--stream /cgi-bin/stream] \
//        [--progressive /cgi-bin/progressive] [--chromium /usr/bin/chromium] [--profile DIR]
//
// Never downloads a browser; the profile (--user-data-dir) is fresh and removed at the end
// (chromium.mjs).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseOptions, runChromium, track } from './chromium.mjs';

const opt = parseOptions('browser_check.mjs', {
  pages: { type: 'string', default: '/,/br-only/,/gzip-only/' },
  stream: { type: 'string', default: '' },
  progressive: { type: 'string', default: '' },
});
const timeout = Number(opt.timeout);

async function checkPage(context, path) {
  const url = new URL(path, opt.base).href;
  const name = path.replace(/^\/+|\/+$/g, '').replace(/[^A-Za-z0-9_-]+/g, '_') || 'index';
  const result = { path, url, screenshot: join(opt.out, `${name}.png`) };
  const page = await context.newPage();
  const responses = track(page);
  try {
    const main = await page.goto(url, { waitUntil: 'load', timeout });
    result.status = main ? main.status() : null;
    await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout });
    result.ready = await page.getAttribute('body', 'data-ready');
    Object.assign(result, await page.evaluate(() => {
      const h1 = document.querySelector('header h1');
      const nav = performance.getEntriesByType('navigation')[0];
      const res = performance.getEntriesByType('resource').map((r) => ({
        path: new URL(r.name).pathname, protocol: r.nextHopProtocol,
        contentEncoding: r.contentEncoding ?? null, encodedBodySize: r.encodedBodySize, decodedBodySize: r.decodedBodySize,
      }));
      return {
        title: document.title,
        h1Text: h1 ? h1.textContent : null,
        h1Color: h1 ? getComputedStyle(h1).color : null,
        encodingText: (document.getElementById('encoding') || {}).textContent ?? null,
        protocol: nav ? nav.nextHopProtocol : null,
        contentEncoding: nav ? (nav.contentEncoding ?? null) : null,
        encodedBodySize: nav ? nav.encodedBodySize : null,
        decodedBodySize: nav ? nav.decodedBodySize : null,
        resources: res,
      };
    }));
    await page.screenshot({ path: result.screenshot, fullPage: true });
  } catch (e) {
    result.error = String(e && e.stack || e);
  } finally {
    result.responses = await responses();
    await page.close();
  }
  return result;
}

// fetch() with a stream reader inside the page: when each decoded chunk reached the script.
async function checkStream(context, path) {
  const url = new URL(path, opt.base).href;
  const result = { path, url };
  const page = await context.newPage();
  const responses = track(page);
  try {
    await page.goto(new URL('/', opt.base).href, { waitUntil: 'load', timeout });
    Object.assign(result, await page.evaluate(async (u) => {
      const t0 = performance.now();
      const r = await fetch(u, { cache: 'no-store' });
      const tHeaders = performance.now() - t0;
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      const chunks = [];
      for (;;) {
        const { done, value } = await reader.read();
        const t = performance.now() - t0;
        if (done) {
          return {
            status: r.status, contentEncoding: r.headers.get('content-encoding'),
            contentType: r.headers.get('content-type'), vary: r.headers.get('vary'),
            tHeaders, tEnd: t, chunks,
            protocol: (performance.getEntriesByName(u)[0] || {}).nextHopProtocol ?? null,
          };
        }
        chunks.push({ t, text: dec.decode(value, { stream: true }) });
      }
    }, url));
  } catch (e) {
    result.error = String(e && e.stack || e);
  } finally {
    result.responses = (await responses()).filter((r) => r.path === new URL(url).pathname);
    await page.close();
  }
  return result;
}

// A page whose HTML arrives in parts: when the first part was in the DOM, whether the last one
// was there yet, and when Chromium first painted content compared with the response's end.
// Screenshots: one while the page is still loading (taken with CDP, as playwright's
// page.screenshot() waits for the fonts, i.e. the end of the document), one at the end.
async function checkProgressive(context, path) {
  const url = new URL(path, opt.base).href;
  const result = {
    path, url,
    screenshotPartial: join(opt.out, 'progressive-partial.png'),
    screenshot: join(opt.out, 'progressive.png'),
  };
  const page = await context.newPage();
  const responses = track(page);
  try {
    const t0 = Date.now();
    const main = await page.goto(url, { waitUntil: 'commit', timeout });
    result.status = main ? main.status() : null;
    result.tCommit = Date.now() - t0;
    await page.waitForSelector('#part1', { state: 'attached', timeout });
    result.tFirst = Date.now() - t0;
    result.lastPresentAtFirst = (await page.$('#done')) !== null;
    result.firstText = await page.textContent('#part1');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const cdp = await context.newCDPSession(page);
    const shot = await cdp.send('Page.captureScreenshot', { format: 'png' });
    await cdp.detach();
    writeFileSync(result.screenshotPartial, Buffer.from(shot.data, 'base64'));
    result.tPartialShot = Date.now() - t0;
    result.lastPresentAtPartialShot = (await page.$('#done')) !== null;
    await page.waitForSelector('#done', { state: 'attached', timeout });
    result.tLast = Date.now() - t0;
    await page.waitForLoadState('load', { timeout });
    result.tLoad = Date.now() - t0;
    Object.assign(result, await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] || {};
      const fcp = performance.getEntriesByName('first-contentful-paint')[0];
      return {
        protocol: nav.nextHopProtocol ?? null,
        contentEncoding: nav.contentEncoding ?? null,
        responseStart: nav.responseStart ?? null,
        responseEnd: nav.responseEnd ?? null,
        firstContentfulPaint: fcp ? fcp.startTime : null,
      };
    }));
    await page.screenshot({ path: result.screenshot, fullPage: true });
  } catch (e) {
    result.error = String(e && e.stack || e);
  } finally {
    result.responses = await responses();
    await page.close();
  }
  return result;
}

runChromium(opt, {
  fields: { pages: [] },
  launch: { ignoreHTTPSErrors: true, viewport: { width: 1000, height: 800 } },
  body: async (context, out) => {
    for (const p of opt.pages.split(',').filter(Boolean)) {
      out.pages.push(await checkPage(context, p));
    }
    // The two streamed responses take seconds each: side by side, in two tabs.
    const [stream, progressive] = await Promise.all([
      opt.stream ? checkStream(context, opt.stream) : null,
      opt.progressive ? checkProgressive(context, opt.progressive) : null,
    ]);
    if (stream) out.stream = stream;
    if (progressive) out.progressive = progressive;
  },
});
