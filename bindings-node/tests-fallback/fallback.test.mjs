// The native package's WebAssembly fallback (fallback.js), as a user on a platform without a native
// addon gets it: run by bindings-wasm/test.sh inside a fresh project where `snowmint` (the main tarball)
// and `snowmint-wasm` are installed and no platform package is (as on macOS or Windows), and again with
// the platform package installed and SNOWMINT_WASM=1. Checks that require and import serve the
// WebAssembly build behind the same API, that every conformance vector passes through it, and that what
// needs the operating system throws INVALID_ARGUMENT saying so, with no secret of a source repeated.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const vectorsDir = process.env.SNOWMINT_VECTORS
const runner = process.env.SNOWMINT_CONFORMANCE
if (!vectorsDir || !runner) throw new Error('set SNOWMINT_VECTORS and SNOWMINT_CONFORMANCE (test.sh does)')
const { runConformance } = await import(pathToFileURL(runner).href)

const require = createRequire(import.meta.url)

test('require and import serve the WebAssembly build', () => {
  const cjs = require('snowmint')
  assert.equal(cjs.backend, 'wasm')
  assert.equal(api.backend, 'wasm')
  assert.equal(cjs.Generator, api.Generator)
  // Loaded from snowmint-wasm in node_modules, not from a native addon.
  assert.ok(require.resolve('snowmint-wasm').includes('node_modules'))
  const loadedAddon = Object.keys(require.cache).some((p) => p.endsWith('.node'))
  assert.equal(loadedAddon, false, 'no .node addon may be loaded')
})

test('the same API: generators, layouts, decode, encodings, opaque', async () => {
  const g = new api.Generator({ nodeId: 7 })
  const a = g.nextId()
  const b = g.nextId()
  assert.equal(typeof a, 'bigint')
  assert.ok(b > a)
  assert.equal(g.nodeId, 7)
  assert.equal(api.decode(a).nodeId, 7)
  assert.equal(api.parse(api.encode(a, 'base58'), 'base58'), a)
  assert.equal(new api.Generator({ nodeId: ' 12 ' }).nodeId, 12)
  assert.equal(g.lease, null)
  assert.equal(g.stateFile, null)
  const opened = await api.Generator.open({ nodeId: 9, layout: 'discord' })
  assert.equal(opened.nodeId, 9)
  await opened.close()
  const ids = g.nextIds(1000)
  assert.equal(new Set(ids).size, 1000)
  assert.ok(api.PRESET_NAMES.includes('twitter'))
  assert.ok(api.ERROR_CODES.includes('INVALID_ARGUMENT'))
  assert.equal(typeof api.Client, 'function')
  assert.throws(() => new api.Generator({ nodeId: 1024 }), { code: 'NODE_ID_OUT_OF_RANGE' })
})

const secret = 'hunter2-fallback'
const needsNative = [
  [
    'a lease on etcd',
    () => new api.Generator({ nodeId: `etcd://root:${secret}@127.0.0.1:2379/fleet` }),
    'etcd://',
  ],
  [
    'a lease on PostgreSQL',
    () => new api.Generator({ nodeId: `postgres://u:${secret}@127.0.0.1/db` }),
    'postgres://',
  ],
  ['the env source', () => new api.Generator({ nodeId: 'env' }), 'node source env'],
  ['the k8s source', () => new api.Generator({ nodeId: 'k8s:3' }), 'node source k8s'],
  ['a state file', () => new api.Generator({ nodeId: 3, stateFile: '/dev/shm/x.snowmint' }), 'stateFile'],
  ['waiting for a node ID', () => new api.Generator({ nodeId: 3, waitForNodeMs: 10 }), 'waitForNodeMs'],
  ['flush', () => new api.Generator({ nodeId: 3 }).flush(), 'flush'],
  ['verifyStateFile', () => new api.Generator({ nodeId: 3 }).verifyStateFile(), 'verifyStateFile'],
  ['new Sequencer', () => new api.Sequencer(), 'Sequencer'],
]
for (const [what, call, names] of needsNative) {
  test(`${what} throws INVALID_ARGUMENT naming the native addon`, () => {
    assert.throws(call, (e) => {
      assert.ok(e instanceof api.SnowmintError, `${e}`)
      assert.equal(e.code, 'INVALID_ARGUMENT')
      assert.ok(e.message.includes(names), e.message)
      assert.match(e.message, /native addon, which did not load on [a-z0-9]+-[a-z0-9]+ \(/)
      assert.ok(!e.message.includes(secret), 'a secret in the message')
      return true
    })
  })
}

const rejects = [
  ['Generator.open with a lease', () => api.Generator.open({ nodeId: `etcd://u:${secret}@127.0.0.1:1/x` })],
  ['Sequencer.create', () => api.Sequencer.create('orders', { store: 'file:///tmp/x' })],
  ['Sequencer.open', () => api.Sequencer.open('orders', { store: 'file:///tmp/x' })],
  ['Sequencer.list', () => api.Sequencer.list({ store: 'file:///tmp/x' })],
  ['RangeSequence.open', () => api.RangeSequence.open({ name: 'r', dc: 'a', globalStore: 'file:///tmp/x' })],
  ['detach', () => new api.Generator({ nodeId: 3 }).detach()],
  ['attach', () => new api.Generator({ nodeId: 3 }).attach()],
]
for (const [what, call] of rejects) {
  test(`${what} rejects with INVALID_ARGUMENT`, async () => {
    await assert.rejects(call, (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENT')
      assert.ok(!e.message.includes(secret))
      return true
    })
  })
}

// Every case of tests/vectors/ (not recorded: the native package and snowmint-wasm record theirs).
await runConformance(api, { test, assert, vectorsDir })
