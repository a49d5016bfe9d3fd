// One JavaScript test suite for both packages — `snowmint` (native, napi-rs) and `snowmint-wasm` — so
// that "the same API" is tested, not claimed: the same exports, members and getters (each compared
// with one list, with what only the native package has named), the same error class and code for the
// same bad input, the same JSON and console output, the same Number/bigint choices, and TypeScript
// declarations that agree (surface-types.ts) and reject misspelt preset names.
//
//   import { surfaceTests } from '.../tests/js/surface.mjs'
//   surfaceTests(api, { test, assert, flavour: 'native' | 'wasm', packageName, project, tsc })
//
// Run by bindings-node/tests/surface.test.mjs and bindings-wasm/tests/surface.test.mjs.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { inspect } from 'node:util'
import { fileURLToPath } from 'node:url'

import { throwsCode } from './throws-code.cjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const T0 = 1750000000000 // 2025-06-15T15:06:40Z

/** The shared surface. Each class: getter and method names every instance has, in both packages. */
const SHARED = {
  exports: {
    Client: 'function',
    Layout: 'function',
    Generator: 'function',
    Opaque: 'function',
    SnowmintError: 'function',
    decode: 'function',
    compose: 'function',
    minIdAt: 'function',
    encode: 'function',
    parse: 'function',
    ERROR_CODES: 'object',
    PRESET_NAMES: 'object',
  },
  Layout: {
    getters: [
      'name',
      'timestampBits',
      'nodeBits',
      'sequenceBits',
      'totalBits',
      'order',
      'tickNs',
      'epochMs',
      'nodeIdOffset',
      'nodeCount',
      'idsPerTick',
      'maxNodeId',
      'maxTick',
      'lifespanEndMs',
      'lifespanEndIso',
      'clockUnit',
    ],
    methods: ['toJSON', 'free'],
    statics: ['preset', 'snowcast', 'hazelcast'],
  },
  Generator: {
    getters: ['layout', 'nodeId', 'policy'],
    methods: [
      'nextId',
      'nextIdString',
      'nextIds',
      'nextIdNumber',
      'highWaterMark',
      'restore',
      'stats',
      'toJSON',
      'free',
    ],
    statics: [],
  },
  Opaque: {
    getters: ['bits', 'layout'],
    methods: ['encode', 'decode', 'encodeString', 'decodeString', 'encodeMany', 'decodeMany'],
    statics: [],
  },
}

/** What only the native package has (state files, node leases, sequencers, range sequences: SPEC §2, §3, §4;
 * `backend`: which build serves it, the addon or its WebAssembly fallback). */
const NATIVE_ONLY = {
  exports: ['Sequencer', 'RangeSequence', 'backend'],
  Layout: [],
  Generator: ['stateFile', 'flush', 'verifyStateFile', 'lease', 'state', 'detach', 'attach', 'close', 'open'],
  Opaque: [],
}

/** The type of each Layout figure: Numbers where every value fits exactly, bigints elsewhere. */
const LAYOUT_TYPES = {
  name: 'string',
  timestampBits: 'number',
  nodeBits: 'number',
  sequenceBits: 'number',
  totalBits: 'number',
  order: 'string',
  tickNs: 'bigint',
  epochMs: 'bigint',
  nodeIdOffset: 'bigint',
  nodeCount: 'number',
  idsPerTick: 'number',
  maxNodeId: 'bigint',
  maxTick: 'bigint',
  lifespanEndMs: 'bigint',
  lifespanEndIso: 'string',
  clockUnit: 'string',
}

const DECODED_TYPES = {
  id: 'bigint',
  timestampTicks: 'bigint',
  timestampMs: 'number',
  subMsNs: 'number',
  date: 'object',
  iso: 'string',
  nodeId: 'number',
  sequence: 'number',
}

/** Every public name on `obj`'s prototype chain (and the object itself), with its kind. */
function members(obj) {
  const out = new Map()
  for (let o = obj; o && o !== Object.prototype && o !== Function.prototype; o = Object.getPrototypeOf(o)) {
    for (const key of Object.getOwnPropertyNames(o)) {
      // Internal names (`__mintAt`, wasm-bindgen's `__wbg_ptr`), the constructor, class statics' basics.
      if (key.startsWith('__') || key === 'constructor' || out.has(key)) continue
      if (typeof obj === 'function' && ['length', 'name', 'prototype', 'arguments', 'caller'].includes(key))
        continue
      const d = Object.getOwnPropertyDescriptor(o, key)
      out.set(key, d.get ? 'getter' : typeof d.value === 'function' ? 'method' : 'value')
    }
  }
  return out
}

