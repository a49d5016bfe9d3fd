// OfflineGenerator in a real browser (Debian's Chromium, headless, playwright-core) against a real
// `snowmint serve` (SNOWMINT_CLI, started here on a free 127.0.0.1 port with a file:// lease store in a
// temporary directory). The page and the service share one origin: the test's static server passes /v1/
// to the service. Takes leases in two tabs, goes offline (context.setOffline), mints, reloads, mints
// more; no ID repeats across all of it. An expired reservation while offline is LEASE_LOST; back online
// the `online` event renews and minting continues. The playground's offline mode is driven and measured
// at 390 px; a screenshot is saved and checked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { serve } from './server.mjs';
import { launch } from './chromium.mjs';
import { layoutProblems } from './layout.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.resolve(here, '..', '..');
const root = path.resolve(wasmDir, '..');
const work = path.join(root, 'target', 'wasm-work');
const project = process.env.SNOWMINT_WASM_PROJECT;
const cli = process.env.SNOWMINT_CLI || path.join(root, 'target', 'debug', 'snowmint');

let service;
let serviceOrigin;
let server;
let context;
let tmp;
const pageErrors = [];

/**
 * Starts `snowmint serve` on a free port; resolves to its base URL once it says where it listens. The
 * embedded store bounds what any holder mints ahead of the clock (1 s unless its URL says): client
 * leases reach no further, so the store is given the bound of the default 60 s reservation.
 */
