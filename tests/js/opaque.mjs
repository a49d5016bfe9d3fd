// Shared JavaScript tests of `Opaque` for the `snowmint` (Node, napi-rs) and `snowmint-wasm` packages,
// which have the same API (the vectors are in conformance.mjs; these check the rest).
//
//   import { opaqueTests } from '.../tests/js/opaque.mjs'
//   opaqueTests(api, { test, assert })

import { throwsCode } from './throws-code.cjs'

export function opaqueTests(api, { test, assert }) {
  const key = Uint8Array.from({ length: 16 }, (_, i) => i)

  test('Opaque: widths of the layouts, round trips, bigint out', () => {
    for (const [layout, bits] of [
      ['twitter', 63],
      ['js53', 53],
      ['discord', 64],
      [undefined, 63],
    ]) {
      const o = new api.Opaque(layout === undefined ? { key } : { key, layout })
      assert.equal(o.bits, bits)
      const top = (1n << BigInt(bits)) - 1n
      for (const id of [0n, 1n, 123456789n, top, top / 3n]) {
        const t = o.encode(id)
        assert.equal(typeof t, 'bigint')
        assert.ok(t >= 0n && t <= top)
        assert.equal(o.decode(t), id)
      }
      assert.equal(o.encode(42), o.encode(42n), 'a safe-integer Number is the same ID')
    }
    assert.equal(new api.Opaque({ key, layout: api.Layout.preset('js53') }).bits, 53)
    assert.equal(new api.Opaque({ key, layout: 'js53' }).layout.name, 'js53')
  })

  test('Opaque: string forms and batches', () => {
    const o = new api.Opaque({ key, layout: 'twitter' })
    const id = 1541815603606036480n
    for (const enc of ['dec', 'hex', 'base32', 'base58']) {
      const s = o.encodeString(id, enc)
      assert.equal(s, api.encode(o.encode(id), enc))
      assert.equal(o.decodeString(s, enc), id)
      assert.equal(o.decodeString(s), id)
    }
    assert.equal(o.encodeString(id), o.encode(id).toString())
    assert.equal(o.encodeString(id, 'base58').length, 11)
    throwsCode(assert, () => o.decodeString('0OIl', 'base58'), 'PARSE')
    const ids = BigUint64Array.from({ length: 100 }, (_, i) => id + BigInt(i))
    const tokens = o.encodeMany(ids)
    assert.ok(tokens instanceof BigUint64Array)
    assert.deepEqual(
      [...tokens],
      [...ids].map((x) => o.encode(x)),
    )
    assert.deepEqual([...o.decodeMany(tokens)], [...ids])
    assert.equal(o.encodeMany(new BigUint64Array(0)).length, 0)
    const bad = BigUint64Array.of(1n, 1n << 63n)
    throwsCode(assert, () => o.encodeMany(bad), 'INVALID_ID')
    assert.deepEqual([...bad], [1n, 1n << 63n], 'the input is not changed')
    throwsCode(assert, () => o.encodeMany([1n, 2n]), 'INVALID_ARGUMENT', TypeError)
  })

  test('Opaque: neighbours give unrelated tokens', () => {
    const o = new api.Opaque({ key: new TextEncoder().encode('sixteen byte key'), layout: 'twitter' })
    const start = 1541815603606036480n
    const tokens = o.encodeMany(BigUint64Array.from({ length: 4001 }, (_, i) => start + BigInt(i)))
    let flips = 0
    let up = 0
    for (let i = 1; i < tokens.length; i++) {
      flips += [...(tokens[i] ^ tokens[i - 1]).toString(2)].filter((b) => b === '1').length
      if (tokens[i] > tokens[i - 1]) up++
    }
    assert.ok(Math.abs(flips / 4000 - 31.5) < 0.5, `mean bit flips ${flips / 4000}`)
    assert.ok(Math.abs(up / 4000 - 0.5) < 0.05, `order agrees ${up / 4000}`)
  })

  test('Opaque: bad keys, widths, IDs and tokens have codes', () => {
    const e = throwsCode(assert, () => new api.Opaque({ key: key.subarray(0, 15) }), 'INVALID_ARGUMENT')
    assert.match(e.message, /16 bytes.*got 15/)
    throwsCode(assert, () => new api.Opaque({ key: new Uint8Array(32) }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => new api.Opaque({ key: '0123456789abcdef' }), 'INVALID_ARGUMENT', TypeError)
    throwsCode(assert, () => new api.Opaque({ key: new Uint16Array(8) }), 'INVALID_ARGUMENT', TypeError)
    throwsCode(assert, () => new api.Opaque({}), 'INVALID_ARGUMENT', TypeError)
    throwsCode(assert, () => new api.Opaque({ key, nope: 1 }), 'INVALID_ARGUMENT', TypeError)
    throwsCode(assert, () => new api.Opaque({ key, layout: 'nope' }), 'INVALID_LAYOUT')
    const narrow = new api.Layout({
      timestampBits: 20,
      nodeBits: 2,
      sequenceBits: 8,
      order: 'timestamp_node_sequence',
      tickNs: 1000000,
      epochMs: 0,
    })
    assert.match(
      throwsCode(assert, () => new api.Opaque({ key, layout: narrow }), 'INVALID_ARGUMENT').message,
      /32 to 64 bits/,
    )
    const o = new api.Opaque({ key, layout: 'js53' })
    // The core's message, in every runtime (the WASM module writes it without the core's Display).
    assert.equal(
      throwsCode(assert, () => o.encode(1n << 53n), 'INVALID_ID').message,
      "ID 9007199254740992 does not fit the layout's 53 bits",
    )
    for (const bad of [1n << 53n, 1n << 64n, -1n]) {
      throwsCode(assert, () => o.encode(bad), 'INVALID_ID', api.SnowmintError)
      throwsCode(assert, () => o.decode(bad), 'INVALID_ID', api.SnowmintError)
    }
    throwsCode(assert, () => o.encode(1.5), 'INVALID_ARGUMENT')
    throwsCode(assert, () => o.encode('12'), 'INVALID_ARGUMENT', TypeError)
  })
}
