// The package as a CommonJS user requires it: every public function, each bad input → its code.
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const snowmint = require('snowmint')
const { Generator, Layout, decode, compose, minIdAt, encode, parse } = snowmint

const T0 = 1750000000000 // 2025-06-15T15:06:40Z

// The shared error assertion (tests/js/throws-code.cjs, beside the conformance runner test.sh names).
const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const shared = require(path.join(path.dirname(runner), 'throws-code.cjs'))
/** Asserts fn throws an `Error` of class `cls` with `code`; returns it. */
const throwsCode = (fn, code, cls = Error) => shared.throwsCode(assert, fn, code, cls)

test('exports (ERROR_CODES: tests/js/surface.mjs)', () => {
  for (const name of ['Generator', 'Layout', 'decode', 'compose', 'minIdAt', 'encode', 'parse']) {
    assert.equal(typeof snowmint[name], 'function', name)
  }
})

test('default generator: twitter, policy fail, host clock read in Rust', () => {
  const gen = new Generator({ nodeId: 7 })
  assert.equal(gen.layout.name, 'twitter')
  assert.equal(gen.nodeId, 7)
  assert.equal(gen.policy, 'fail')
  const before = Date.now()
  const id = gen.nextId()
  const after = Date.now()
  assert.equal(typeof id, 'bigint')
  const d = decode(id)
  assert.equal(d.nodeId, 7)
  assert.ok(
    d.timestampMs >= before && d.timestampMs <= after,
    `${d.timestampMs} not in [${before}, ${after}]`,
  )
  assert.ok(d.date instanceof Date)
  assert.equal(d.iso, d.date.toISOString())
})

test('host clock: every ID names the millisecond Date.now() shows around it (the TSC-gated clock is exact)', () => {
  // 2^22 IDs a millisecond: the generator never has to run ahead of the clock here.
  const wide = new Layout({
    timestampBits: 41,
    nodeBits: 0,
    sequenceBits: 22,
    order: 'timestamp_node_sequence',
    tickNs: 1000000,
    epochMs: T0,
  })
  const gen = new Generator({ nodeId: 0, layout: wide })
  const start = Date.now()
  let n = 0
  for (; n < 3_000_000 && Date.now() - start < 1500; n++) {
    const before = Date.now()
    const ms = decode(gen.nextId(), wide).timestampMs
    const after = Date.now()
    if (ms < before || ms > after) assert.fail(`ID ${n} names ${ms}, outside [${before}, ${after}]`)
  }
  assert.ok(n > 10_000, `${n} IDs`)
})

test('10^6 IDs from nextId: no duplicate, strictly increasing', () => {
  const gen = new Generator({ nodeId: 1 })
  const n = 1_000_000
  const ids = new BigUint64Array(n)
  for (let i = 0; i < n; i++) ids[i] = gen.nextId()
  for (let i = 1; i < n; i++) {
    if (!(ids[i] > ids[i - 1])) assert.fail(`not increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`)
  }
  // Strictly increasing implies no duplicate; count distinct anyway.
  assert.equal(new Set(ids).size, n)
})

test('10^6 IDs from nextIds batches interleaved with nextId: strictly increasing', () => {
  const gen = new Generator({ nodeId: 2, layout: 'discord' })
  let last = -1n
  let count = 0
  while (count < 1_000_000) {
    const batch = gen.nextIds(4096)
    assert.ok(batch instanceof BigUint64Array)
    assert.equal(batch.length, 4096)
    for (const id of batch) {
      if (!(id > last)) assert.fail(`not increasing after ${last}: ${id}`)
      last = id
    }
    const one = gen.nextId()
    assert.ok(one > last)
    last = one
    count += 4097
  }
  assert.equal(gen.nextIds(0).length, 0)
})

test('nextIdString is the decimal form of the next ID', () => {
  const gen = new Generator({ nodeId: 3, clock: () => T0 })
  const s = gen.nextIdString()
  assert.match(s, /^[0-9]+$/)
  assert.equal(parse(s, 'dec'), BigInt(s))
  assert.equal(BigInt(gen.nextIdString()), BigInt(s) + 1n)
  assert.equal(JSON.parse(JSON.stringify({ id: gen.nextIdString() })).id, (BigInt(s) + 2n).toString())
})

