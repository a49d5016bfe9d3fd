// Side-by-side benchmark, one process, one run: snowmint (this package) against @sapphire/snowflake,
// flake-idgen, crypto.randomUUID() and uuid v7. For each: median ns per ID over several rounds, and the
// duplicates among 200k IDs generated as fast as possible. Ratios are computed from this same run.
import { createRequire } from 'node:module'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'

const peersDir = process.env.SNOWMINT_BENCH_PEERS
if (!peersDir) throw new Error('set SNOWMINT_BENCH_PEERS (bench.sh does)')
const here = createRequire(import.meta.url)
const peers = createRequire(join(peersDir, 'package.json'))
const { Generator, Layout } = here('./index.js')
const { Snowflake } = peers('@sapphire/snowflake')
const FlakeId = peers('flake-idgen')
const { v7: uuidv7 } = await import(peers.resolve('uuid'))

const ROUNDS = 9
const now = () => process.hrtime.bigint()
let sink

/** A timing loop of its own for each implementation (`new Function`): one shared loop would see every
 * implementation at one call site, and the JIT would then treat them all as megamorphic. */
function makeLoop() {
  return new Function(
    'fn',
    'state',
    'calls',
    'now',
    `
    let sink
    const t0 = now()
    for (let i = 0; i < calls; i++) sink = fn(state)
    const t1 = now()
    return [t1 - t0, sink]`,
  )
}

/** One timed round: ns per ID of `calls` calls of `fn` on a fresh state (`perCall` IDs per call). */
function round(r) {
  const state = r.make() // a fresh generator each round: no round starts ahead of the clock
  const calls = r.calls ?? 200_000
  r.loop ??= makeLoop()
  const [ns, last] = r.loop(r.fn, state, calls, now)
  sink = last
  return Number(ns) / (calls * (r.perCall ?? 1))
}

/** Rounds are interleaved (every implementation once per pass), so load on a shared machine hits all
 * alike; the median of ROUNDS passes is reported, after one warm-up pass. */
function measureAll(rows) {
  for (const r of rows) r.samples = []
  for (let pass = 0; pass <= ROUNDS; pass++) {
    for (const r of rows) {
      const ns = round(r)
      if (pass > 0) r.samples.push(ns)
    }
  }
  for (const r of rows) {
    r.samples.sort((a, b) => a - b)
    r.ns = r.samples[r.samples.length >> 1]
  }
}

/** Duplicates among `n` IDs minted as fast as possible (keys: bigint or string). */
function duplicates(make, fn, key, n = 200_000) {
  const state = make()
  const seen = new Set()
  let dups = 0
  const ids = new Array(n)
  for (let i = 0; i < n; i++) ids[i] = fn(state)
  for (const id of ids) {
    const k = key(id)
    if (seen.has(k)) dups++
    else seen.add(k)
  }
  return dups
}

// flake-idgen throws when a millisecond's 4096 IDs are used up; a caller must wait for the next one.
function flakeNext(f) {
  for (;;) {
    try {
      return f.next()
    } catch (e) {
      if (!/Sequence exceeded/.test(e.message)) throw e
      const ms = Date.now()
      while (Date.now() === ms) {
        /* spin to the next millisecond */
      }
    }
  }
}

const TW_EPOCH = 1288834974657n
// snowmint's own single-ID rows use a high-capacity layout (2^19 IDs per 1 ms tick, like the Rust bench's):
// a loop here mints ~30 000 IDs a ms, seven times the twitter layout's 4096, so on twitter most IDs borrow
// ticks ahead of the clock, each with its own compare-and-swap (a window holds positions of the clock's
// own tick only, SPEC §2): that measures the layout's capacity, which no process can keep up, not the
// binding. The twitter-layout row is kept beside it.
const CAPACITY = new Layout({
  timestampBits: 39,
  nodeBits: 5,
  sequenceBits: 19,
  order: 'timestamp_node_sequence',
  tickNs: 1_000_000n,
  epochMs: 1_700_000_000_000n,
})
// Node-ID leases in an embedded store (a temporary directory), opened before timing (one per round, as
// the fixed-node rows get a fresh generator per round).
const { mkdtempSync, rmSync } = await import('node:fs')
const { tmpdir } = await import('node:os')
const leaseDir = mkdtempSync(join(tmpdir(), 'snowmint-bench-lease-'))
const leased = []
for (let i = 0; i < ROUNDS + 3; i++)
  leased.push(await Generator.open({ nodeId: `file://${leaseDir}`, layout: CAPACITY }))
