// OfflineGenerator and Client in a real browser (Debian's Chromium, headless, playwright-core) against a
// service that misbehaves (tests/service/fake_service.py behind the test's static server, on the page's
// origin; issue 42): a lease answer of 8 MB, a redirect to another origin, and the same node ID handed
// back from the same start after LEASE_LOST (a service restored from a backup), with a frozen clock, in
// memory, across a reload and to another generator of the URL (the marks kept with the lease in IndexedDB).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './server.mjs';
import { launch } from './chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.resolve(here, '..', '..');
const project = process.env.SNOWMINT_WASM_PROJECT;
const { startService } = await import(new URL('../../../tests/js/client.mjs', import.meta.url).href);

let fake;
let other;
let server;
let context;
let tmp;
const pageErrors = [];

before(async () => {
  assert.ok(project, 'SNOWMINT_WASM_PROJECT (the project the tarball is installed in) is set by test.sh');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-offline-hostile-'));
  fake = await startService();
  other = await startService();
  server = await serve(
    {
      '/www/': path.join(wasmDir, 'www'),
      '/pkg/': path.join(project, 'node_modules', 'snowmint-wasm'),
    },
    null,
    fake.url,
  );
  context = await launch(tmp);
  // Only the page's origin and the other origin a redirect points to (which must never be asked).
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(server.url) || u.startsWith(other.url) || u.startsWith('data:')) return route.continue();
    return route.abort();
  });
});

after(async () => {
  if (context) await context.close();
  if (server) await server.close();
  fake?.kill();
  other?.kill();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A tab on the playground with the installed package imported (window.M). */
async function tab(existing) {
  const page = existing || (await context.newPage());
  if (!existing) page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${server.url}/www/`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.evaluate(async () => {
    window.M = await import('/pkg/js/web.js');
  });
  return page;
}

/** `OfflineGenerator.open` in the page, on a clock frozen inside the fake's reservations: its code or
 * the node ID. */
function openIn(page, name) {
  return page.evaluate(async (name) => {
    try {
      const clock = () => 1288834974657 + 262200;
      window.g = await window.M.OfflineGenerator.open({ url: location.origin, name, clock });
      return { nodeId: window.g.nodeId };
    } catch (e) {
      return { code: e.code, message: e.message };
    }
  }, name);
}

/** Mints n IDs in the page (waiting out TOO_FAR_AHEAD while the mark is saved): decimal text. */
function mint(page, n) {
  return page.evaluate(async (n) => {
    const out = [];
    for (let tries = 0; out.length < n && tries < 100000; tries++) {
      try {
        for (const id of window.g.nextIds(Math.min(1000, n - out.length))) out.push(id.toString());
      } catch (e) {
        if (e.code !== 'TOO_FAR_AHEAD') throw e;
        await window.g.flush();
      }
    }
    return out;
  }, n);
}

test('a lease answer of 8 MB is refused, not read', async () => {
  await fake.control('/_test/reset');
  await fake.control(`/_test/misbehave?mode=lease_huge&bytes=${8 << 20}`);
  const page = await tab();
  const r = await openIn(page, 'huge');
  assert.equal(r.code, 'SERVICE_UNAVAILABLE', JSON.stringify(r));
  assert.match(r.message, /more than 65536 bytes/);
  await page.close();
});

test('a redirect to another origin is never followed (OfflineGenerator and Client)', async () => {
  await fake.control('/_test/reset');
  await fake.control(`/_test/misbehave?mode=redirect&to=${encodeURIComponent(other.url)}`);
  const page = await tab();
  const r = await openIn(page, 'redirect');
  assert.equal(r.code, 'INVALID_ARGUMENT', JSON.stringify(r));
  const c = await page.evaluate(async () => {
    const client = new window.M.Client({ url: location.origin, retries: 3 });
    try {
      return { id: String(await client.nextId()) };
    } catch (e) {
      return { code: e.code, field: e.field, requests: client.stats().requests };
    } finally {
      client.close();
    }
  });
  assert.deepEqual(c, { code: 'INVALID_ARGUMENT', field: 'url', requests: 1 });
  assert.equal((await other.stats()).requests, 0, 'the other origin was never asked');
  await page.close();
});

test('the same node ID handed back after LEASE_LOST: no ID twice, in memory, after a reload, in another generator', async () => {
  // The service loses every lease on renewal and hands node 0 back, always from the same start.
  await fake.control('/_test/reset');
  await fake.control('/_test/misbehave?mode=same_node_lost');
  const page = await tab();
  const first = await openIn(page, 'floor');
  assert.equal(first.nodeId, 0, JSON.stringify(first));
  const seen = new Set(await mint(page, 20000));
  await page.evaluate(() => window.g.renew());
  assert.equal(await page.evaluate(() => window.g.nodeId), 0);
  for (const id of await mint(page, 20000)) seen.add(id);
  assert.equal(seen.size, 40000, `${40000 - seen.size} IDs repeated`);
  // A reload: the stored lease is lost on renewal, node 0 comes back again.
  await page.evaluate(() => window.g.flush());
  await tab(page);
  const again = await openIn(page, 'floor');
  assert.equal(again.nodeId, 0, JSON.stringify(again));
  for (const id of await mint(page, 20000)) seen.add(id);
  assert.equal(seen.size, 60000, `${60000 - seen.size} IDs repeated after the reload`);
  // Another generator of this URL (another name) handed node 0 later: above every mark of the browser.
  await page.evaluate(() => window.g.close());
  const other = await openIn(page, 'floor-other');
  assert.equal(other.nodeId, 0, JSON.stringify(other));
  for (const id of await mint(page, 20000)) seen.add(id);
  assert.equal(seen.size, 80000, `${80000 - seen.size} IDs repeated by another generator`);
  await page.evaluate(() => window.g.close());
  await page.close();
  assert.deepEqual(pageErrors, []);
});
