// OfflineGenerator's checks of the service's lease answers (bindings-wasm/js/offline.js, the one source of
// the browser entries), run in Node on a package's Generator against tests/service/fake_service.py, the
// protocol stand-in, misbehaving on request. The browser APIs the generator needs are stood in for here:
// Web Locks (every lock free), IndexedDB (one in-memory object store) and the `online` event target; the
// real-browser run is bindings-wasm/tests/browser/offline.test.mjs.
import { startService } from './client.mjs'

const OFFLINE = new URL('../../bindings-wasm/js/offline.js', import.meta.url).href

/** The browser APIs offline.js uses, in memory (only where the runtime has none). */
function standIns() {
  if (globalThis.navigator?.locks && globalThis.indexedDB) return
  const rows = new Map()
  const request = (result) => {
    const r = { result }
    queueMicrotask(() => r.onsuccess?.())
    return r
  }
  const db = {
    close() {},
    transaction() {
      const t = {}
      t.objectStore = () => ({
        get: (k) => request(rows.get(k)),
        getAll: () => request([...rows.values()].map((v) => structuredClone(v))),
        put: (v, k) => request(rows.set(k, structuredClone(v)) && k),
      })
      setTimeout(() => t.oncomplete?.(), 0)
      return t
    },
  }
  globalThis.indexedDB = { open: () => request(db) }
  const nav = { locks: { request: async (_name, _opts, cb) => cb({}) }, onLine: true }
  Object.defineProperty(globalThis, 'navigator', { value: nav, configurable: true, writable: true })
  globalThis.addEventListener ??= () => {}
  globalThis.removeEventListener ??= () => {}
}

/** The OfflineGenerator class of offline.js (or of `moduleUrl`, a variant of it) on the package `api`'s
 * Generator, with the browser APIs stood in for where the runtime has none. */
export async function offlineGeneratorOf(api, moduleUrl = OFFLINE) {
  standIns()
  const { makeOfflineGenerator } = await import(moduleUrl)
  return makeOfflineGenerator({ Generator: api.Generator, SnowmintError: api.SnowmintError })
}

/** Mints `count` IDs from `g` into the set `seen`, waiting out TOO_FAR_AHEAD while the mark is saved. */
async function mintInto(g, count, seen) {
  for (let i = 0; i < count;) {
    try {
      const ids = g.nextIds(Math.min(1000, count - i))
      for (const id of ids) seen.add(id)
      i += ids.length
    } catch (e) {
      if (e.code !== 'TOO_FAR_AHEAD') throw e
      await g.flush()
    }
  }
}