function startService(store) {
  const url = `file://${store}?max_ahead=60s`;
  service = spawn(cli, ['serve', '--listen', '127.0.0.1:0', '--node', '1', '--leases', url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('snowmint serve did not start in 20 s')), 20000);
    service.on('error', reject);
    service.on('exit', (code) => reject(new Error(`snowmint serve exited (${code})`)));
    readline.createInterface({ input: service.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/[0-9.:]+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

function stopService() {
  if (service && service.exitCode === null) service.kill('SIGTERM');
}
process.on('exit', stopService);

before(async () => {
  assert.ok(project, 'SNOWMINT_WASM_PROJECT (the project the tarball is installed in) is set by test.sh');
  assert.ok(fs.existsSync(cli), `the CLI is built (${cli})`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-offline-'));
  const store = path.join(tmp, 'store');
  fs.mkdirSync(store);
  const serviceUrl = await startService(store);
  serviceOrigin = serviceUrl;
  server = await serve(
    {
      '/www/': path.join(wasmDir, 'www'),
      '/pkg/': path.join(project, 'node_modules', 'snowmint-wasm'),
    },
    null,
    serviceUrl,
  );
  context = await launch(tmp, { viewport: { width: 1200, height: 1200 } });
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(server.url) || u.startsWith(serviceUrl) || u.startsWith('data:'))
      return route.continue();
    return route.abort();
  });
});

after(async () => {
  if (context) await context.close();
  if (server) await server.close();
  stopService();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A tab on the playground with the installed package imported (window.M) while online. */
async function tab(existing) {
  const page = existing || (await context.newPage());
  if (!existing) {
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
    });
  }
  await page.goto(`${server.url}/www/`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.evaluate(async () => {
    window.M = await import('/pkg/js/web.js');
  });
  return page;
}

/** Opens the generator `g` in the page (the README's example, with a name and an optional skewed clock). */
async function openIn(page, name, skewed = false) {
  return page.evaluate(
    async ({ name, skewed }) => {
      const { OfflineGenerator } = window.M;
      window.skew = 0;
      const options = { url: location.origin, name };
      if (skewed) options.clock = () => Date.now() + window.skew;
      window.g = await OfflineGenerator.open(options);
      return { slot: window.g.slot, nodeId: window.g.nodeId, lastEvent: window.g.lastEvent };
    },
    { name, skewed },
  );
}

/** Mints n IDs one by one in the page (waiting out TOO_FAR_AHEAD while the mark is saved): decimal text. */
async function mint(page, n) {
  return page.evaluate(async (n) => {
    const out = [];
    for (let tries = 0; out.length < n && tries < 100000; tries++) {
      try {
        out.push(window.g.nextIdString());
      } catch (e) {
        if (e.code !== 'TOO_FAR_AHEAD') throw e;
        await new Promise((r) => setTimeout(r, e.retryAfterMs));
      }
    }
    return out;
  }, n);
}

const increasing = (ids) => ids.every((id, i) => i === 0 || BigInt(id) > BigInt(ids[i - 1]));

test('two tabs, offline, reload: every ID unique, each tab increasing after its reload', async () => {
  const a = await tab();
  const b = await tab();
  const la = await openIn(a, 'default');
  const lb = await openIn(b, 'default');
  // Web Locks: the second tab holds the second slot, under its own lease (its own node ID).
  assert.deepEqual([la.slot, lb.slot], [0, 1]);
  assert.notEqual(la.nodeId, lb.nodeId);
  // A new lease on the embedded store starts max_ahead (here 60 s) past the clock, so its room is what
  // the clock has moved since the take (SPEC §3.2): renewed 1.5 s later, it has room to go offline (and
  // for the reload's mark, which lies 10/16 s of positions past the last ID).
  await a.waitForTimeout(1500);
  for (const p of [a, b]) await p.evaluate(() => window.g.renew());
  const idsA = await mint(a, 2000);
  const idsB = await mint(b, 2000);

  await context.setOffline(true);
  assert.equal(await a.evaluate(() => navigator.onLine), false);
  idsA.push(...(await mint(a, 3000)));
  idsB.push(...(await mint(b, 3000)));
  const [markA, hwmA] = await a.evaluate(() => [window.g.lease.persisted, window.g.highWaterMark()]);
  assert.ok(
    markA >= hwmA,
    `the persisted mark ${markA} lies past the last position handed out (${hwmA} - 1)`,
  );
  const renewOffline = await a.evaluate(() =>
    window.g.renew().then(
      () => 'renewed',
      (e) => e.code,
    ),
  );
  assert.equal(renewOffline, 'SERVICE_UNAVAILABLE');

  // Reload tab A without a flush or a close (as a crash would): the page itself needs the network to
  // load (it has no service worker), so it comes back online for that, then offline before open().
  await context.setOffline(false);
  await a.evaluate(() => {
    window.g = null;
  }); // no close(): the lock goes with the page
  await context.route('**/v1/**', (route) => route.abort()); // the service stays unreachable meanwhile
  await tab(a);
  await context.setOffline(true);
  await context.unroute('**/v1/**');
  const again = await openIn(a, 'default');
  assert.equal(again.slot, 0, 'the reloaded tab takes its slot again');
  assert.equal(again.nodeId, la.nodeId, 'and the stored lease');
  assert.match(again.lastEvent, /^offline: using the stored lease/);
  const afterReload = await mint(a, 3000);
  assert.ok(BigInt(afterReload[0]) > BigInt(idsA.at(-1)), 'a reload continues after the last ID');
  idsA.push(...afterReload);
  idsB.push(...(await mint(b, 1000)));

  assert.ok(increasing(idsA) && increasing(idsB));
  const all = [...idsA, ...idsB];
  assert.equal(new Set(all).size, all.length, 'an ID repeats across the tabs');
  console.log(
    `# offline: ${all.length} IDs from two tabs (nodes ${la.nodeId}, ${lb.nodeId}), one reload offline, all unique`,
  );

  // What the lease checks cost: nextId() of the OfflineGenerator against the plain Generator's, best of 5.
  const ns = await a.evaluate(() => {
    const plain = new window.M.Generator({ nodeId: 1 });
    const time = (g) => {
      let best = Infinity;
      for (let round = 0; round < 5; round++) {
        const t = performance.now();
        for (let i = 0; i < 20000; i++) g.nextId();
        best = Math.min(best, performance.now() - t);
        const until = performance.now() + 30; // logical time falls back behind the clock
        while (performance.now() < until) {
          /* spin */
        }
      }
      return (best * 1e6) / 20000;
    };
    const r = { offline: time(window.g), plain: time(plain) };
    plain.free();
    return r;
  });
  console.log(
    `# nextId() in Chromium: OfflineGenerator ${ns.offline.toFixed(1)} ns, Generator ${ns.plain.toFixed(1)} ns (${(ns.offline / ns.plain).toFixed(2)}x)`,
  );
  assert.ok(ns.offline > 0 && ns.offline < 20000);

  await context.setOffline(false);
  for (const p of [a, b]) await p.evaluate(() => window.g.close());
  await a.close();
  await b.close();
});

test('past the reservation while offline: LEASE_LOST; back online the online event renews and minting continues', async () => {
  await context.setOffline(false);
  const page = await tab();
  await openIn(page, 'clock', true);
  const before = await mint(page, 10);
  // 2 s after the lease was taken: its renewal's reservation (the service's clock + the reservation)
  // then reaches about 2 s past the old one, past the skewed clock below.
  await page.waitForTimeout(2000);
  await context.setOffline(true);
  const r = await page.evaluate(() => {
    const l = window.g.lease;
    // A new lease on the embedded store renews early (its room grows with the clock, SPEC §3.2): the
    // renewal awaited below is the one after this.
    window.g.lastEvent = 'offline';
    window.skew = l.limitUnixMs - Date.now() + 50; // the injected clock: just past the reservation
    try {
      window.g.nextId();
      return { code: 'none' };
    } catch (e) {
      return { code: e.code, name: e.name, message: e.message, limit: l.limit };
    }
  });
  assert.equal(r.code, 'LEASE_LOST', r.message);
  assert.equal(r.name, 'SnowmintError');
  assert.match(r.message, /reservation ends at position \d+/);

  await context.setOffline(false); // the `online` event renews
  await page.waitForFunction(() => window.g.lastEvent === 'renewed', null, { timeout: 15000 });
  const renewed = await page.evaluate(() => window.g.lease);
  assert.ok(renewed.limit > r.limit, 'renewal moves the limit');
  const after = await mint(page, 10);
  assert.ok(BigInt(after[0]) > BigInt(before.at(-1)));
  assert.ok(
    await page.evaluate(() => window.g.highWaterMark() <= window.g.lease.limit),
    'minted below the limit',
  );
  await page.evaluate(() => window.g.close({ release: true }));
  await page.close();
});

test("the playground's offline mode: take a lease, mint offline, status; clean at 390 px; screenshot", async () => {
  await context.setOffline(false);
  const page = await tab();
  await page.setViewportSize({ width: 390, height: 844 });
  assert.equal(await page.inputValue('#svc-url'), server.url);
  await page.click('#svc-open');
  await page.waitForFunction(() => document.querySelector('#svc-node').textContent !== '');
  await context.setOffline(true);
  await page.click('#svc-mint10');
  await page.click('#svc-mint');
  assert.equal(await page.locator('#svc-ids li').count(), 11);
  const shown = await page.locator('#svc-ids li').allTextContents();
  assert.ok(increasing(shown.reverse()));
  assert.equal(
    await page.locator('#svc-error').isHidden(),
    true,
    await page.locator('#svc-error').textContent(),
  );
  await page.waitForFunction(() => document.querySelector('#svc-net').textContent === 'offline');
  assert.match(await page.locator('#svc-state').textContent(), /^held, \d+ s of reservation left$/);
  assert.match(await page.locator('#svc-limit').textContent(), /^\d{4}-\d\d-\d\dT.*Z \(position \d+\)$/);
  const { bad, checked, vw } = await layoutProblems(page);
  assert.equal(vw, 390);
  assert.ok(checked > 100, `only ${checked} elements measured`);
  assert.deepEqual(bad, []);
  await page.locator('#offline-section').scrollIntoViewIfNeeded();
  const shot = path.join(work, 'playground-offline.png');
  await page.locator('#offline-section').screenshot({ path: shot });
  const png = fs.readFileSync(shot);
  assert.equal(
    png.readUInt32BE(16),
    await page.locator('#offline-section').evaluate((e) => Math.round(e.getBoundingClientRect().width)),
  );
  // Not blank: the section's pixels are not all one colour.
  const colours = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const x = c.getContext('2d');
    x.drawImage(img, 0, 0);
    const d = x.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length && seen.size < 50; i += 4 * 97) seen.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
    return seen.size;
  }, png.toString('base64'));
  assert.ok(colours >= 5, `the screenshot looks blank (${colours} colours)`);
  console.log(`# screenshot (offline mode, 390 px): ${shot}`);
  await context.setOffline(false);
  await page.close();
});