export function surfaceTests(api, { test, assert, flavour, packageName, project, tsc }) {
  const { Layout, Generator, Opaque, SnowmintError, decode, compose, minIdAt, encode, parse } = api
  const native = flavour === 'native'

  /** fn throws an error of exactly the class `cls` (TypeError or SnowmintError) with `code`. */
  function throwsAs(fn, cls, code, label) {
    let err
    try {
      fn()
    } catch (e) {
      err = e
    }
    assert.ok(err !== undefined, `${label}: expected ${cls.name} ${code}, nothing thrown`)
    assert.equal(
      Object.getPrototypeOf(err),
      cls.prototype,
      `${label}: expected a ${cls.name}, got ${err && err.constructor && err.constructor.name}: ${err && err.message}`,
    )
    assert.equal(err.code, code, `${label}: ${err.message}`)
    assert.ok(err.message.length > 0 && err.stack.length > 0, label)
    return err
  }

  test(`surface (${flavour}): the shared exports, and nothing else but the native-only ones`, () => {
    for (const [name, type] of Object.entries(SHARED.exports)) assert.equal(typeof api[name], type, name)
    const extra = Object.keys(api).filter((k) => k !== 'default' && !(k in SHARED.exports))
    assert.deepEqual(extra.sort(), native ? [...NATIVE_ONLY.exports].sort() : [])
    assert.ok(Array.isArray(api.ERROR_CODES) && Array.isArray(api.PRESET_NAMES))
    assert.ok(Object.isFrozen(api.ERROR_CODES) && Object.isFrozen(api.PRESET_NAMES))
    // Every language-neutral code (SPEC §7; the C API's own three are not thrown here), once each.
    for (const code of [
      'INVALID_LAYOUT',
      'NODE_ID_OUT_OF_RANGE',
      'CLOCK_MOVED_BACKWARDS',
      'CLOCK_BEFORE_EPOCH',
      'TOO_FAR_AHEAD',
      'LAYOUT_EXHAUSTED',
      'PARSE',
      'LEASE_LOST',
      'INVALID_CLOCK',
      'INVALID_ID',
      'INVALID_ARGUMENT',
      'FORKED',
      'NODE_IDS_EXHAUSTED',
      'SEQUENCER_CONFLICT',
      'SEQUENCER_DESTROYED',
      'STORE_UNAVAILABLE',
      'STATE_FILE_MISMATCH',
      'RANGE_EXHAUSTED',
      'SERVICE_UNAVAILABLE',
      'SEQUENCER_NOT_FOUND',
      'STORE_NOT_FOUND',
    ]) {
      assert.ok(api.ERROR_CODES.includes(code), code)
    }
    assert.equal(new Set(api.ERROR_CODES).size, api.ERROR_CODES.length)
  })

  test(`surface (${flavour}): Layout, Generator and Opaque have every shared getter and method, and no others`, () => {
    const key = new Uint8Array(16)
    const instances = {
      Layout: Layout.preset('twitter'),
      Generator: new Generator({ nodeId: 1, clock: () => T0 }),
      Opaque: new Opaque({ key }),
    }
    for (const [cls, obj] of Object.entries(instances)) {
      const got = members(obj)
      const want = SHARED[cls]
      for (const g of want.getters) assert.equal(got.get(g), 'getter', `${cls}.${g} should be a getter`)
      for (const m of want.methods) assert.equal(got.get(m), 'method', `${cls}.${m} should be a method`)
      const statics = members(api[cls])
      for (const s of want.statics)
        assert.equal(statics.get(s), 'method', `${cls}.${s} should be a static method`)
      const known = new Set([
        ...want.getters,
        ...want.methods,
        ...want.statics,
        ...(native ? NATIVE_ONLY[cls] : []),
      ])
      const unknown = [...got.keys(), ...statics.keys()].filter((k) => !known.has(k))
      assert.deepEqual(unknown, [], `${cls} has members the shared surface does not list`)
      for (const g of want.getters) obj[g] // every getter answers
    }
  })

  test(`surface (${flavour}): Layout figures are Numbers where they always fit, bigints elsewhere; IDs are bigints`, () => {
    for (const name of api.PRESET_NAMES.filter((n) => n !== 'snowcast')) {
      const l = Layout.preset(name)
      for (const [k, type] of Object.entries(LAYOUT_TYPES)) assert.equal(typeof l[k], type, `${name}.${k}`)
    }
    // At the widest node and sequence fields the counts are powers of two, exact as Numbers.
    const wide = new Layout({
      timestampBits: 1,
      nodeBits: 62,
      sequenceBits: 0,
      order: 'timestamp_node_sequence',
      tickNs: 1,
      epochMs: 0,
    })
    assert.equal(wide.nodeCount, 2 ** 62)
    assert.equal(BigInt(wide.nodeCount), 1n << 62n)
    assert.equal(wide.maxNodeId, (1n << 62n) - 1n)
    const deep = new Layout({
      timestampBits: 1,
      nodeBits: 0,
      sequenceBits: 63,
      order: 'timestamp_node_sequence',
      tickNs: 1,
      epochMs: 0,
      useSignBit: true,
    })
    assert.equal(BigInt(deep.idsPerTick), 1n << 63n)
    assert.equal(Layout.preset('decimal').nodeCount, 100)
    assert.equal(Layout.preset('decimal').idsPerTick, 1)
    assert.equal(Layout.hazelcast(5).nodeIdOffset, 5n)
    assert.equal(Layout.preset('twitter').nodeIdOffset, 0n)
    const g = new Generator({ nodeId: 3, clock: () => T0 })
    assert.equal(typeof g.nextId(), 'bigint')
    assert.equal(typeof g.nodeId, 'number')
    const d = decode(g.nextId())
    for (const [k, type] of Object.entries(DECODED_TYPES)) assert.equal(typeof d[k], type, `decode().${k}`)
    assert.deepEqual(Object.keys(d), Object.keys(DECODED_TYPES))
  })

  test(`surface (${flavour}): a field wider than 53 bits is a bigint, never a rounded Number`, () => {
    // The rule (snowmint_host::JsNumbers): Number when the layout's field fits 2^53 - 1, else bigint.
    const wide = new Layout({
      timestampBits: 3,
      nodeBits: 60,
      sequenceBits: 0,
      order: 'timestamp_node_sequence',
      tickNs: 1_000_000,
      epochMs: 0,
    })
    const top = 2n ** 60n - 1n
    const g = new Generator({ nodeId: top, layout: wide })
    assert.equal(g.nodeId, top)
    assert.deepEqual(JSON.parse(JSON.stringify(g)).nodeId, String(top))
    assert.equal(typeof new Generator({ nodeId: 5, layout: wide }).nodeId, 'bigint')
    const d = decode(compose({ timestampTicks: 1n, nodeId: top, sequence: 0 }, wide), wide)
    assert.equal(d.nodeId, top)
    assert.equal(d.sequence, 0) // a 0-bit field: a Number
    assert.equal(JSON.parse(JSON.stringify(d)).nodeId, String(top))
    const deep = new Layout({
      timestampBits: 1,
      nodeBits: 0,
      sequenceBits: 63,
      order: 'timestamp_node_sequence',
      tickNs: 1,
      epochMs: 0,
      useSignBit: true,
    })
    const seq = 2n ** 63n - 1n
    assert.equal(decode(compose({ timestampTicks: 0n, nodeId: 0, sequence: seq }, deep), deep).sequence, seq)
    // 53 bits is the widest field that stays a Number, at its largest value.
    const w53 = new Layout({
      timestampBits: 10,
      nodeBits: 53,
      sequenceBits: 0,
      order: 'timestamp_node_sequence',
      tickNs: 1_000_000,
      epochMs: 0,
    })
    assert.equal(
      new Generator({ nodeId: Number.MAX_SAFE_INTEGER, layout: w53 }).nodeId,
      Number.MAX_SAFE_INTEGER,
    )
    // A node ID in decimal is the same node in both packages.
    assert.equal(new Generator({ nodeId: '7' }).nodeId, 7)
  })

  test(`surface (${flavour}): policy getter, default 'fail' in JavaScript`, () => {
    assert.equal(new Generator({ nodeId: 1 }).policy, 'fail')
    for (const p of ['wait', 'fail', 'strict'])
      assert.equal(new Generator({ nodeId: 1, policy: p }).policy, p)
  })

  test(`surface (${flavour}): PRESET_NAMES are the names Layout.preset takes`, () => {
    assert.deepEqual(
      [...api.PRESET_NAMES],
      ['twitter', 'discord', 'instagram', 'sonyflake', 'hazelcast', 'snowcast', 'js53', 'decimal'],
    )
    for (const n of api.PRESET_NAMES) {
      if (n === 'snowcast') throwsAs(() => Layout.preset(n), SnowmintError, 'INVALID_LAYOUT', n)
      else assert.equal(Layout.preset(n).name, n)
    }
  })

  test(`surface (${flavour}): JSON.stringify of decode(), Layout and Generator (IDs as decimal strings)`, () => {
    const id = 1212161512043450368n
    const d = decode(id)
    const j = JSON.parse(JSON.stringify(d))
    assert.deepEqual(j, {
      id: '1212161512043450368',
      timestampTicks: String(d.timestampTicks),
      timestampMs: d.timestampMs,
      subMsNs: 0,
      date: d.iso,
      iso: d.iso,
      nodeId: d.nodeId,
      sequence: d.sequence,
    })
    assert.equal(BigInt(j.id), id)
    // toJSON is not an own enumerable field: spreading and deepEqual see the data only.
    assert.deepEqual(Object.keys(d), Object.keys(DECODED_TYPES))
    // Sub-millisecond layouts keep their nanoseconds in the JSON date.
    const dec = decode(Layout.preset('decimal').maxNodeId + 1000n * 123456789n, 'decimal')
    assert.equal(JSON.parse(JSON.stringify(dec)).date, dec.iso)

    const l = Layout.preset('twitter')
    assert.deepEqual(JSON.parse(JSON.stringify(l)), {
      name: 'twitter',
      timestampBits: 41,
      nodeBits: 10,
      sequenceBits: 12,
      totalBits: 63,
      order: 'timestamp_node_sequence',
      tickNs: '1000000',
      epochMs: '1288834974657',
      nodeIdOffset: '0',
      nodeCount: 1024,
      idsPerTick: 4096,
      maxNodeId: '1023',
      maxTick: String(2n ** 41n - 1n),
      lifespanEndMs: String(Date.parse('2080-07-10T17:30:30.209Z')),
      lifespanEndIso: '2080-07-10T17:30:30.209Z',
      clockUnit: 'ms',
    })
    assert.deepEqual(
      JSON.parse(JSON.stringify(new Generator({ nodeId: 9, layout: 'js53', policy: 'wait' }))),
      { layout: 'js53', nodeId: 9, policy: 'wait' },
    )
    const custom = new Layout({
      timestampBits: 40,
      nodeBits: 8,
      sequenceBits: 10,
      order: 'timestamp_sequence_node',
      tickNs: 1000000,
      epochMs: T0,
    })
    const gj = JSON.parse(JSON.stringify(new Generator({ nodeId: 2, layout: custom })))
    assert.equal(gj.layout.name, null)
    assert.equal(gj.layout.epochMs, String(T0))
    assert.equal(gj.layout.order, 'timestamp_sequence_node')
  })

  test(`surface (${flavour}): console.log / util.inspect show layout, node and policy`, () => {
    const g = new Generator({ nodeId: 7, layout: 'discord', policy: 'strict' })
    assert.equal(inspect(g), "Generator { layout: 'discord', nodeId: 7, policy: 'strict' }")
    const l = inspect(Layout.preset('js53'))
    assert.match(l, /^Layout \{/)
    for (const part of [
      "name: 'js53'",
      'nodeBits: 4',
      'nodeCount: 16',
      'idsPerTick: 256',
      'epochMs: 1704067200000n',
      "lifespanEndIso: '2093-09-06T15:47:35.552Z'",
    ]) {
      assert.ok(l.includes(part), `${part} not in ${l}`)
    }
    const custom = new Layout({
      timestampBits: 40,
      nodeBits: 8,
      sequenceBits: 10,
      order: 'timestamp_node_sequence',
      tickNs: 1000000,
      epochMs: 0,
    })
    const c = inspect(new Generator({ nodeId: 1, layout: custom }))
    assert.match(c, /^Generator \{\n {2}layout: \{\n {4}name: null,/)
    // Nested past the depth limit: the class name, as Node shows any object there.
    assert.equal(inspect({ a: { b: { c: g } } }), '{ a: { b: { c: [Generator] } } }')
    assert.match(inspect(decode(1212161512043450368n)), /^\{\n? *id: 1212161512043450368n,/)
    // An Opaque shows its width and layout, never its key.
    const key = Uint8Array.from({ length: 16 }, (_, i) => 200 + i)
    assert.equal(inspect(new Opaque({ key, layout: 'js53' })), "Opaque { bits: 53, layout: 'js53' }")
  })

  test(`surface (${flavour}): SnowmintError is an Error subclass; one rule for every error`, () => {
    assert.ok(SnowmintError.prototype instanceof Error)
    assert.equal(SnowmintError.prototype.name, 'SnowmintError')
    const e = throwsAs(() => parse('12x4', 'dec'), SnowmintError, 'PARSE', 'parse')
    assert.equal(e.position, 2)
    assert.ok(e instanceof Error && e instanceof SnowmintError)
    assert.match(inspect(e), /^SnowmintError: /)
    assert.match(e.stack, /^SnowmintError: /)
    const f = throwsAs(
      () =>
        new Layout({
          timestampBits: 50,
          nodeBits: 10,
          sequenceBits: 12,
          order: 'timestamp_node_sequence',
          tickNs: 1,
          epochMs: 0,
        }),
      SnowmintError,
      'INVALID_LAYOUT',
      'layout',
    )
    assert.equal(typeof f.field, 'string')
    // TOO_FAR_AHEAD carries retryAfterMs (a clock stuck at T0, a tiny maxAheadMs, a full tick).
    const g = new Generator({ nodeId: 1, layout: 'js53', clock: () => T0, maxAheadMs: 0 })
    g.nextIds(256)
    const t = throwsAs(() => g.nextId(), SnowmintError, 'TOO_FAR_AHEAD', 'too far ahead')
    assert.equal(typeof t.retryAfterMs, 'number')
    assert.ok(t.retryAfterMs >= 0)
  })

  test(`surface (${flavour}): the same bad input gives the same class and code`, () => {
    const T = TypeError
    const S = SnowmintError
    const IA = 'INVALID_ARGUMENT'
    const cases = [
      // Wrong JavaScript types: TypeError.
      ['no options', () => new Generator(), T, IA],
      ['options a number', () => new Generator(7), T, IA],
      ['no nodeId', () => new Generator({}), T, IA],
      ['nodeId an array', () => new Generator({ nodeId: [7] }), T, IA],
      ['unknown option', () => new Generator({ nodeId: 7, nodeid: 1 }), T, IA],
      ['layout a number', () => new Generator({ nodeId: 7, layout: 5 }), T, IA],
      ['layout a plain object', () => new Generator({ nodeId: 7, layout: {} }), T, IA],
      ['layout a Generator', () => new Generator({ nodeId: 7, layout: new Generator({ nodeId: 1 }) }), T, IA],
      ['clock a number', () => new Generator({ nodeId: 7, clock: 5 }), T, IA],
      ['policy a number', () => new Generator({ nodeId: 7, policy: 1 }), T, IA],
      ['randomStart a string', () => new Generator({ nodeId: 7, randomStart: 'yes' }), T, IA],
      ['nextIds a string', () => new Generator({ nodeId: 7 }).nextIds('3'), T, IA],
      ['decode an object', () => decode({}), T, IA],
      ['decode layout a number', () => decode(1n, 7), T, IA],
      ['encode a string', () => encode('12'), T, IA],
      ['encode encoding a number', () => encode(1n, 9), T, IA],
      ['parse a number', () => parse(12), T, IA],
      ['parse encoding a number', () => parse('12', 7), T, IA],
      ['compose a number', () => compose(5), T, IA],
      ['compose missing field', () => compose({ timestampTicks: 1, nodeId: 1 }), T, IA],
      [
        'compose unknown field',
        () => compose({ timestampTicks: 1, nodeId: 1, sequence: 1, extra: 1 }),
        T,
        IA,
      ],
      ['minIdAt a string', () => minIdAt('2020-01-01'), T, IA],
      ['preset a number', () => Layout.preset(5), T, IA],
      ['Layout missing fields', () => new Layout({ timestampBits: 41 }), T, IA],
      [
        'Layout tickNs a string',
        () =>
          new Layout({
            timestampBits: 41,
            nodeBits: 10,
            sequenceBits: 12,
            order: 'timestamp_node_sequence',
            tickNs: '1',
            epochMs: 0,
          }),
        T,
        IA,
      ],
      ['Opaque key a string', () => new Opaque({ key: '0123456789abcdef' }), T, IA],
      // Values of the right type, out of range or refused: SnowmintError.
      ['nodeId -1', () => new Generator({ nodeId: -1 }), S, 'NODE_ID_OUT_OF_RANGE'],
      ['nodeId 1.5', () => new Generator({ nodeId: 1.5 }), S, IA],
      ['nodeId NaN', () => new Generator({ nodeId: NaN }), S, IA],
      ['nodeId 2^53', () => new Generator({ nodeId: 2 ** 53 }), S, IA],
      ['nodeId -1n', () => new Generator({ nodeId: -1n }), S, 'NODE_ID_OUT_OF_RANGE'],
      ['nodeId 2^64', () => new Generator({ nodeId: 2n ** 64n }), S, 'NODE_ID_OUT_OF_RANGE'],
      ['nodeId a string no runtime here can resolve', () => new Generator({ nodeId: 'seven' }), S, IA],
      ['maxAheadMs -5', () => new Generator({ nodeId: 7, maxAheadMs: -5 }), S, IA],
      ['maxAheadMs too large', () => new Generator({ nodeId: 7, maxAheadMs: 2n ** 63n }), S, IA],
      ['randomSeed 2^64', () => new Generator({ nodeId: 7, randomSeed: 2n ** 64n }), S, IA],
      ['randomSeed 5.5', () => new Generator({ nodeId: 7, randomSeed: 5.5 }), S, IA],
      ['randomSeed a string', () => new Generator({ nodeId: 7, randomSeed: '5' }), T, IA],
      [
        'layout an object that only looks like a Layout',
        () => new Generator({ nodeId: 7, layout: Object.create(Layout.prototype) }),
        T,
        IA,
      ],
      [
        'randomSeed with randomStart false',
        () => new Generator({ nodeId: 7, randomStart: false, randomSeed: 1n }),
        S,
        IA,
      ],
      ['nextIds -1', () => new Generator({ nodeId: 7 }).nextIds(-1), S, IA],
      ['nextIds 1.5', () => new Generator({ nodeId: 7 }).nextIds(1.5), S, IA],
      ['nextIdNumber on 63 bits', () => new Generator({ nodeId: 7 }).nextIdNumber(), S, IA],
      ['decode 1.5', () => decode(1.5), S, IA],
      ['decode -1n', () => decode(-1n), S, 'INVALID_ID'],
      ['decode 2^64', () => decode(2n ** 64n), S, 'INVALID_ID'],
      ['encode 2^64', () => encode(2n ** 64n), S, 'INVALID_ID'],
      ['encode -1', () => encode(-1), S, 'INVALID_ID'],
      ['compose ticks -1', () => compose({ timestampTicks: -1, nodeId: 1, sequence: 1 }), S, IA],
      ['minIdAt invalid Date', () => minIdAt(new Date(NaN)), S, IA],
      ['minIdAt 1.5', () => minIdAt(1.5), S, IA],
      [
        'Layout timestampBits 41.5',
        () =>
          new Layout({
            timestampBits: 41.5,
            nodeBits: 10,
            sequenceBits: 12,
            order: 'timestamp_node_sequence',
            tickNs: 1,
            epochMs: 0,
          }),
        S,
        IA,
      ],
      ['unknown policy', () => new Generator({ nodeId: 7, policy: 'sometimes' }), S, IA],
      ['unknown encoding', () => encode(1n, 'base64'), S, IA],
      ['unknown parse encoding', () => parse('1', 'base64'), S, IA],
      ['sequence past its field', () => compose({ timestampTicks: 1, nodeId: 1, sequence: 4096 }), S, IA],
      ['Opaque key of 15 bytes', () => new Opaque({ key: new Uint8Array(15) }), S, IA],
      ['nodeId past the node field', () => new Generator({ nodeId: 1024 }), S, 'NODE_ID_OUT_OF_RANGE'],
      ['nodeId past js53', () => new Generator({ nodeId: 16, layout: 'js53' }), S, 'NODE_ID_OUT_OF_RANGE'],
      ['ID past 63 bits', () => decode(2n ** 63n), S, 'INVALID_ID'],
      ['Opaque token -1n', () => new Opaque({ key: new Uint8Array(16) }).decode(-1n), S, 'INVALID_ID'],
      [
        'Opaque token past js53',
        () => new Opaque({ key: new Uint8Array(16), layout: 'js53' }).encode(1n << 53n),
        S,
        'INVALID_ID',
      ],
      ['parse a bad digit', () => parse('12x4', 'dec'), S, 'PARSE'],
      ['decode text', () => decode('not an id'), S, 'PARSE'],
      ['before the epoch', () => minIdAt(0), S, 'CLOCK_BEFORE_EPOCH'],
      ['unknown preset', () => Layout.preset('nope'), S, 'INVALID_LAYOUT'],
      ['unknown layout name', () => new Generator({ nodeId: 1, layout: 'Twitter' }), S, 'INVALID_LAYOUT'],
      ['snowcast node count', () => Layout.snowcast(T0, 100), S, 'INVALID_LAYOUT'],
      ['hazelcast offset', () => Layout.hazelcast(65536), S, 'INVALID_LAYOUT'],
      [
        'clock before epoch',
        () => new Generator({ nodeId: 1, clock: () => 0 }).nextId(),
        S,
        'CLOCK_BEFORE_EPOCH',
      ],
      ['clock a fraction', () => new Generator({ nodeId: 1, clock: () => 1.5 }).nextId(), S, 'INVALID_CLOCK'],
    ]
    for (const [label, fn, cls, code] of cases) throwsAs(fn, cls, code, label)
    // A clock's own exception passes through unchanged.
    const boom = new RangeError('boom')
    assert.throws(
      () =>
        new Generator({
          nodeId: 1,
          clock: () => {
            throw boom
          },
        }).nextId(),
      (e) => e === boom,
    )
  })

  if (tsc !== undefined) {
    test(`surface (${flavour}): the two packages' index.d.ts agree on the shared surface (tsc surface-types.ts)`, () => {
      assert.ok(fs.existsSync(tsc), `typescript is not installed (${tsc})`)
      const r = spawnSync(
        tsc,
        [
          '--noEmit',
          '--strict',
          '--target',
          'es2022',
          '--module',
          'esnext',
          '--moduleResolution',
          'bundler',
          path.join(HERE, 'surface-types.ts'),
        ],
        { encoding: 'utf8', timeout: 120_000 },
      )
      assert.equal(r.status, 0, `tsc surface-types.ts:\n${r.stdout}${r.stderr}`)
    })

    test(`surface (${flavour}): a misspelt preset name fails type-checking; the right names pass`, () => {
      assert.ok(fs.existsSync(tsc), `typescript is not installed (${tsc})`)
      const dir = fs.mkdtempSync(path.join(project, '.typecheck-'))
      try {
        const source = (names) =>
          [
            `import { Generator, Layout, decode, minIdAt } from '${packageName}'`,
            `new Generator({ nodeId: 1, layout: '${names[0]}' })`,
            `Layout.preset('${names[1]}')`,
            `decode(1n, '${names[2]}')`,
            `minIdAt(0, '${names[3]}')`,
            '',
          ].join('\n')
        const check = (file, text) => {
          fs.writeFileSync(path.join(dir, file), text)
          return spawnSync(
            tsc,
            [
              '--noEmit',
              '--strict',
              '--target',
              'es2022',
              '--module',
              'nodenext',
              '--moduleResolution',
              'nodenext',
              path.join(dir, file),
            ],
            { encoding: 'utf8', timeout: 120_000, cwd: project },
          )
        }
        const good = check('good.mts', source(['twitter', 'js53', 'discord', 'sonyflake']))
        assert.equal(good.status, 0, `the right names should type-check:\n${good.stdout}${good.stderr}`)
        const bad = check('bad.mts', source(['twiter', 'snowcast', 'Twitter', 'sonyflak']))
        assert.notEqual(bad.status, 0, 'misspelt preset names type-checked')
        for (const [line, name] of [
          [2, 'twiter'],
          [3, 'snowcast'],
          [4, 'Twitter'],
          [5, 'sonyflak'],
        ]) {
          assert.match(
            bad.stdout,
            new RegExp(`bad\\.mts\\(${line},\\d+\\): error TS\\d+: .*"${name}"`),
            bad.stdout,
          )
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  }

  test(`surface (${flavour}): layouts: every bad field is INVALID_LAYOUT naming it`, () => {
    const base = {
      timestampBits: 41,
      nodeBits: 10,
      sequenceBits: 12,
      order: 'timestamp_node_sequence',
      tickNs: 1000000,
      epochMs: 1288834974657,
    }
    const cases = [
      [{ timestampBits: 0 }, 'timestamp_bits'],
      [{ timestampBits: 65 }, 'timestamp_bits'],
      [{ nodeBits: 64 }, 'node_bits'],
      [{ sequenceBits: 99 }, 'sequence_bits'],
      [{ timestampBits: 50 }, 'timestamp_bits + node_bits + sequence_bits'],
      [{ tickNs: 0 }, 'tick_ns'],
      [{ epochMs: 2n ** 60n }, 'epoch_ms'],
      [{ epochMs: 18446744073710n }, 'epoch_ms'],
      [{ order: 'node_first' }, 'order'],
      [{ nodeIdOffset: 1024 }, 'node_id_offset'],
    ]
    for (const [change, field] of cases) {
      const e = throwsCode(assert, () => new Layout({ ...base, ...change }), 'INVALID_LAYOUT')
      assert.ok(e.message.includes(field), `${e.message} names ${field}`)
    }
    throwsCode(assert, () => new Layout({ ...base, timestampBits: 41.5 }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => new Layout({ ...base, tickNs: -1n }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => new Layout({ ...base, tickNs: 2n ** 64n }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => new Layout({ ...base, epochMs: 1.5 }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => new Layout({ ...base, useSignBit: 1 }), 'INVALID_ARGUMENT', TypeError)
    throwsCode(assert, () => new Layout({ ...base, extra: 1 }), 'INVALID_ARGUMENT', TypeError)
    // The fields and defaults of every binding (snowmint_host::LayoutFields): order and tickNs default,
    // the widths and the epoch are required.
    const { order, tickNs, ...defaulted } = base
    assert.equal(order, 'timestamp_node_sequence')
    assert.equal(new Layout(defaulted).order, order)
    assert.equal(new Layout(defaulted).tickNs, BigInt(tickNs))
    const { epochMs, ...noEpoch } = base
    assert.ok(epochMs !== undefined)
    throwsCode(assert, () => new Layout(noEpoch), 'INVALID_ARGUMENT', TypeError)
    throwsCode(assert, () => Layout.preset('snowcast'), 'INVALID_LAYOUT')
    throwsCode(assert, () => Layout.preset('tweeter'), 'INVALID_LAYOUT')
    throwsCode(assert, () => Layout.preset(7), 'INVALID_ARGUMENT', TypeError)
    throwsCode(assert, () => Layout.snowcast(0, 100), 'INVALID_LAYOUT')
    throwsCode(assert, () => Layout.snowcast(T0, 100), 'INVALID_LAYOUT')
    throwsCode(assert, () => Layout.snowcast(0, 2n ** 64n), 'INVALID_ARGUMENT')
    throwsCode(assert, () => Layout.hazelcast(-1), 'INVALID_ARGUMENT')
    throwsCode(assert, () => Layout.hazelcast(65536), 'INVALID_LAYOUT')
    throwsCode(assert, () => Layout.hazelcast(70000), 'INVALID_LAYOUT')
  })

  test(`surface (${flavour}): decode, compose, minIdAt, encode and parse agree`, () => {
    const id = 1212161512043450368n
    const d = decode(id, 'twitter')
    assert.deepEqual(
      { ...d, date: d.date.toISOString() },
      {
        id,
        timestampTicks: 289001825343n,
        timestampMs: 1577836800000,
        subMsNs: 0,
        date: '2020-01-01T00:00:00.000Z',
        iso: '2020-01-01T00:00:00.000Z',
        nodeId: 1,
        sequence: 0,
      },
    )
    assert.equal(compose({ timestampTicks: d.timestampTicks, nodeId: 1, sequence: 0 }), id)
    assert.equal(compose({ timestampTicks: 289001825343, nodeId: 1n, sequence: 0n }, 'twitter'), id)
    const min = minIdAt(new Date('2020-01-01T00:00:00Z'))
    assert.equal(min, id - 4096n)
    assert.equal(min, minIdAt(1577836800000))
    assert.equal(min, minIdAt(1577836800000n, Layout.preset('twitter')))
    for (const x of [0n, 1n, id, 2n ** 64n - 1n]) {
      for (const enc of ['dec', 'hex', 'base32', 'base58']) {
        assert.equal(parse(encode(x, enc), enc), x, `${x} ${enc}`)
      }
    }
    for (const enc of ['dec', 'hex', 'base32', 'base58']) {
      assert.equal(parse(encode(id, enc)), id, `${enc}, told apart by shape`)
      assert.equal(decode(encode(id, enc)).id, id)
    }
    assert.equal(encode(id), '1212161512043450368')
    assert.equal(encode(255n, 'hex'), '00000000000000ff')
    assert.equal(encode(255, 'hex'), '00000000000000ff')
    assert.equal(parse('0xff'), 255n)
    const p = throwsCode(assert, () => parse('12a4', 'dec'), 'PARSE')
    assert.equal(p.position, 2)
    assert.match(p.message, /position 2/)
    assert.equal(decode('175928847299117063', 'discord').iso, '2016-04-30T11:18:25.796Z')
    const dec = decode(1640700422954100128n, 'decimal')
    assert.equal(dec.iso, '2021-12-28T14:07:02.954100100Z')
    assert.equal(dec.nodeId, 28)
    assert.equal(dec.subMsNs, 100100)
  })
}
