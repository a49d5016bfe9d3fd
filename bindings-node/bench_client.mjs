// Client#tryNextId() and `await client.nextId()` from a prefetched batch (the ID service, SPEC §6a), side
// by side in one run with Generator#nextId, one performance.now() (the monotonic clock reading the hot
// path makes, its floor) and an empty call; ns per call, best and median of rounds.
// Each round takes a fresh client whose first call fetched 10 000 IDs and times 4 000 calls: the batch
// never falls below its refill threshold (half), so no round reaches the network. The service is the
// protocol stand-in tests/service/fake_service.py unless SNOWMINT_SERVICE_URL names one. Writes its rows
// to $SNOWMINT_BENCH_CLIENT_JSON when set (merged into the runtime's summary, group "client").
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'

const pkg = process.argv[2] ?? 'snowmint'
const { Client, Generator } = await import(pkg)
const label = pkg === 'snowmint' ? 'Node' : 'snowmint-wasm, in Node'
const CALLS = 4000
const ROUNDS = 50

let proc = null
let url = process.env.SNOWMINT_SERVICE_URL
if (!url) {
  const fake = fileURLToPath(new URL('../tests/service/fake_service.py', import.meta.url))
  proc = spawn(process.env.PYTHON ?? 'python3', [fake], { stdio: ['ignore', 'pipe', 'inherit'] })
  url = await new Promise((resolve, reject) => {
    let buf = ''
    proc.stdout.on('data', (d) => {
      const m = (buf += d).match(/^listening (\S+)\n/)
      if (m) resolve(m[1])
    })
    proc.on('exit', (code) => reject(new Error(`fake_service.py exited with ${code}`)))
  })
}

const ns = (t) => Number(process.hrtime.bigint() - t) / CALLS
function timed(f) {
  const t = process.hrtime.bigint()
  for (let i = 0; i < CALLS; i++) f()
  return ns(t)
}
async function timedAsync(c) {
  const t = process.hrtime.bigint()
  for (let i = 0; i < CALLS; i++) await c.nextId()
  return ns(t)
}
const rows = { sync: [], async: [], gen: [], clock: [], noop: [] }
try {
  const gen = new Generator({ nodeId: 1 })
  let sink = 0n
  for (let r = 0; r < ROUNDS; r++) {
    for (const [key, run] of [
      [
        'sync',
        (c) =>
          timed(() => {
            sink ^= c.tryNextId()
          }),
      ],
      ['async', timedAsync],
    ]) {
      const c = new Client({ url, prefetch: 10000 })
      await c.nextId()
      rows[key].push(await run(c))
      if (c.stats().requests !== 1) throw new Error('a round reached the network')
      c.close()
    }
    rows.gen.push(
      timed(() => {
        sink ^= gen.nextId()
      }),
    )
    let t = 0
    rows.clock.push(
      timed(() => {
        t += performance.now()
      }),
    )
    if (t < 0) console.log('')
    rows.noop.push(timed(() => {}))
  }
  if (sink === 1n) console.log('')
} finally {
  proc?.kill('SIGKILL')
}
const best = (a) => Math.min(...a)
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
const f = (k) => `${best(rows[k]).toFixed(1).padStart(7)} / ${median(rows[k]).toFixed(1).padStart(7)}`
console.log(`service client (${label}), ns per call, best / median of ${ROUNDS} rounds x ${CALLS}`)
const rest = (best(rows.sync) - best(rows.clock)).toFixed(1)
console.log(
  `  Client#tryNextId (prefetched)        ${f('sync')}   (target <= 60; ${rest} past its clock reading)`,
)
console.log(`  await Client#nextId (prefetched)     ${f('async')}`)
console.log(
  `  Generator#nextId                     ${f('gen')}   (ratio tryNextId/generator ${(best(rows.sync) / best(rows.gen)).toFixed(2)}x)`,
)
console.log(`  performance.now() (the floor)        ${f('clock')}`)
console.log(`  empty call                           ${f('noop')}`)
const out = process.env.SNOWMINT_BENCH_CLIENT_JSON
if (out) {
  const r = (name, kind, what, k) => ({
    name,
    kind,
    what,
    ns_per_id: Math.round(best(rows[k]) * 10) / 10,
    group: 'client',
  })
  fs.writeFileSync(
    out,
    JSON.stringify([
      r('Client#tryNextId() from a prefetched batch', 'snowmint', 'single', 'sync'),
      r('await Client#nextId() from a prefetched batch', 'snowmint', 'single', 'async'),
      r('Generator#nextId() (local minting, same run)', 'peer', 'single', 'gen'),
      r('performance.now() (the floor: the clock reading of tryNextId)', 'floor', 'clock', 'clock'),
    ]),
  )
}
