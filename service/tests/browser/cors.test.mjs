// Cross-site requests and DNS rebinding against a real `snowmint serve` (SNOWMINT_CLI) from a real
// browser: Debian's Chromium, headless, driven by playwright-core (SNOWMINT_TOOLS: the node_modules it is
// installed in; service/test.sh installs it). A page of another origin sends what a browser sends with
// no preflight (text/plain POST, mode no-cors) and a CORS fetch; a page on a rebound name
// (--host-resolver-rules maps it to 127.0.0.1) calls the service as its own origin. Every refusal is
// checked from both sides: the page sees no answer it may read, and the service's /metrics counts a 403
// or 415 and no 201 for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const tools = process.env.SNOWMINT_TOOLS;
const cli = process.env.SNOWMINT_CLI;
const { chromium } = createRequire(path.join(tools, 'x.js'))('playwright-core');

const services = [];
let site;
let sitePort;
let browser;
let tmp;

/** `snowmint serve` on a free port with `args`; resolves to its base URL. */
function startService(...args) {
  const store = fs.mkdtempSync(path.join(tmp, 'store-'));
  const p = spawn(
    cli,
    ['serve', '--listen', '127.0.0.1:0', '--node', '1', '--leases', `file://${store}`, ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  services.push(p);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('snowmint serve did not start in 20 s')), 20000);
    p.on('exit', (code) => reject(new Error(`snowmint serve exited (${code})`)));
    readline.createInterface({ input: p.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/[0-9.:]+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

/** The service's request counters: `route status` → count. */
async function counts(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = {};
  for (const m of text.matchAll(/^snowmint_http_requests_total\{route="([^"]+)",status="(\d+)"\} (\d+)/gm))
    out[`${m[1]} ${m[2]}`] = Number(m[3]);
  return out;
}

before(async () => {
  assert.ok(tools && cli, 'SNOWMINT_TOOLS and SNOWMINT_CLI are set by service/test.sh');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-cors-'));
  // The other site: an empty page on its own origin.
  site = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>another site</title>');
  });
  await new Promise((r) => site.listen(0, '127.0.0.1', r));
  sitePort = site.address().port;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP rebind.attacker.example 127.0.0.1'],
  });
});

after(async () => {
  await browser?.close();
  site?.close();
  // Each service gives its leases back as it stops (writing its store): wait for it (at most 10 s)
  // before removing the folder the store is in.
  const stopped = services
    .filter((p) => p.exitCode === null && p.signalCode === null)
    .map((p) => new Promise((resolve) => p.once('exit', resolve)));
  for (const p of services) if (p.exitCode === null) p.kill('SIGTERM');
  await Promise.race([Promise.all(stopped), new Promise((resolve) => setTimeout(resolve, 10000))]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A page of the other site. */
async function otherSite() {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${sitePort}/`);
  return page;
}

test('a page of another site cannot take a lease or read an answer', async () => {
  const svc = await startService();
  const page = await otherSite();
  const before = await counts(svc);
  // What needs no preflight: a text/plain POST (mode no-cors: the page cannot read the answer anyway).
  await page.evaluate(async (url) => {
    await fetch(`${url}/v1/leases`, { method: 'POST', mode: 'no-cors', body: '{"holder":"x"}' });
    await fetch(`${url}/v1/ids?count=5`, { method: 'POST', mode: 'no-cors' });
  }, svc);
  // A CORS fetch: the browser refuses the page the answer.
  const read = await page.evaluate(async (url) => {
    try {
      await fetch(`${url}/v1/ids`, { method: 'POST' });
      return 'read';
    } catch (e) {
      return e.name;
    }
  }, svc);
  assert.equal(read, 'TypeError');
  const after = await counts(svc);
  const d = (k) => (after[k] ?? 0) - (before[k] ?? 0);
  assert.equal(d('/v1/leases 201'), 0, JSON.stringify(after));
  assert.equal(d('/v1/leases 403'), 1, JSON.stringify(after));
  assert.equal(d('/v1/ids 200'), 0, JSON.stringify(after));
  assert.equal(d('/v1/ids 403'), 2, JSON.stringify(after));
  await page.close();
});

test('an origin given with --cors-origin reads its answers; text/plain is still refused', async () => {
  const svc = await startService('--cors-origin', `http://127.0.0.1:${sitePort}`);
  const page = await otherSite();
  const before = await counts(svc);
  const lease = await page.evaluate(async (url) => {
    const r = await fetch(`${url}/v1/leases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"holder":"tab"}',
    });
    return { status: r.status, body: await r.json() };
  }, svc);
  assert.equal(lease.status, 201);
  assert.equal(typeof lease.body.token, 'string');
  const plain = await page.evaluate(async (url) => {
    const r = await fetch(`${url}/v1/leases`, { method: 'POST', body: '{}' });
    return { status: r.status, body: await r.json() };
  }, svc);
  assert.equal(plain.status, 415);
  assert.equal(plain.body.error.field, 'content-type');
  const after = await counts(svc);
  assert.equal((after['/v1/leases 201'] ?? 0) - (before['/v1/leases 201'] ?? 0), 1);
  await page.close();
});

test('a rebound name is refused (the default --allowed-host on a loopback address)', async () => {
  const svc = await startService();
  const port = new URL(svc).port;
  const page = await browser.newPage();
  const res = await page.goto(`http://rebind.attacker.example:${port}/healthz`);
  assert.equal(res.status(), 403);
  // Script on the rebound page calls the service as its own origin: refused as well.
  const status = await page.evaluate(async () => (await fetch('/v1/ids?count=3', { method: 'POST' })).status);
  assert.equal(status, 403);
  const c = await counts(svc);
  assert.equal(c['/v1/ids 200'] ?? 0, 0);
  // The same service by its address answers.
  const ok = await page.goto(`http://127.0.0.1:${port}/healthz`);
  assert.equal(ok.status(), 200);
  await page.close();
});
