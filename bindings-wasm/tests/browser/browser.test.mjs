// Real-browser tests: Debian's Chromium, headless, driven by playwright-core. Pages come from a Node
// http server on 127.0.0.1 (and the playground once more from file://). Runs the conformance vectors
// inside a page, drives the playground (mint, decode a pasted ID, switch layout, custom layout errors,
// timing), checks at desktop and phone (390 px) widths that nothing overflows the viewport, and saves
// screenshots under target/wasm-work/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serve } from './server.mjs';
import { launch } from './chromium.mjs';
import { layoutProblems } from './layout.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.resolve(here, '..', '..');
const root = path.resolve(wasmDir, '..');
const work = path.join(root, 'target', 'wasm-work');
const project = process.env.SNOWMINT_WASM_PROJECT;
const vectorsDir = process.env.SNOWMINT_VECTORS_DIR || path.join(root, 'tests', 'vectors');

let server;
let context;
let tmp;
const pageErrors = [];

before(async () => {
  assert.ok(project, 'SNOWMINT_WASM_PROJECT (the project the tarball is installed in) is set by test.sh');
  server = await serve(
    {
      '/www/': path.join(wasmDir, 'www'),
      '/pkg/': path.join(project, 'node_modules', 'snowmint-wasm'),
      '/tests/js/': path.join(root, 'tests', 'js'),
      '/tests/vectors/': vectorsDir,
      '/harness/': path.join(here, 'harness'),
    },
    vectorsDir,
  );
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-chromium-'));
  context = await launch(tmp, { viewport: { width: 1200, height: 1500 } });
  // Only 127.0.0.1 and file:// traffic.
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(server.url) || u.startsWith('file://') || u.startsWith('data:')) return route.continue();
    return route.abort();
  });
});

after(async () => {
  if (context) await context.close();
  if (server) await server.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function open(url) {
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${url}: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(`${url}: console: ${m.text()}`);
  });
  await page.goto(url);
  return page;
}

test('every conformance vector passes inside Chromium (shared runner, web build)', async () => {
  const page = await open(`${server.url}/harness/conformance.html`);
  await page.waitForFunction(() => window.__conformance !== undefined, null, { timeout: 120000 });
  const r = await page.evaluate(() => window.__conformance);
  const recordDir = process.env.SNOWMINT_CONFORMANCE_DIR;
  if (recordDir) {
    // One line per case the page ran, for scripts/check-conformance.py.
    fs.mkdirSync(recordDir, { recursive: true });
    fs.appendFileSync(
      path.join(recordDir, 'wasm-browser.txt'),
      r.records.map(([file, name, passed]) => `${file}\t${name}\t${passed ? 'pass' : 'fail'}\n`).join(''),
    );
  }
  console.log(
    `# in-browser conformance: ${r.passed} passed, ${r.failed} failed, ${r.cases} cases in ${r.files.length} files, ${Math.round(r.ms)} ms (${r.userAgent})`,
  );
  assert.deepEqual(r.failures, []);
  assert.equal(r.failed, 0);
  assert.ok(r.cases > 0 && r.passed >= r.cases, `${r.passed} passed of ${r.cases} cases`);
  const expectedFiles = fs.readdirSync(vectorsDir).filter((f) => f.endsWith('.json'));
  assert.equal(r.files.length, expectedFiles.length, `files run: ${r.files}`);
  await page.close();
});

async function fact(page, id) {
  return (await page.locator(`#${id}`).textContent()).trim();
}

