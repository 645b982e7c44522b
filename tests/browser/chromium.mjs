// SPDX-License-Identifier: Apache-2.0
// What browser_check.mjs and dictionary_check.mjs share: the command line's common options,
// Debian's Chromium launched headless by playwright-core with the same flags and a fresh
// profile, the responses a page saw, and the one JSON report on stdout.
//
// Never downloads a browser: it runs the executable given by --chromium (default
// /usr/bin/chromium, Debian's package) with a fresh profile (--user-data-dir): --profile DIR,
// which must not exist yet, or a new temporary directory; removed at the end either way.
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

export const ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-gpu',
  '--disable-quic',
];

// The command line: --base and --out (required; --out is created), --chromium, --profile,
// --timeout (ms, each navigation and wait), plus the script's own `options` (node:util
// parseArgs). Exits with 2 and a usage line when --base or --out is missing.
export function parseOptions(script, options) {
  const { values: opt } = parseArgs({
    options: {
      base: { type: 'string' },
      out: { type: 'string' },
      chromium: { type: 'string', default: '/usr/bin/chromium' },
      profile: { type: 'string', default: '' },
      timeout: { type: 'string', default: '20000' },
      ...options,
    },
  });
  if (!opt.base || !opt.out) {
    console.error(`usage: node ${script} --base https://HOST:PORT --out DIR [...]`);
    process.exit(2);
  }
  mkdirSync(opt.out, { recursive: true });
  return opt;
}

// A request's or a response's headers: all of them as on the wire (a request's include what
// the network service added after the renderer), or what playwright has when that fails.
export async function allHeaders(r) {
  try { return await r.allHeaders(); } catch (e) { return r.headers(); }
}

// What Chromium saw of one response (headers as delivered to the renderer, plus what the
// request carried on the wire): the record, and both header sets for a caller to add to it.
export async function describeResponse(resp) {
  const req = resp.request();
  const headers = await allHeaders(resp);
  const reqHeaders = await allHeaders(req);
  const record = {
    url: resp.url(),
    path: new URL(resp.url()).pathname,
    status: resp.status(),
    type: req.resourceType(),
    contentEncoding: headers['content-encoding'] ?? null,
    contentType: headers['content-type'] ?? null,
    vary: headers['vary'] ?? null,
    acceptEncoding: reqHeaders['accept-encoding'] ?? null,
  };
  return { record, headers, reqHeaders };
}

// Records every response `page` receives (`describe`, describeResponse's record by default);
// the function returned waits for them all.
export function track(page, describe = async (resp) => (await describeResponse(resp)).record) {
  const pending = [];
  page.on('response', (resp) => { pending.push(describe(resp)); });
  return async () => Promise.all(pending);
}

// Runs `body(context, report)` in a persistent context of a fresh headless Chromium, then
// closes it, removes the profile, prints the report ({base, profile, args, chromiumVersion,
// userAgent, ...fields, error?, warning?}) as JSON on stdout and exits: 0, or 1 when the report
// has an error. `launch` adds to or overrides playwright's launchPersistentContext options.
// Playwright closes the browser itself on SIGINT/SIGTERM/SIGHUP (its handleSIG* defaults).
export function runChromium(opt, { fields = {}, launch = {}, body }) {
  session(opt, fields, launch, body).then((code) => process.exit(code), (e) => {
    console.error(e);
    process.exit(1);
  });
}

async function session(opt, fields, launch, body) {
  let profile = opt.profile;
  if (profile) {
    mkdirSync(profile, { recursive: false });  // fails if it exists: the profile must be fresh
  } else {
    profile = mkdtempSync(join(tmpdir(), 'mc-chromium-'));
  }
  const out = { base: opt.base, profile, args: ARGS, ...fields };
  let context = null;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: opt.chromium,
      headless: true,
      args: ARGS,
      timeout: Number(opt.timeout),
      ...launch,
    });
    const first = context.pages()[0] || await context.newPage();
    const cdp = await context.newCDPSession(first);
    const v = await cdp.send('Browser.getVersion');
    out.chromiumVersion = v.product;
    out.userAgent = v.userAgent;
    await cdp.detach();
    await body(context, out);
  } catch (e) {
    out.error = String(e && e.stack || e);
  } finally {
    if (context) await context.close().catch(() => {});
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (e) {
      out.warning = `profile not removed: ${e}`;
    }
  }
  // Exit only once the report is written: stdout is a pipe, written asynchronously, and
  // process.exit() would cut a report longer than the pipe's buffer short.
  await new Promise((resolve) => process.stdout.write(JSON.stringify(out, null, 2) + '\n', resolve));
  return out.error ? 1 : 0;
}