test('nextIdNumber: js53 only, exact Numbers', () => {
  const gen = new Generator({ nodeId: 15, layout: 'js53' })
  const a = gen.nextIdNumber()
  const b = gen.nextIdNumber()
  assert.ok(Number.isSafeInteger(a) && Number.isSafeInteger(b) && b > a)
  assert.equal(decode(BigInt(b), 'js53').nodeId, 15)
  const e = throwsCode(() => new Generator({ nodeId: 1 }).nextIdNumber(), 'INVALID_ARGUMENT')
  assert.match(e.message, /53 bits/)
})

test('injected clock: number, bigint, and ns for the decimal layout; same IDs as the core', () => {
  const n = new Generator({ nodeId: 7, clock: () => T0, policy: 'wait' })
  const b = new Generator({ nodeId: 7, clock: () => BigInt(T0), policy: 'wait' })
  assert.equal(n.nextId(), 1934266310456274944n)
  assert.equal(b.nextId(), 1934266310456274944n)
  const dec = new Generator({ nodeId: 28, layout: 'decimal', clock: () => 1640700422954100128n })
  assert.equal(dec.layout.clockUnit, 'ns')
  assert.equal(dec.nextId(), 1640700422954100128n)
  assert.equal(decode(1640700422954100128n, 'decimal').iso, '2021-12-28T14:07:02.954100100Z')
})

test('injected clock: bad readings are INVALID_CLOCK, never rounded', () => {
  for (const r of [1.5, T0 + 0.25, -1, NaN, Infinity, -Infinity, 2 ** 53, 1e300, -1n, 2n ** 64n]) {
    const gen = new Generator({ nodeId: 1, clock: () => r })
    throwsCode(() => gen.nextId(), 'INVALID_CLOCK')
    throwsCode(() => gen.nextIds(3), 'INVALID_CLOCK')
  }
  throwsCode(() => new Generator({ nodeId: 1, clock: () => String(T0) }).nextId(), 'INVALID_CLOCK', TypeError)
  throwsCode(() => new Generator({ nodeId: 1, clock: () => undefined }).nextId(), 'INVALID_CLOCK', TypeError)
  // ms readings past year 2554 overflow nanoseconds.
  throwsCode(() => new Generator({ nodeId: 1, clock: () => 18446744073710 }).nextId(), 'INVALID_CLOCK')
})

test('injected clock that throws: the same exception reaches the caller', () => {
  const boom = new RangeError('clock exploded')
  const gen = new Generator({
    nodeId: 1,
    clock: () => {
      throw boom
    },
  })
  assert.throws(
    () => gen.nextId(),
    (e) => e === boom,
  )
  assert.throws(
    () => gen.nextIds(2),
    (e) => e === boom,
  )
})

test('clock before the epoch, past the lifespan', () => {
  throwsCode(() => new Generator({ nodeId: 1, clock: () => 0 }).nextId(), 'CLOCK_BEFORE_EPOCH')
  const js53 = Layout.preset('js53')
  const end = Number(js53.lifespanEndMs)
  throwsCode(() => new Generator({ nodeId: 1, layout: js53, clock: () => end }).nextId(), 'LAYOUT_EXHAUSTED')
})

test("policy 'fail': TOO_FAR_AHEAD with retryAfterMs; 'strict': CLOCK_MOVED_BACKWARDS", () => {
  let now = T0
  const fail = new Generator({ nodeId: 1, clock: () => now, maxAheadMs: 0 })
  fail.nextIds(4096)
  const e = throwsCode(() => fail.nextId(), 'TOO_FAR_AHEAD')
  assert.equal(e.retryAfterMs, 1)
  now += 1
  assert.equal(decode(fail.nextId()).timestampMs, T0 + 1)

  const back = new Generator({ nodeId: 1, clock: () => now, policy: 'fail' })
  back.nextId()
  now -= 20_000 // 20 s back: further than the default 15 s
  const e2 = throwsCode(() => back.nextId(), 'TOO_FAR_AHEAD')
  assert.ok(e2.retryAfterMs > 4000 && e2.retryAfterMs <= 5001, String(e2.retryAfterMs))
  now -= 0
  const strict = new Generator({ nodeId: 1, clock: () => now, policy: 'strict' })
  strict.nextId()
  now -= 5
  throwsCode(() => strict.nextId(), 'CLOCK_MOVED_BACKWARDS')
})

