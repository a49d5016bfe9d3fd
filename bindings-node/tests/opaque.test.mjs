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
    assert.throws(
      () => native.__opaqueEncode(bad, 1n),
      (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT',
    )
  }
  assert.throws(
    () => native.__opaqueHandle({}),
    (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT',
  )
  assert.throws(
    () =>
      native.__opaqueHandle(
        new api.Layout({
          timestampBits: 41,
          nodeBits: 10,
          sequenceBits: 12,
          order: 'timestamp_node_sequence',
          tickNs: 1000000,
          epochMs: 0,
        }),
      ),
    TypeError,
  )
})

test('Opaque fast path shares the ID cell with nextId: interleaved and nested calls keep their own results', () => {
  const o = new api.Opaque({ key: new Uint8Array(16).fill(9), layout: 'twitter' })
  const expected = o.encode(42n)
  let now = 1750000000000
  const g = new api.Generator({
    nodeId: 1,
    clock: () => {
      o.encode(7n)
      return now++
    },
  })
  const id = g.nextId()
  assert.equal(api.decode(id).nodeId, 1, "the ID is the generator's, not the token written by the clock")
  assert.equal(o.encode(42n), expected)
  const plain = new api.Generator({ nodeId: 2 })
  for (let i = 0; i < 100; i++) {
    const t = o.encode(BigInt(i))
    const n = plain.nextId()
    assert.equal(o.decode(t), BigInt(i))
    assert.equal(api.decode(n).nodeId, 2)
  }
})
