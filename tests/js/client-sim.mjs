// A seeded fault simulation of the JS ID-service clients — `Client` (bindings-wasm/js/client.js) and
// `OfflineGenerator` (bindings-wasm/js/offline.js), the package's real ones — against
// tests/service/fake_service.py's correct service behind its seeded fault layer (tests/service/
// client_sim.py: answers lost after the request was applied, dropped connections, duplicated, stale and
// late answers, a lagging instance answering backward; grants with start above limit, renewals answered
// with another token). bindings-python/tests/test_client_sim.py runs the same layer over the Python
// client: one seed is one fault schedule (per client and request) for both.
//
// Several clients per seed, each call chosen by the seed; after every call: no ID handed out twice by any
// client, IDs increasing per client, every refusal a SnowmintError with the documented code and a
// message, every lease a generator holds one the service granted it (start <= limit within the grant),
// no renewal with a token the service did not issue to that generator. Then the faults stop and every
// client must hand out IDs again. A failure names its seed; SNOWMINT_SIM_SEED=S replays it alone.
//
// Sensitivity (`sensitivity: true`): the same simulation over copies of client.js and offline.js with one
// check each put back to its behaviour before the fix (a batch only checked for increasing inside itself;
// a lease's start not compared with its limit; a renewal's token not compared) must fail within
// MUTANT_SEEDS seeds; the seeds each took are printed.
import fs from 'node:fs'
import { startService } from './client.mjs'
import { offlineGeneratorOf } from './offline.mjs'

const SEEDS = process.env.SNOWMINT_SIM_SEED ? [Number(process.env.SNOWMINT_SIM_SEED)] : [1, 2, 3, 4, 5, 6]
const MUTANT_SEEDS = 16
const CLIENTS = 3
const STEPS = 45
const RATE = 0.3
const TIMEOUT_MS = 250
const SOURCES = new URL('../../bindings-wasm/js/', import.meta.url)

/** mulberry32: a small seeded generator of floats in [0, 1). */
function random(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1))
  return next
}

class Broken extends Error {}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** The invariants over the IDs of one seed's clients, and the check of a refusal. */
function ledger(seed, SnowmintError) {
  const owner = new Map()
  const last = []
  const fail = (why) => {
    throw new Broken(`seed ${seed}: ${why}`)
  }
  return {
    fail,
    take(i, ids, what) {
      for (const x of ids) {
        if (typeof x !== 'bigint') fail(`client ${i} ${what} handed out ${x}, not a bigint`)
        if (last[i] !== undefined && x <= last[i])
          fail(`client ${i} ${what} handed out ${x} after ${last[i]} (not increasing)`)
        if (owner.has(x)) fail(`${x} handed out twice (client ${owner.get(x)}, then client ${i})`)
        owner.set(x, i)
        last[i] = x
      }
    },
    refused(i, e, what, codes) {
      if (!(e instanceof SnowmintError) || !codes.includes(e.code))
        fail(`client ${i} ${what} refused with ${e?.code ?? e}, not ${codes.join(' or ')}: ${e?.message}`)
      if (typeof e.message !== 'string' || e.message === '')
        fail(`client ${i} ${what} refused without a message`)
    },
  }
}

/** One seed of `Client`s; throws Broken (naming the seed) at the first broken invariant. */
async function simulateClients(Client, SnowmintError, s, seed) {
  const rng = random(seed)
  await s.control(`/_test/sim/start?seed=${seed}&rate=${RATE}&hang_ms=${TIMEOUT_MS + 100}`)
  const clients = []
  for (let i = 0; i < CLIENTS; i++)
    clients.push(
      new Client({ url: `${s.url}/sim/c${i}`, prefetch: rng.int(2, 6), retries: 2, timeoutMs: TIMEOUT_MS }),
    )
  const l = ledger(seed, SnowmintError)
  const call = async (i, op, what) => {
    let ids
    try {
      ids = await op()
    } catch (e) {
      if (e instanceof Broken) throw e
      l.refused(i, e, what, ['SERVICE_UNAVAILABLE'])
      return false
    }
    l.take(i, ids, what)
    return true
  }
  try {
    for (let step = 0; step < STEPS; step++) {
      const i = rng.int(0, CLIENTS - 1)
      const c = clients[i]
      const r = rng()
      if (r < 0.5) await call(i, async () => [await c.nextId()], 'nextId()')
      else if (r < 0.7) {
        const n = rng.int(1, 12)
        await call(i, () => c.nextIds(n), `nextIds(${n})`)
      } else if (r < 0.85) {
        // Callers at once: they share the fetch in flight; the IDs of each call in order, all unique.
        const n = rng.int(2, 4)
        const got = await Promise.allSettled(Array.from({ length: n }, () => c.nextId()))
        const ids = []
        for (const g of got)
          if (g.status === 'fulfilled') ids.push(g.value)
          else l.refused(i, g.reason, `${n} nextId() at once`, ['SERVICE_UNAVAILABLE'])
        l.take(i, ids, `${n} nextId() at once`)
      } else await call(i, () => [c.tryNextId()].filter((x) => x !== undefined), 'tryNextId()')
    }
    await s.control('/_test/sim/faults?rate=0')
    for (let i = 0; i < CLIENTS; i++) {
      // Recovered: at most one refusal (a fetch begun under the faults), then every call answers,
      // through at least two fetches.
      let refused = 0
      for (let k = 0; k < 2 * clients[i].prefetch + 2; k++)
        if (!(await call(i, async () => [await clients[i].nextId()], 'nextId() after the faults stopped')))
          if (++refused > 1) l.fail(`client ${i} does not recover once the faults stop`)
    }
  } finally {
    for (const c of clients) c.close()
  }
  return await s.control('/_test/sim/log')
}