test("policy 'wait': waits for a moving clock; a frozen clock is TOO_FAR_AHEAD, not a hang", () => {
  const start = Date.now()
  const moving = new Generator({ nodeId: 1, clock: () => Date.now(), policy: 'wait', maxAheadMs: 0 })
  const ids = []
  for (let i = 0; i < 3; i++) ids.push(...moving.nextIds(4096))
  assert.equal(new Set(ids).size, ids.length)
  assert.ok(Date.now() - start < 5000)
  const frozen = new Generator({ nodeId: 1, clock: () => T0, policy: 'wait', maxAheadMs: 0 })
  frozen.nextIds(4096)
  throwsCode(() => frozen.nextId(), 'TOO_FAR_AHEAD')
  // The host clock under 'wait' (read and slept in Rust).
  const host = new Generator({ nodeId: 1, policy: 'wait', maxAheadMs: 0 })
  const many = []
  for (let i = 0; i < 4; i++) many.push(...host.nextIds(4096))
  for (let i = 1; i < many.length; i++) assert.ok(many[i] > many[i - 1])
})

test('random start: seeded sequences are reproducible, still strictly increasing', () => {
  const mk = () => new Generator({ nodeId: 7, clock: () => T0, randomSeed: 11n })
  const a = mk().nextIds(5)
  assert.deepEqual(Array.from(mk().nextIds(5)), Array.from(a))
  assert.notEqual(decode(a[0]).sequence, 0)
  const r = new Generator({ nodeId: 7, randomStart: true })
  const ids = r.nextIds(10_000)
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
})

test('Layout: presets, snowcast, hazelcast, custom, getters', () => {
  const tw = Layout.preset('twitter')
  assert.equal(tw.name, 'twitter')
  assert.deepEqual([tw.timestampBits, tw.nodeBits, tw.sequenceBits, tw.totalBits], [41, 10, 12, 63])
  assert.equal(tw.order, 'timestamp_node_sequence')
  assert.equal(tw.tickNs, 1000000n)
  assert.equal(tw.epochMs, 1288834974657n)
  assert.equal(tw.nodeCount, 1024)
  assert.equal(tw.idsPerTick, 4096)
  assert.equal(tw.maxNodeId, 1023n)
  assert.equal(tw.maxTick, 2n ** 41n - 1n)
  assert.equal(tw.lifespanEndIso, '2080-07-10T17:30:30.209Z')
  assert.equal(tw.lifespanEndMs, BigInt(Date.parse('2080-07-10T17:30:30.209Z')))
  assert.equal(tw.clockUnit, 'ms')
  assert.equal(Layout.preset('sonyflake').order, 'timestamp_sequence_node')
  const sc = Layout.snowcast(T0, 1000)
  assert.equal(sc.name, 'snowcast')
  assert.equal(sc.nodeCount, 1024)
  assert.equal(sc.sequenceBits, 13)
  const hz = Layout.hazelcast(5n)
  assert.equal(hz.maxNodeId, 65530n)
  const gen = new Generator({ nodeId: 2, layout: hz, clock: () => T0 })
  assert.equal(decode(gen.nextId(), hz).nodeId, 7)
  const custom = new Layout({
    timestampBits: 40,
    nodeBits: 11,
    sequenceBits: 12,
    order: 'timestamp_node_sequence',
    tickNs: 1000000,
    epochMs: T0,
  })
  assert.equal(custom.name, null)
  assert.equal(custom.nodeCount, 2048)
  assert.equal(
    new Layout({
      timestampBits: 32,
      nodeBits: 16,
      sequenceBits: 16,
      order: 'timestamp_sequence_node',
      tickNs: 10n ** 9n,
      epochMs: 0n,
      useSignBit: true,
      nodeIdOffset: 1n,
    }).nodeIdOffset,
    1n,
  )
})

// Wrong types and out-of-range numbers, case by case: tests/js/surface.mjs (the same for both packages).
test('out-of-range node IDs and IDs, unknown names: their codes', () => {
  const R = snowmint.SnowmintError
  // A node ID that is a whole number outside 0..2^64 is NODE_ID_OUT_OF_RANGE, as in every runtime
  // (tests/host-inputs).
  for (const bad of [-1, -1n, 2n ** 64n])
    throwsCode(() => new Generator({ nodeId: bad }), 'NODE_ID_OUT_OF_RANGE', R)
  // An ID out of 0..2^64 is INVALID_ID, as in every runtime.
  for (const bad of [-1n, 2n ** 64n, -1]) {
    throwsCode(() => decode(bad), 'INVALID_ID', R)
    throwsCode(() => encode(bad), 'INVALID_ID', R)
  }
  // Unknown names are core INVALID_ARGUMENT errors (policy, encoding).
  throwsCode(() => new Generator({ nodeId: 7, policy: 'sometimes' }), 'INVALID_ARGUMENT')
  throwsCode(() => encode(1n, 'base64'), 'INVALID_ARGUMENT')
  throwsCode(() => parse('1', 'base64'), 'INVALID_ARGUMENT')
})