test("the playground: 'nothing is sent' only while lease mode is off; a CORS refusal is said plainly", async () => {
  await context.setOffline(false);
  const page = await tab();
  const privacy = () => page.locator('#privacy').textContent();
  assert.match(await privacy(), /while lease mode \(section 5\) is off, nothing is sent/);
  // The service itself is another origin than the page (another port), and allows no origin by CORS.
  await page.fill('#svc-url', serviceOrigin);
  await page.click('#svc-open');
  await page.waitForFunction(() => !document.querySelector('#svc-error').hidden);
  const error = await page.locator('#svc-error').textContent();
  assert.match(error, /^SERVICE_UNAVAILABLE: /, error);
  assert.ok(
    error.includes(`CORS: ${serviceOrigin} is another origin than this page's (${server.url})`),
    error,
  );
  assert.ok(error.includes(`start it with --cors-origin ${server.url}`), error);
  assert.doesNotMatch(await privacy(), /nothing is sent/);
  assert.ok((await privacy()).includes(`sends lease requests and renewals to ${serviceOrigin}`));
  await page.close();
  // Chromium logs the blocked request on the console: expected here, and only here.
  const blocked = pageErrors.filter((e) => e.includes('has been blocked by CORS policy'));
  assert.equal(blocked.length, 1, pageErrors.join('\n'));
  pageErrors.splice(pageErrors.indexOf(blocked[0]), 1);
});