test('the playground: layout facts, mint, decode a pasted ID, switch layout, custom layout errors', async () => {
  const page = await open(`${server.url}/www/`);
  await page.waitForSelector('body[data-ready="true"]');
  assert.match(await page.locator('#status').textContent(), /ready/);

  // twitter by default
  assert.equal(await fact(page, 'fact-name'), 'twitter');
  assert.equal(await fact(page, 'fact-lifespan'), '2080-07-10T17:30:30.209Z');
  assert.equal(await fact(page, 'fact-nodes'), '1,024');
  assert.equal(await fact(page, 'fact-per-tick'), '4,096');
  assert.deepEqual(
    await page
      .locator('#diagram .seg')
      .evaluateAll((els) => els.map((e) => `${e.className}:${e.dataset.bits}`)),
    ['seg unused:1', 'seg timestamp:41', 'seg node:10', 'seg sequence:12'],
  );

  // mint with node 7
  await page.fill('#node-id', '7');
  await page.click('#mint');
  await page.click('#mint10');
  const rows = page.locator('#minted tbody tr');
  assert.equal(await rows.count(), 11);
  const first = await rows.nth(0).locator('td').allTextContents();
  const last = await rows.nth(10).locator('td').allTextContents();
  assert.ok(BigInt(first[0]) > BigInt(last[0]), 'newest first, increasing');
  assert.equal(first[5], '7');
  const minted = first[0];
  assert.ok(Math.abs(Date.parse(first[4]) - Date.now()) < 60000, `minted now: ${first[4]}`);

  // decode a pasted ID, in decimal and in base58: the page names the layout and the form it read
  await page.fill('#decode-input', '1212161512043450368');
  assert.equal(await fact(page, 'dec-iso'), '2020-01-01T00:00:00.000Z');
  assert.equal(await fact(page, 'dec-layout'), 'twitter');
  assert.equal(await fact(page, 'dec-form'), 'decimal');
  assert.equal(await fact(page, 'dec-node'), '1');
  assert.equal(await fact(page, 'dec-seq'), '0');
  const b58 = await fact(page, 'dec-base58');
  await page.fill('#decode-input', b58);
  assert.equal(await fact(page, 'dec-dec'), '1212161512043450368');
  assert.equal(await fact(page, 'dec-form'), 'base58');
  await page.fill('#decode-input', `0x${await fact(page, 'dec-hex')}`);
  assert.equal(await fact(page, 'dec-dec'), '1212161512043450368');
  assert.equal(await fact(page, 'dec-form'), 'hex');
  await page.fill('#decode-input', await fact(page, 'dec-base32'));
  assert.equal(await fact(page, 'dec-form'), 'base32');
  // 16 digits: decimal, or hex? The page never chooses: both readings are named.
  await page.fill('#decode-input', '1970065334000000');
  assert.match(
    await page.locator('#decode-error').textContent(),
    /^PARSE: .*dec 1970065334000000 or as hex 1832972002764259328/,
  );
  await page.fill('#decode-input', minted);
  assert.equal(await fact(page, 'dec-node'), '7');
  await page.fill('#decode-input', '12x4');
  assert.match(await page.locator('#decode-error').textContent(), /^PARSE: /);

  // switch layout: sonyflake (ts|seq|node, 10 ms ticks)
  await page.selectOption('#preset', 'sonyflake');
  assert.equal(await fact(page, 'fact-name'), 'sonyflake');
  assert.equal(await fact(page, 'fact-tick'), '10,000,000 ns');
  assert.equal(await fact(page, 'fact-lifespan'), new Date(1409529600000 + 2 ** 39 * 10).toISOString());
  assert.deepEqual(
    await page.locator('#diagram .seg').evaluateAll((els) => els.map((e) => e.className.slice(4))),
    ['unused', 'timestamp', 'sequence', 'node'],
  );
  await page.fill('#decode-input', '1212161512043450368');
  assert.match(await fact(page, 'dec-iso'), /^\d{4}-/);
  await page.fill('#node-id', '65535');
  await page.click('#mint');
  assert.equal((await page.locator('#minted tbody tr').nth(0).locator('td').allTextContents())[5], '65535');
  await page.fill('#node-id', '65536');
  await page.click('#mint');
  assert.match(await page.locator('#mint-error').textContent(), /^NODE_ID_OUT_OF_RANGE: /);

  // snowcast and custom layouts, with a bad field
  await page.selectOption('#preset', 'snowcast');
  assert.equal(await fact(page, 'fact-nodes'), '1,024');
  await page.selectOption('#preset', 'custom');
  await page.fill('#c-ts', '50');
  assert.match(await page.locator('#layout-error').textContent(), /^INVALID_LAYOUT: .*timestamp_bits/);
  await page.fill('#c-ts', '40');
  assert.equal(await page.locator('#layout-error').isHidden(), true);
  assert.equal(await fact(page, 'fact-name'), 'custom');
  await page.fill('#decode-input', '1212161512043450368');
  assert.equal(await fact(page, 'dec-layout'), 'custom (40 / 10 / 12 bits, timestamp | node | sequence)');

  // back to js53 for the screenshot, with a few IDs and a decoded one
  await page.selectOption('#preset', 'js53');
  await page.fill('#node-id', '3');
  await page.click('#clear');
  await page.click('#mint10');
  const js53 = (await page.locator('#minted tbody tr').nth(0).locator('td').allTextContents())[0];
  await page.fill('#decode-input', js53);
  assert.equal(await fact(page, 'dec-node'), '3');
  await page.click('#random-node');
  const random = BigInt(await page.inputValue('#node-id'));
  assert.ok(random >= 0n && random <= 15n);
  assert.match(await page.locator('#odds').textContent(), /N = 16/);
  await page.fill('#node-id', '3');

  // time nextId() in the page
  const ns = await page.evaluate(() => window.snowmintBench());
  console.log(`# nextId() in Chromium: ${ns.toFixed(1)} ns per ID`);
  fs.writeFileSync(path.join(work, 'chromium-nextid-ns.txt'), `${ns}\n`);
  assert.ok(ns > 0 && ns < 10000);

  const shot = path.join(work, 'playground.png');
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`# screenshot: ${shot}`);
  await page.close();
});