test('core errors: node ID range, invalid ID, parse position', () => {
  const e = throwsCode(() => new Generator({ nodeId: 1024 }), 'NODE_ID_OUT_OF_RANGE')
  assert.match(e.message, /0..=1023/)
  throwsCode(() => new Generator({ nodeId: 16, layout: 'js53' }), 'NODE_ID_OUT_OF_RANGE')
  throwsCode(() => decode(2n ** 63n), 'INVALID_ID')
  const p = throwsCode(() => parse('12x4', 'dec'), 'PARSE')
  assert.equal(p.position, 2)
  assert.match(p.message, /position 2/)
  throwsCode(() => decode('not an id'), 'PARSE')
  throwsCode(() => compose({ timestampTicks: 1, nodeId: 1, sequence: 4096 }), 'INVALID_ARGUMENT')
  throwsCode(() => minIdAt(0), 'CLOCK_BEFORE_EPOCH')
})

test('errors are Error objects, never thrown strings', () => {
  try {
    parse('')
  } catch (e) {
    assert.ok(e instanceof Error)
    assert.equal(typeof e.stack, 'string')
    assert.equal(e.code, 'PARSE')
    return
  }
  assert.fail('no throw')
})

test('minting methods: bound copies are safe to detach, frozen objects work, wrong `this` is a TypeError', () => {
  const v8 = require('node:v8')
  const vm = require('node:vm')
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  let gen = new Generator({ nodeId: 5, clock: () => T0 })
  const first = gen.nextId() // installs the generator's own copies
  assert.deepEqual(Object.keys(gen), [])
  const next = gen.nextId
  const nextIds = gen.nextIds
  const nextIdString = gen.nextIdString
  gen = null
  for (let i = 0; i < 3; i++) gc()
  // The detached methods keep their generator alive and keep counting.
  assert.equal(next(), first + 1n)
  assert.equal(next.call({}), first + 2n)
  assert.deepEqual(Array.from(nextIds(2)), [first + 3n, first + 4n])
  assert.equal(nextIdString(), String(first + 5n))
  const frozen = Object.freeze(new Generator({ nodeId: 6, clock: () => T0 }))
  assert.equal(frozen.nextId() + 1n, frozen.nextId())
  assert.equal(frozen.nextIds(3).length, 3)
  for (const m of ['nextId', 'nextIdString', 'nextIds']) {
    for (const bad of [
      {},
      null,
      undefined,
      5,
      Layout.preset('twitter'),
      Object.create(Generator.prototype),
    ]) {
      throwsCode(() => Generator.prototype[m].call(bad, 1), 'INVALID_ARGUMENT', TypeError)
    }
  }
  // Many short-lived generators: each is collected with its methods.
  for (let i = 0; i < 20000; i++) new Generator({ nodeId: 1 }).nextId()
  gc()
})

test('nextId fast path: each generator has its own bound nextId over the shared ID cell', () => {
  const gen = new Generator({ nodeId: 3 })
  const own = Object.getOwnPropertyDescriptor(gen, 'nextId')
  assert.ok(
    own && typeof own.value === 'function' && !own.enumerable,
    'nextId is an own, non-enumerable method',
  )
  // The class's own prototype method (N-API, used for other receivers) gives the same sequence.
  const proto = Object.getPrototypeOf(Generator.prototype).nextId
  const a = gen.nextId()
  const b = proto.call(gen)
  const c = gen.nextId()
  assert.ok(a < b && b < c, `${a} ${b} ${c}`)
  for (const id of [a, b, c]) assert.equal(decode(id).nodeId, 3)
})

