// Opaque through the installed package: the shared JS tests (tests/js/opaque.mjs, also run on WASM).
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const { opaqueTests } = await import(new URL('opaque.mjs', pathToFileURL(runner)).href)
opaqueTests(api, { test, assert })

test('Opaque fast path: the napi-rs methods agree; the internal functions check their handle', async () => {
  const { createRequire } = await import('node:module')
  const { dirname, join } = await import('node:path')
  const req = createRequire(import.meta.url)
  const native = req(join(dirname(req.resolve('snowmint')), 'binding.js'))
  const o = new api.Opaque({ key: new Uint8Array(16).fill(3), layout: 'js53' })
  for (const id of [0n, 1n, 123456789n, (1n << 53n) - 1n]) {
    assert.equal(o.encode(id), native.Opaque.prototype.encode.call(o, id))
    assert.equal(o.decode(id), native.Opaque.prototype.decode.call(o, id))
  }
  for (const bad of [{}, null, 1n, o]) {
    assert.throws(() => native.__opaqueEncode(bad, 1n), (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT')
  }
  assert.throws(() => native.__opaqueHandle({}), (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT')
  assert.throws(() => native.__opaqueHandle(new api.Layout({ timestampBits: 41, nodeBits: 10, sequenceBits: 12, order: 'timestamp_node_sequence', tickNs: 1000000, epochMs: 0 })), TypeError)
})
