// nextId() timed inside headless Chromium: the playground's own timer (best of 5 × 200,000 calls on a
// fresh twitter generator), next to the same loop for @sapphire/snowflake's IIFE build in the same page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tests/browser/server.mjs';
import { launch } from '../tests/browser/chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.resolve(here, '..');
const root = path.resolve(wasmDir, '..');
const tools = process.env.SNOWMINT_TOOLS || path.join(root, 'target', 'wasm-work', 'tools', 'node_modules');

const server = await serve(
  { '/www/': path.join(wasmDir, 'www'), '/peers/': tools },
  path.join(root, 'tests', 'vectors'),
);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-bench-chromium-'));
const context = await launch(tmp);
try {
  const page = await context.newPage();
  await page.goto(`${server.url}/www/`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.addScriptTag({ url: `${server.url}/peers/@sapphire/snowflake/dist/iife/index.global.js` });
  const wasmNs = await page.evaluate(() => window.snowmintBench());
  const sapphireNs = await page.evaluate(() => {
    const s = new window.SapphireSnowflake.Snowflake(1288834974657n);
    const n = 200000;
    for (let i = 0; i < 20000; i++) s.generate();
    let best = Infinity;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) s.generate();
      best = Math.min(best, performance.now() - t0);
    }
    return (best * 1e6) / n;
  });
  const ua = await page.evaluate(() => navigator.userAgent.match(/Chrome\/[\d.]+/)[0]);
  console.log(`nextId() inside headless Chromium (${ua}), best of 5 × 200,000 calls`);
  console.log('implementation                  | ns/ID | time vs snowmint-wasm');
  console.log('--------------------------------|-------|----------------------');
  console.log(`snowmint-wasm nextId()          | ${wasmNs.toFixed(1).padStart(5)} | 1.00× (baseline)`);
  console.log(
    `@sapphire/snowflake generate()  | ${sapphireNs.toFixed(1).padStart(5)} | ${(sapphireNs / wasmNs).toFixed(2)}×`,
  );
  console.log('(performance.now() is coarsened in the page; the runs are long enough for it not to matter.)');
  // Appended to bench.mjs's machine-readable summary (same run of bench.sh), as group "chromium": their
  // ratios are taken against each other, not against the figures measured in Node.
  const out = process.env.SNOWMINT_BENCH_JSON;
  if (out) {
    const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
    doc.rows.push(
      {
        name: 'snowmint-wasm nextId() in Chromium',
        kind: 'snowmint',
        what: 'single',
        ns_per_id: wasmNs,
        group: 'chromium',
      },
      {
        name: '@sapphire/snowflake generate() in Chromium',
        kind: 'peer',
        what: 'single',
        ns_per_id: sapphireNs,
        group: 'chromium',
      },
    );
    fs.writeFileSync(out, JSON.stringify(doc, null, 1) + '\n');
  }
} finally {
  await context.close();
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