test('nextId fast path: thousands of generators, collected and replaced, each mints from itself', () => {
  const v8 = require('node:v8')
  const vm = require('node:vm')
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  const js53 = Layout.preset('js53')
  for (let round = 0; round < 4; round++) {
    // 16 node IDs of js53; table slots freed by collected generators are reused by new ones.
    const gens = Array.from(
      { length: 2000 },
      (_, i) => new Generator({ nodeId: i % 16, layout: js53, clock: () => T0 + round }),
    )
    const last = new Array(gens.length).fill(-1n)
    for (let k = 0; k < 3; k++) {
      for (let i = gens.length - 1; i >= 0; i--) {
        const id = gens[i].nextId()
        const d = decode(id, js53)
        assert.equal(d.nodeId, i % 16)
        assert.ok(id > last[i])
        last[i] = id
      }
    }
    // Each generator's IDs are its own sequence: 0, 1, 2 at the clock's tick.
    assert.equal(decode(last[5], js53).sequence, 2)
    gens.length = 0
    gc()
  }
})

test('nextId fast path: a clock that mints from another generator does not disturb the ID cell', () => {
  const inner = new Generator({ nodeId: 2, clock: () => T0 })
  let innerIds = []
  const outer = new Generator({
    nodeId: 1,
    clock: () => {
      innerIds.push(inner.nextId())
      return T0
    },
  })
  const ids = [outer.nextId(), outer.nextId()]
  assert.deepEqual(
    ids.map((id) => decode(id).nodeId),
    [1, 1],
  )
  assert.deepEqual(
    innerIds.map((id) => decode(id).nodeId),
    [2, 2],
  )
  assert.equal(ids[1], ids[0] + 1n)
  // A clock that throws on the second call: the error reaches the caller, the next call works.
  let n = 0
  const flaky = new Generator({
    nodeId: 4,
    clock: () => {
      if (n++ === 1) throw new RangeError('flaky')
      return T0
    },
  })
  const first = flaky.nextId()
  assert.throws(
    () => flaky.nextId(),
    (e) => e instanceof RangeError && e.message === 'flaky',
  )
  assert.equal(flaky.nextId(), first + 1n)
})

test('an injected clock stays alive with its generator, and a generator whose clock refers to it is collected', async () => {
  const v8 = require('node:v8')
  const vm = require('node:vm')
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  let ms = T0
  const gen = new Generator({ nodeId: 1, clock: () => ms })
  for (let i = 0; i < 3; i++) gc()
  assert.equal(decode(gen.nextId()).timestampMs, T0)
  let collected = 0
  const registry = new FinalizationRegistry(() => {
    collected++
  })
  for (let i = 0; i < 200; i++) {
    const self = new Generator({ nodeId: 2, clock: () => (self ? T0 : T0) })
    self.nextId()
    registry.register(self, i)
  }
  for (let round = 0; round < 20 && collected === 0; round++) {
    gc()
    await new Promise((r) => setTimeout(r, 10))
  }
  assert.ok(collected > 0, 'no self-referencing generator was collected')
})

test("the generator's own window closes before anything else it is asked", () => {
  // A one-second tick keeps the window open (up to 64 positions taken ahead in the tick) between calls.
  const layout = new Layout({
    timestampBits: 33,
    nodeBits: 5,
    sequenceBits: 25,
    order: 'timestamp_node_sequence',
    tickNs: 1_000_000_000n,
    epochMs: 1_700_000_000_000n,
  })
  const gen = new Generator({ nodeId: 3, layout })
  const ids = Array.from({ length: 100 }, () => gen.nextId()) // windows of 1, 2, 4, ... 64
  const last = () => ids[ids.length - 1]
  // A batch comes after every ID handed out, and the next single ID after the batch.
  const batch = Array.from(gen.nextIds(5))
  assert.ok(batch[0] > last(), 'a batch after the window')
  ids.push(...batch, gen.nextId())
  assert.ok(ids[ids.length - 1] > batch[4], 'a single ID after the batch')
  // Statistics count every ID handed out, the high-water mark is past every one, and a restore to it
  // is not undercut by the window's rest.
  ids.push(...Array.from({ length: 50 }, () => gen.nextId()))
  assert.equal(gen.stats().minted, ids.length)
  const mark = gen.highWaterMark()
  const position = (id) => (decode(id, layout).timestampTicks << 25n) | BigInt(decode(id, layout).sequence)
  assert.equal(mark, position(last()) + 1n, 'the mark is the next position: the window gave its rest back')
  ids.push(...Array.from({ length: 10 }, () => gen.nextId()))
  gen.restore(mark + 1000n)
  const after = gen.nextId()
  assert.ok(position(after) >= mark + 1000n, 'an ID after a restore is past the mark')
  assert.equal(new Set([...ids, after]).size, ids.length + 1)
})