/** One seed of `OfflineGenerator`s (`run` keeps their stored leases apart from other runs'). */
async function simulateGenerators(OfflineGenerator, SnowmintError, s, seed, run) {
  const rng = random(seed ^ 0x5eed)
  await s.control(`/_test/sim/start?seed=${seed}&rate=${RATE}`)
  const gens = new Array(CLIENTS).fill(null)
  const l = ledger(seed, SnowmintError)
  // The lease each generator holds must be one the service granted it: start <= limit, inside the grant.
  const checkLeases = async () => {
    const log = await s.control('/_test/sim/log')
    if (log.violations.length) l.fail(log.violations.join('; '))
    gens.forEach((g, i) => {
      if (!g) return
      const { nodeId, start, limit } = g.lease
      const grant = (log.grants[`o${i}`] ?? []).find((x) => x.node_id === nodeId)
      if (!grant) l.fail(`generator ${i} holds a lease of node ${nodeId}, which the service did not grant it`)
      if (!(BigInt(grant.start) <= start && start <= limit && limit <= BigInt(grant.limit)))
        l.fail(
          `generator ${i} holds start ${start}, limit ${limit}; the service granted ${grant.start}..${grant.limit}`,
        )
    })
    return log
  }
  const act = async (i, what, op, codes, mints) => {
    let out
    try {
      out = await op()
    } catch (e) {
      if (e instanceof Broken) throw e
      l.refused(i, e, what, codes)
      if (e.code === 'TOO_FAR_AHEAD') await sleep(e.retryAfterMs ?? 5)
      await checkLeases()
      return false
    }
    if (mints) l.take(i, out, what)
    await checkLeases()
    return true
  }
  const open = (i) => async () => {
    gens[i] = await OfflineGenerator.open({ url: `${s.url}/sim/o${i}`, name: `sim-${run}-${seed}-${i}` })
  }
  const MINT = ['TOO_FAR_AHEAD', 'LEASE_LOST']
  try {
    for (let step = 0; step < STEPS; step++) {
      const i = rng.int(0, CLIENTS - 1)
      const g = gens[i]
      const r = rng()
      if (!g) await act(i, 'open()', open(i), ['SERVICE_UNAVAILABLE'])
      else if (r < 0.5) await act(i, 'nextId()', () => [g.nextId()], MINT, true)
      else if (r < 0.7) {
        const n = rng.int(1, 12)
        await act(i, `nextIds(${n})`, () => [...g.nextIds(n)], MINT, true)
      } else await act(i, 'renew()', () => g.renew(), ['SERVICE_UNAVAILABLE'])
    }
    await s.control('/_test/sim/faults?rate=0')
    for (let i = 0; i < CLIENTS; i++) {
      if (!gens[i] && !(await act(i, 'open() after the faults stopped', open(i), ['SERVICE_UNAVAILABLE'])))
        l.fail(`generator ${i} cannot open once the faults stop`)
      if (!(await act(i, 'renew() after the faults stopped', () => gens[i].renew(), ['SERVICE_UNAVAILABLE'])))
        l.fail(`generator ${i} cannot renew once the faults stop`)
      let ok = false
      for (let k = 0; k < 5 && !ok; k++)
        ok = await act(
          i,
          'nextId() after the faults stopped',
          () => [gens[i].nextId()],
          ['TOO_FAR_AHEAD'],
          true,
        )
      if (!ok) l.fail(`generator ${i} does not mint once the faults stop`)
    }
    return await checkLeases()
  } finally {
    for (const g of gens) await g?.close()
  }
}

/** A data: module of the file `name` of bindings-wasm/js/ with `from` replaced by `to` (exactly once). */
function variant(name, replacements) {
  let text = fs.readFileSync(new URL(name, SOURCES), 'utf8')
  for (const [from, to] of replacements) {
    if (text.split(from).length !== 2)
      throw new Error(`${name}: expected ${JSON.stringify(from)} exactly once`)
    text = text.replace(from, to)
  }
  return `data:text/javascript,${encodeURIComponent(text)}`
}