export async function offlineTests(api, { test, assert, flavour }) {
  const OfflineGenerator = await offlineGeneratorOf(api)
  const t = (name, fn) => test(`OfflineGenerator (${flavour}): ${name}`, fn)
  let n = 0

  t('a lease whose start is above its limit is refused', async () => {
    const s = await startService()
    try {
      await s.control('/_test/misbehave?mode=lease_start_above_limit')
      let caught
      try {
        await OfflineGenerator.open({ url: s.url, name: `above-${n++}` })
      } catch (e) {
        caught = e
      }
      assert.equal(caught?.code, 'SERVICE_UNAVAILABLE', String(caught))
      assert.match(caught.message, /start \d+ is above its limit \d+/)
    } finally {
      s.kill()
    }
  })

  t('a lease that starts further ahead of the clock than the default maxAheadMs mints', async () => {
    // An embedded store's `?max_ahead=60s`: a client lease starts up to 60 s past the clock (SPEC §3.2).
    const s = await startService()
    let g
    try {
      await s.control('/_test/misbehave?mode=lease_ahead')
      g = await OfflineGenerator.open({ url: s.url, name: `ahead-${n++}` })
      // At once: not after the clock came within the default 15 s of the start (45 s of TOO_FAR_AHEAD).
      const seen = new Set()
      const t0 = Date.now()
      while (seen.size < 5000 && Date.now() - t0 < 5000) {
        try {
          for (const id of g.nextIds(1000)) seen.add(id)
        } catch (e) {
          if (e.code !== 'TOO_FAR_AHEAD') throw e
          await g.flush()
        }
      }
      assert.equal(seen.size, 5000, `${seen.size} IDs in 5 s`)
      const start = BigInt(g.lease.start)
      const first = [...seen].reduce((a, b) => (a < b ? a : b))
      // twitter: the timestamp above 22 bits, the position's tick above 12.
      assert.ok(first >> 22n >= start >> 12n, `ID ${first} below the lease's start ${start}`)
    } finally {
      g?.close()
      s.kill()
    }
  })

  t('a lease answer larger than 64 KiB is refused, not read', async () => {
    const s = await startService()
    try {
      await s.control(`/_test/misbehave?mode=lease_huge&bytes=${8 << 20}`)
      let caught
      try {
        // Accepted (it must not be): closed, so that its timers do not keep the test alive.
        ;(await OfflineGenerator.open({ url: s.url, name: `huge-${n++}` })).close()
      } catch (e) {
        caught = e
      }
      assert.equal(caught?.code, 'SERVICE_UNAVAILABLE', String(caught))
      assert.match(caught.message, /more than 65536 bytes/)
      const sent = (await s.stats()).bytes_sent
      assert.ok(sent < 8 << 20, `the service wrote ${sent} bytes: the answer was read to its end`)
    } finally {
      s.kill()
    }
  })

  t('a redirect is never followed', async () => {
    const s = await startService()
    const other = await startService()
    try {
      await s.control(`/_test/misbehave?mode=redirect&to=${encodeURIComponent(other.url)}`)
      let caught
      try {
        // Accepted (it must not be): closed, so that its timers do not keep the test alive.
        ;(await OfflineGenerator.open({ url: s.url, name: `redirect-${n++}` })).close()
      } catch (e) {
        caught = e
      }
      assert.equal(caught?.code, 'INVALID_ARGUMENT', String(caught))
      assert.match(caught.message, /redirect/)
    } finally {
      s.kill()
      other.kill()
    }
  })

  t('the same node ID handed back after LEASE_LOST: never below what was minted on it', async () => {
    const s = await startService()
    let g
    try {
      // A frozen clock inside the fake service's reservations (positions 2^30 .. 2^30 + 2^28).
      const clock = () => 1288834974657 + 262200
      g = await OfflineGenerator.open({ url: s.url, name: `floor-${n++}`, clock })
      const node = g.nodeId
      const seen = new Set()
      const mint = (count) => mintInto(g, count, seen)
      await mint(20000)
      // The service loses the lease and hands the same node ID back, from the same start.
      await s.control('/_test/misbehave?mode=same_node_lost')
      await g.renew()
      assert.equal(g.nodeId, node, 'the fake hands back the same node ID')
      await mint(20000)
      assert.equal(seen.size, 40000, `${40000 - seen.size} IDs repeated`)
    } finally {
      g?.close()
      s.kill()
    }
  })

  t(
    'the same node ID handed to another generator of this URL later: never below what was minted on it',
    async () => {
      const s = await startService()
      const clock = () => 1288834974657 + 262200
      let a
      let b
      try {
        await s.control('/_test/misbehave?mode=same_node_lost')
        const seen = new Set()
        const mint = (g, count) => mintInto(g, count, seen)
        a = await OfflineGenerator.open({ url: s.url, name: `first-${n++}`, clock })
        await mint(a, 20000)
        const node = a.nodeId
        await a.close()
        b = await OfflineGenerator.open({ url: s.url, name: `second-${n++}`, clock })
        assert.equal(b.nodeId, node, 'the fake hands the same node ID to both')
        await mint(b, 20000)
        assert.equal(seen.size, 40000, `${40000 - seen.size} IDs repeated`)
      } finally {
        b?.close()
        s.kill()
      }
    },
  )

  t('a renewal that changes the token is refused; the lease stays the one taken', async () => {
    const s = await startService()
    let g
    try {
      g = await OfflineGenerator.open({ url: s.url, name: `token-${n++}` })
      const before = g.lease
      await s.control('/_test/misbehave?mode=renew_new_token')
      let caught
      try {
        await g.renew()
      } catch (e) {
        caught = e
      }
      assert.equal(caught?.code, 'SERVICE_UNAVAILABLE', String(caught))
      assert.match(caught.message, /another token/)
      assert.deepEqual(g.lease, before)
    } finally {
      g?.close()
      s.kill()
    }
  })
}
