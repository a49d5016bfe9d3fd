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
