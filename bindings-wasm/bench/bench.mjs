// nextId() side by side in one Node process: snowmint-wasm, snowmint (native Node binding, when it
// loads), nodejs-snowflake (Rust compiled to WASM) and @sapphire/snowflake (pure JS).
//
// Within layout capacity: every peer mints in bursts of BURST IDs started on a fresh millisecond
// (4000 < 4096 IDs per ms for a twitter-style 12-bit sequence), so nobody is timed while waiting out a
// used-up millisecond; only the bursts are timed. Rounds alternate between the peers; the median burst
// (and the 10th percentile) is reported.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.resolve(here, '..');
const root = path.resolve(wasmDir, '..');
const tools = process.env.SNOWMINT_TOOLS || path.join(root, 'target', 'wasm-work', 'tools', 'node_modules');
const requireTools = createRequire(path.join(tools, 'x.js'));
const require = createRequire(import.meta.url);

const BURST = 4000;
const BURSTS_PER_ROUND = 25; // 100k IDs per round
const ROUNDS = Number(process.env.SNOWMINT_BENCH_ROUNDS || 15);
const EPOCH = 1288834974657;

const peers = [];
const notes = [];

const wasm = require(path.join(wasmDir, 'js', 'node.cjs'));
{
  const g = new wasm.Generator({ nodeId: 7, layout: 'twitter' });
  peers.push({ name: 'snowmint-wasm nextId()', fn: () => g.nextId() });
  const gs = new wasm.Generator({ nodeId: 8, layout: 'twitter' });
  peers.push({ name: 'snowmint-wasm nextIdString()', fn: () => gs.nextIdString(), extra: true });
  const gb = new wasm.Generator({ nodeId: 9, layout: 'twitter' });
  peers.push({
    name: 'snowmint-wasm nextIds(1000) per ID',
    fn: () => gb.nextIds(1000),
    batch: 1000,
    extra: true,
  });
}
try {
  const native = require(path.join(root, 'bindings-node', 'index.js'));
  const g = new native.Generator({ nodeId: 7, layout: 'twitter' });
  g.nextId();
  peers.push({ name: 'snowmint native (napi) nextId()', fn: () => g.nextId() });
} catch (e) {
  notes.push(
    `snowmint native Node binding not measured: it did not load (${String(e.message).split('\n')[0]})`,
  );
}
{
  const { Snowflake } = requireTools('nodejs-snowflake');
  const s = new Snowflake({ custom_epoch: EPOCH, instance_id: 7 });
  peers.push({ name: 'nodejs-snowflake getUniqueID()', fn: () => s.getUniqueID() });
}
{
  const { Snowflake } = requireTools('@sapphire/snowflake');
  const s = new Snowflake(EPOCH);
  peers.push({ name: '@sapphire/snowflake generate()', fn: () => s.generate() });
}

// The floor: nextId() reads the clock once per ID (the module is called only for a new millisecond's
// window), and Date.now() is the cheapest exact clock JavaScript has.
peers.push({ name: 'Date.now() alone (the floor)', fn: () => Date.now(), kind: 'floor' });

function nextMs() {
  const t = Date.now();
  while (Date.now() === t) {
    /* spin to a fresh millisecond (not timed) */
  }
}

/** One round: BURSTS_PER_ROUND timed bursts; returns each burst's ns per ID. */
function round(p) {
  const calls = p.batch ? BURST / p.batch : BURST;
  const out = [];
  let sink = 0n;
  for (let b = 0; b < BURSTS_PER_ROUND; b++) {
    nextMs();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) {
      const v = p.fn();
      if (i === 0) sink ^= typeof v === 'bigint' ? v : 1n;
    }
    out.push(Number(process.hrtime.bigint() - t0) / BURST);
  }
  if (sink === -1n) console.log('unreachable');
  return out;
}

// warm up
for (const p of peers) for (let i = 0; i < 3; i++) round(p);
const samples = new Map(peers.map((p) => [p, []]));
for (let r = 0; r < ROUNDS; r++) for (const p of peers) samples.get(p).push(...round(p));
// The median burst: on a shared machine a burst is now and then preempted for milliseconds, which
// would swamp a mean; the median and the 10th percentile are what one call costs.
const quantile = (a, q) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor((s.length - 1) * q)];
};

const base = quantile(samples.get(peers[0]), 0.5);
const rows = peers.map((p) => {
  const m = quantile(samples.get(p), 0.5);
  const min = quantile(samples.get(p), 0.1);
  return { name: p.name, ns: m, min, mops: 1000 / m, ratio: m / base, floor: p.kind === 'floor' };
});
const w = Math.max(...rows.map((r) => r.name.length));
console.log(
  `nextId() in Node ${process.version}, twitter layout, bursts of ${BURST} IDs per fresh ms, ` +
    `${ROUNDS} rounds × ${BURSTS_PER_ROUND} bursts, median burst (p10)`,
);
console.log(`${'implementation'.padEnd(w)} | ns/ID (p10)      | M IDs/s | time vs snowmint-wasm nextId()`);
console.log(`${'-'.repeat(w)}-|------------------|---------|-------------------------------`);
for (const r of rows) {
  const rel = r.floor
    ? `${r.ratio.toFixed(2)}× (snowmint-wasm nextId() = ${(1 / r.ratio).toFixed(2)}× its floor)`
    : r.ratio >= 1
      ? `${r.ratio.toFixed(2)}× (snowmint-wasm ${r.ratio.toFixed(2)}× faster)`
      : `${r.ratio.toFixed(2)}× (${(1 / r.ratio).toFixed(2)}× faster than snowmint-wasm)`;
  console.log(
    `${r.name.padEnd(w)} | ${r.ns.toFixed(1).padStart(6)} (${r.min.toFixed(1).padStart(6)})  | ${r.mops.toFixed(2).padStart(7)} | ${r.name === peers[0].name ? '1.00× (baseline)' : rel}`,
  );
}
for (const n of notes) console.log(`note: ${n}`);
// The machine-readable summary for scripts/bench-all.sh: the medians of the table above (the first
// snowmint single and batch rows are the headline figures, Date.now() the floor). The native Node
// binding is listed as a peer of snowmint-wasm. chromium.mjs adds its rows (group "chromium") after.
if (process.env.SNOWMINT_BENCH_JSON) {
  const fs = await import('node:fs');
  const out = peers.map((p, i) => ({
    name: p.name,
    kind: p.kind || (p.name.startsWith('snowmint-wasm') ? 'snowmint' : 'peer'),
    what: p.kind === 'floor' ? 'clock' : p.batch ? 'batch' : 'single',
    ns_per_id: rows[i].ns,
  }));
  fs.writeFileSync(
    process.env.SNOWMINT_BENCH_JSON,
    JSON.stringify({ runtime: 'wasm', rows: out }, null, 1) + '\n',
  );
}