const LEASE_ROW = 'snowmint nextId() under a lease'
const rows = [
  {
    name: 'snowmint nextId()',
    make: () => new Generator({ nodeId: 7, layout: CAPACITY }),
    fn: (g) => g.nextId(),
    key: (x) => x,
  },
  { name: LEASE_ROW, make: () => leased.pop(), fn: (g) => g.nextId(), key: (x) => x },
  {
    name: 'snowmint nextId(), twitter layout (borrows ticks)',
    make: () => new Generator({ nodeId: 7 }),
    fn: (g) => g.nextId(),
    key: (x) => x,
  },
  {
    name: 'snowmint nextIdString()',
    make: () => new Generator({ nodeId: 7 }),
    fn: (g) => g.nextIdString(),
    key: (x) => x,
  },
  {
    name: 'snowmint nextIds(4096) per ID',
    make: () => new Generator({ nodeId: 7 }),
    fn: (g) => g.nextIds(4096),
    perCall: 4096,
    calls: 100,
    key: null,
  },
  {
    name: 'snowmint nextId(), clock: Date.now',
    make: () => new Generator({ nodeId: 7, clock: Date.now }),
    fn: (g) => g.nextId(),
    key: (x) => x,
  },
  {
    name: '@sapphire/snowflake generate()',
    make: () => {
      const s = new Snowflake(TW_EPOCH)
      s.workerId = 7n
      return s
    },
    fn: (s) => s.generate(),
    key: (x) => x,
    peer: true,
  },
  {
    name: 'flake-idgen next()',
    make: () => new FlakeId({ id: 7, epoch: Number(TW_EPOCH) }),
    fn: flakeNext,
    key: (b) => b.toString('hex'),
    peer: true,
  },
  { name: 'crypto.randomUUID()', make: () => null, fn: () => randomUUID(), key: (x) => x, peer: true },
  { name: 'uuid v7()', make: () => null, fn: () => uuidv7(), key: (x) => x, peer: true },
]

measureAll(rows)
for (const r of rows) {
  if (r.key) r.dups = duplicates(r.make, r.fn, r.key)
  else {
    // Batches: 200k IDs in batches of 4096, checked as one sequence.
    const g = r.make()
    const seen = new Set()
    let dups = 0
    for (let n = 0; n < 200_000; n += 4096)
      for (const id of g.nextIds(4096)) seen.has(id) ? dups++ : seen.add(id)
    r.dups = dups
  }
}

const base = rows[0].ns
const pad = (s, n) => String(s).padEnd(n)
const lpad = (s, n) => String(s).padStart(n)
console.log(
  `node ${process.version}, ${ROUNDS} interleaved rounds of 200k calls (median; batches: 100 calls of 4096), fresh generator per round; dups over 200k IDs`,
)
console.log(
  `${pad('implementation', 36)} ${lpad('ns/ID', 8)} ${lpad('M IDs/s', 8)} ${lpad('vs snowmint nextId', 19)} ${lpad('dups/200k', 10)}`,
)
console.log('-'.repeat(85))
for (const r of rows) {
  const ratio = r.ns / base
  const rel =
    r === rows[0]
      ? '1.00× (base)'
      : ratio >= 1
        ? `${ratio.toFixed(2)}× slower`
        : `${(1 / ratio).toFixed(2)}× faster`
  console.log(
    `${pad(r.name, 36)} ${lpad(r.ns.toFixed(1), 8)} ${lpad((1000 / r.ns).toFixed(2), 8)} ${lpad(rel, 19)} ${lpad(r.dups, 10)}`,
  )
}
console.log('-'.repeat(85))
const byName = Object.fromEntries(rows.map((r) => [r.name, r]))
for (const r of rows.filter((x) => x.peer)) {
  console.log(`snowmint nextId() is ${(r.ns / base).toFixed(2)}× as fast as ${r.name}`)
}
const leaseRatio = byName[LEASE_ROW].ns / base
console.log(
  `nextId() under a lease (file://) / with a plain node ID: ${leaseRatio.toFixed(3)}× (target ≤ 1.05×: ${leaseRatio <= 1.05 ? 'met' : 'NOT met'})`,
)
const batch = byName['snowmint nextIds(4096) per ID']
console.log(
  `targets: nextId() ${base.toFixed(1)} ns (target ≤ 60 ns: ${base <= 60 ? 'met' : 'NOT met'}); ` +
    `vs @sapphire/snowflake ${(byName['@sapphire/snowflake generate()'].ns / base).toFixed(2)}× (target ≥ 3×: ${byName['@sapphire/snowflake generate()'].ns / base >= 3 ? 'met' : 'NOT met'}); ` +
    `nextIds(4096) ${batch.ns.toFixed(2)} ns/ID (target ≤ 2 ns: ${batch.ns <= 2 ? 'met' : 'NOT met'}); snowmint duplicates: ${rows[0].dups + batch.dups}`,
)
// The machine-readable summary for scripts/bench-all.sh: the medians of the table above (the first
// snowmint single and snowmint batch rows are the headline figures; this bench has no floor).
if (process.env.SNOWMINT_BENCH_JSON) {
  const { writeFileSync } = await import('node:fs')
  const out = rows.map((r) => ({
    name: r.name,
    kind: r.peer ? 'peer' : 'snowmint',
    what: r.perCall ? 'batch' : 'single',
    ns_per_id: r.ns,
  }))
  writeFileSync(
    process.env.SNOWMINT_BENCH_JSON,
    JSON.stringify({ runtime: 'node', rows: out }, null, 1) + '\n',
  )
}
for (const g of leased) await g.close()
rmSync(leaseDir, { recursive: true, force: true })
void sink