test('a lease the service no longer has (409/404 LEASE_LOST on renewal) is replaced by a new one', async () => {
  await context.setOffline(false);
  const page = await tab();
  const first = await openIn(page, 'lost');
  const before = await mint(page, 100);
  // Release the lease behind the generator's back (its token, read from IndexedDB), as an expired
  // claim would be gone.
  const token = await page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('snowmint-offline');
        req.onsuccess = () => {
          const get = req.result
            .transaction('leases')
            .objectStore('leases')
            .get(`snowmint-offline:${location.origin}:lost:0`);
          get.onsuccess = () => {
            req.result.close();
            resolve(get.result.lease.token);
          };
          get.onerror = () => reject(get.error);
        };
        req.onerror = () => reject(req.error);
      }),
  );
  const res = await fetch(`${server.url}/v1/leases/${encodeURIComponent(token)}`, { method: 'DELETE' });
  assert.equal(res.status, 204);
  await page.evaluate(() => window.g.renew());
  const now = await page.evaluate(() => ({ nodeId: window.g.nodeId, lastEvent: window.g.lastEvent }));
  assert.match(now.lastEvent, /^lease lost on renewal; took a new lease: node \d+$/);
  const after = await mint(page, 100);
  assert.equal(
    await page.evaluate(() => window.g.stats().minted),
    100,
    "the new lease's generator counts afresh",
  );
  const all = [...before, ...after];
  assert.equal(new Set(all).size, all.length);
  console.log(`# lost lease: node ${first.nodeId} → node ${now.nodeId}`);
  await page.evaluate(() => window.g.close({ release: true }));
  await page.close();
});

test('the README example runs in the page as written', async () => {
  await context.setOffline(false);
  const readme = fs.readFileSync(path.join(wasmDir, 'README.md'), 'utf8');
  const block = readme.split('## Offline minting')[1].match(/```js\n([\s\S]*?)```/)[1];
  const page = await tab();
  const logged = [];
  page.on('console', (m) => logged.push(m.text()));
  const code = block.replace("from 'snowmint-wasm'", `from '${server.url}/pkg/js/web.js'`);
  await page.evaluate(async (code) => {
    await import(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })));
  }, code);
  assert.ok(
    logged.some((l) => /^\d+ from node \d+, reserved until \d{4}-\d\d-\d\dT[\d:.]+Z$/.test(l)),
    logged.join('\n'),
  );
  await page.close();
});

test('bad options and an unreachable service: clear errors with stable codes', async () => {
  await context.setOffline(false);
  const page = await tab();
  const got = await page.evaluate(async () => {
    const { OfflineGenerator, SnowmintError } = window.M;
    const outcome = async (f) => {
      try {
        await f();
        return 'no error';
      } catch (e) {
        return `${e instanceof SnowmintError ? 'SnowmintError' : e.constructor.name} ${e.code}`;
      }
    };
    return [
      await outcome(() => OfflineGenerator.open()),
      await outcome(() => OfflineGenerator.open({ url: location.origin, nodeId: 1 })),
      await outcome(() => OfflineGenerator.open({ url: 7 })),
      await outcome(() => OfflineGenerator.open({ url: 'ftp://127.0.0.1/' })),
      await outcome(() => OfflineGenerator.open({ url: location.origin, clock: 5 })),
      await outcome(() => new OfflineGenerator({ url: location.origin })),
      // Nothing stored under this name, and nothing listens there (the test refuses such requests).
      await outcome(() => OfflineGenerator.open({ url: 'http://127.0.0.1:9', name: 'unreachable' })),
    ];
  });
  assert.deepEqual(got, [
    'TypeError INVALID_ARGUMENT',
    'TypeError INVALID_ARGUMENT',
    'TypeError INVALID_ARGUMENT',
    'SnowmintError INVALID_ARGUMENT',
    'TypeError INVALID_ARGUMENT',
    'TypeError INVALID_ARGUMENT',
    'SnowmintError SERVICE_UNAVAILABLE',
  ]);
  await page.close();
});

test('no page error or console error', () => {
  // Chromium reports the refused requests of the offline phases as console errors; nothing else may appear.
  assert.deepEqual(
    pageErrors.filter((e) => !/ERR_INTERNET_DISCONNECTED|ERR_FAILED|Failed to load resource/.test(e)),
    [],
  );
});