const SURFACE_IMPORT = [
  "import { SnowmintError } from './surface.js';",
  'const { SnowmintError } = globalThis.__simSurface;',
]

export function clientSimTests(api, { test, assert, flavour, sensitivity = false }) {
  const t = (name, fn) => test(`client simulation (${flavour}): ${name}`, fn)
  const { SnowmintError } = api

  /** Runs `simulate(seed)` over `seeds`; the log of every seed. */
  async function seeds(list, simulate) {
    const logs = []
    for (const seed of list) logs.push(await simulate(seed))
    return logs
  }
  const sum = (logs) => {
    const faults = {}
    for (const l of logs) for (const [k, n] of Object.entries(l.faults)) faults[k] = (faults[k] ?? 0) + n
    return { faults, regressions: logs.reduce((n, l) => n + l.regressions, 0) }
  }

  t('Client keeps its invariants under seeded faults', async () => {
    const s = await startService()
    try {
      const t0 = performance.now()
      const { faults, regressions } = sum(
        await seeds(SEEDS, (seed) => simulateClients(api.Client, SnowmintError, s, seed)),
      )
      console.log(
        `client simulation (${flavour}): Client, seeds ${SEEDS[0]}..${SEEDS.at(-1)}, faults ${JSON.stringify(faults)}, ` +
          `${regressions} repeated or backward batches delivered, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      )
      if (SEEDS.length > 1) {
        for (const k of ['lost', 'dropped', 'duplicate', 'stale', 'late', 'lagging'])
          assert.ok(faults[k] > 0, `fault ${k} never injected over seeds ${SEEDS}`)
        assert.ok(regressions > 0, `no repeated or backward batch delivered over seeds ${SEEDS}`)
      }
    } finally {
      s.kill()
    }
  })

  t('OfflineGenerator keeps its invariants under seeded faults', async () => {
    const OfflineGenerator = await offlineGeneratorOf(api)
    const s = await startService()
    try {
      const { faults } = sum(
        await seeds(SEEDS, (seed) => simulateGenerators(OfflineGenerator, SnowmintError, s, seed, flavour)),
      )
      console.log(`client simulation (${flavour}): OfflineGenerator, faults ${JSON.stringify(faults)}`)
      if (SEEDS.length > 1)
        for (const k of ['lease_dropped', 'lease_start_above_limit', 'lease_new_token'])
          assert.ok(faults[k] > 0, `fault ${k} never injected over seeds ${SEEDS}`)
    } finally {
      s.kill()
    }
  })

  if (!sensitivity) return

  /** The first seed of 1..MUTANT_SEEDS at which the simulation of `build([revert])` (a copy of the
   * source with the check put back as before its fix) breaks an invariant; the same seeds must pass
   * over `build([])` (the copy as it is), so what fails is the revert, not the copy. */
  async function sensitive(what, revert, build, simulate) {
    const mutant = await build([revert])
    for (let seed = 1; seed <= MUTANT_SEEDS; seed++) {
      try {
        await simulate(mutant, seed, 'mutant')
      } catch (e) {
        if (!(e instanceof Broken)) throw e
        console.log(
          `client simulation (${flavour}): ${what} caught at seed ${seed} (${seed} seeds): ${e.message}`,
        )
        const copy = await build([])
        for (let s = 1; s <= seed; s++) await simulate(copy, s, 'copy')
        return
      }
    }
    assert.fail(`${what}: not caught within ${MUTANT_SEEDS} seeds`)
  }

  t('each check matters: with it put back as before the fix, the simulation fails', async () => {
    globalThis.__simSurface = { SnowmintError }
    const s = await startService()
    try {
      // client.js: a batch checked only for increasing inside itself (not above the IDs received before).
      await sensitive(
        'Client without the repeated/backward batch check',
        ['parseBatch(doc, count, this.#highest)', 'parseBatch(doc, count, -1n)'],
        async (reps) =>
          (await import(variant('client.js', [SURFACE_IMPORT, ...reps]))).makeClient(api.ERROR_CODES),
        (Client, seed) => simulateClients(Client, SnowmintError, s, seed),
      )
      // offline.js: a lease's start not compared with its limit; a renewal's token not compared.
      for (const [what, revert] of [
        [
          'OfflineGenerator without the start > limit check',
          ['if (BigInt(j.start) > BigInt(j.limit))', 'if (false)'],
        ],
        ['OfflineGenerator without the renewal token check', ['lease.token !== this.#lease.token ||', '']],
      ])
        await sensitive(
          what,
          revert,
          (reps) => offlineGeneratorOf(api, variant('offline.js', reps)),
          (Gen, seed, run) => simulateGenerators(Gen, SnowmintError, s, seed, `${run}-${revert[0]}`),
        )
    } finally {
      s.kill()
      delete globalThis.__simSurface
    }
  })
}