test('the playground at desktop and phone widths: nothing overflows, no label is clipped; screenshots', async () => {
  for (const [device, width, height] of [
    ['desktop', 1200, 900],
    ['phone', 390, 844],
  ]) {
    const page = await open(`${server.url}/www/`);
    await page.setViewportSize({ width, height });
    await page.waitForSelector('body[data-ready="true"]');
    for (const preset of ['sonyflake', 'decimal', 'custom', 'twitter']) {
      await page.selectOption('#preset', preset);
      await page.fill('#node-id', preset === 'decimal' ? '42' : '7');
      await page.click('#mint10');
      await page.fill('#decode-input', '1212161512043450368');
      const { bad, checked, vw } = await layoutProblems(page);
      assert.equal(vw, width);
      assert.ok(checked > 100, `only ${checked} elements measured`);
      assert.deepEqual(bad, [], `${device} (${width} px), ${preset}`);
    }
    // twitter's 63 bits leave the sign bit: its field is drawn, with its whole label.
    const sign = page.locator('#diagram .seg.unused');
    assert.equal(await sign.count(), 1);
    assert.deepEqual(await sign.locator('span').allTextContents(), ['unused', '1 bit']);
    assert.equal(await fact(page, 'dec-layout'), 'twitter');
    const shot = path.join(work, `playground-${device}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    const png = fs.readFileSync(shot);
    assert.equal(png.readUInt32BE(16), width, 'screenshot width'); // IHDR width
    console.log(`# screenshot (${device}, ${width} px): ${shot}`);
    await page.close();
  }
});

test('the playground works offline from file://', async () => {
  const page = await open(pathToFileURL(path.join(wasmDir, 'www', 'index.html')).href);
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#mint');
  assert.equal(await page.locator('#minted tbody tr').count(), 1);
  await page.fill('#decode-input', '1212161512043450368');
  assert.equal(await fact(page, 'dec-iso'), '2020-01-01T00:00:00.000Z');
  await page.close();
});

test('no page error or console error', () => {
  assert.deepEqual(pageErrors, []);
});
