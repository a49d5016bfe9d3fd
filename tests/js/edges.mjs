// What a new user trips over first, the same in the native Node package and the WASM one: ambiguous
// strings, unknown names, clock readings in the wrong unit, restarts (highWaterMark/restore), decode inputs.
// Each package's tests call runEdges(api, { test, assert }) with its installed package.

const T0 = 1_750_000_000_000 // Unix ms

import { throwsCode as check } from './throws-code.cjs'

/** `throwsCode` with the case named in failures. */
const throwsCode = (assert, fn, code, what) => check(assert, fn, code, Error, what)

export function runEdges(api, { test, assert }) {
  const { Generator, Layout, parse, decode, encode } = api

  test('parse any never chooses silently: both readings named, and how to choose', () => {
    for (const [text, form, value] of [
      ['1970065334000000', 'hex', 1832972002764259328n],
      ['1700000000000', 'base32', 1405123083739594752n],
      ['12345678912', 'base58', 7690564481429305n],
    ]) {
      const e = throwsCode(assert, () => parse(text), 'PARSE', text)
      assert.equal(e.position, 0)
      assert.ok(
        e.message.includes(`dec ${BigInt(text)}`) && e.message.includes(`${form} ${value}`),
        e.message,
      )
      assert.ok(e.message.includes(`"${form}"`), e.message)
      assert.equal(parse(text, form), value)
      assert.equal(parse(text, 'dec'), BigInt(text))
      throwsCode(assert, () => decode(text), 'PARSE', `decode ${text}`)
    }
    assert.equal(parse('197006533400000'), 197006533400000n) // 15 digits
    assert.equal(parse('12345678910'), 12345678910n) // a 0 is no base58 digit
  })

  test('decode: an ID out of 0..2^64 is INVALID_ID; a string out of range is PARSE', () => {
    for (const bad of [-1n, 2n ** 64n, -1]) throwsCode(assert, () => decode(bad), 'INVALID_ID', String(bad))
    throwsCode(assert, () => decode('18446744073709551616'), 'PARSE', 'string 2^64')
    assert.equal(decode('0x' + encode(1934266310456274944n, 'hex')).id, 1934266310456274944n)
  })

  test('unknown names give the name, the nearest allowed one and the allowed ones', () => {
    let e = throwsCode(
      assert,
      () => new Generator({ nodeId: 1, layout: 'Twitter' }),
      'INVALID_LAYOUT',
      'layout',
    )
    assert.ok(
      e.message.includes('"Twitter" (did you mean twitter?)') && e.message.includes('discord'),
      e.message,
    )
    assert.ok(!e.message.includes('is 0'), e.message)
    e = throwsCode(assert, () => new Generator({ nodeId: 1, policy: 'Fail' }), 'INVALID_ARGUMENT', 'policy')
    assert.ok(e.message.includes('"Fail" (did you mean fail?); allowed: wait, fail, strict'), e.message)
    e = throwsCode(assert, () => encode(1n, 'bas58'), 'INVALID_ARGUMENT', 'encoding')
    assert.ok(e.message.includes('did you mean base58?'), e.message)
    e = throwsCode(assert, () => Layout.preset('uuid'), 'INVALID_LAYOUT', 'far from all')
    assert.ok(!e.message.includes('did you mean') && e.message.includes('twitter, discord'), e.message)
    e = throwsCode(
      assert,
      () =>
        new Layout({
          timestampBits: 41,
          nodeBits: 10,
          sequenceBits: 12,
          tickNs: 1_000_000,
          epochMs: 0,
          order: 'ts|sq|node',
        }),
      'INVALID_LAYOUT',
      'order',
    )
    assert.ok(e.message.includes('did you mean ts|seq|node?'), e.message)
  })

  test('snowcast by name says how to pass its epoch and node count, in JavaScript', () => {
    for (const call of [
      () => Layout.preset('snowcast'),
      () => new Generator({ nodeId: 1, layout: 'snowcast' }),
    ]) {
      const e = throwsCode(assert, call, 'INVALID_LAYOUT', 'snowcast')
      assert.ok(e.message.includes('epoch and a node count'), e.message)
      assert.ok(e.message.includes('{ layout: Layout.snowcast(epochMs, nodeCount) }'), e.message)
      assert.ok(!e.message.includes('::'), e.message)
    }
    assert.equal(Number(Layout.snowcast(1_600_000_000_000, 1024).nodeCount), 1024)
  })

  test('a clock reading in the wrong unit says which unit it looks like', () => {
    for (const [clock, says] of [
      [() => 1_700_000_000, 'looks like seconds: multiply by 1000'],
      [() => Math.floor(Date.now() / 1000), 'looks like seconds: multiply by 1000'],
      [() => Date.now() / 1000, 'looks like seconds: multiply by 1000'],
      [() => Date.now() * 1000, 'looks like microseconds: divide by 1000'],
      [() => BigInt(Date.now()) * 1_000_000n, 'looks like nanoseconds: divide by 1000000'],
    ]) {
      const g = new Generator({ nodeId: 1, clock })
      const e = throwsCode(assert, () => g.nextId(), 'INVALID_CLOCK', says)
      assert.ok(e.message.includes(says), e.message)
      assert.equal(g.highWaterMark(), 0n)
    }
    assert.ok(new Generator({ nodeId: 1, clock: () => Date.now() }).nextId() > 0n)
    // A layout with sub-millisecond ticks takes nanoseconds.
    const ns = new Layout({
      timestampBits: 54,
      nodeBits: 1,
      sequenceBits: 8,
      order: 'timestamp_node_sequence',
      tickNs: 100,
      epochMs: 1_288_834_974_657,
    })
    const e = throwsCode(
      assert,
      () => new Generator({ nodeId: 1, layout: ns, clock: () => T0 }).nextId(),
      'INVALID_CLOCK',
      'ns',
    )
    assert.ok(e.message.includes('looks like milliseconds: multiply by 1000000'), e.message)
  })

  test('highWaterMark() and restore(): never backwards', () => {
    const g = new Generator({ nodeId: 7, clock: () => T0 })
    assert.equal(g.highWaterMark(), 0n)
    const ids = g.nextIds(3)
    const mark = g.highWaterMark()
    assert.equal(typeof mark, 'bigint')
    g.restore(0n)
    g.restore(String(mark - 1n))
    assert.equal(g.highWaterMark(), mark)
    assert.equal(g.nextId(), ids[2] + 1n)
    throwsCode(assert, () => g.restore(-1n), 'INVALID_ARGUMENT', 'negative')
    throwsCode(assert, () => g.restore(2n ** 64n), 'INVALID_ARGUMENT', '2^64')
    throwsCode(assert, () => g.restore(1.5), 'INVALID_ARGUMENT', 'number')
    throwsCode(assert, () => g.restore('12x'), 'PARSE', 'text')
    assert.equal(g.highWaterMark(), mark + 1n)
  })

  test('the restart recipe: persist highWaterMark() as JSON, restore it at start', () => {
    let saved = null // stands for a file or localStorage
    const first = new Generator({ nodeId: 7, clock: () => T0 })
    const before = first.nextIds(100)
    saved = JSON.stringify({ mark: first.highWaterMark().toString() })
    // Restarted with the clock 5 s behind (NTP stepped it while the process was down).
    const second = new Generator({ nodeId: 7, clock: () => T0 - 5_000 })
    second.restore(JSON.parse(saved).mark)
    const after = second.nextIds(100)
    assert.ok(after[0] > before[99])
    // Without the mark, the same restart would mint IDs below the first run's.
    assert.ok(new Generator({ nodeId: 7, clock: () => T0 - 5_000 }).nextId() < before[0])
  })

  test('stats(): IDs, batches, borrowed ticks, regressions and waits after a scripted clock', () => {
    const script =
      (...readings) =>
      () =>
        readings.length > 1 ? readings.shift() : readings[0]
    const zero = { minted: 0, batches: 0, borrowedTicks: 0, waits: 0, waitNs: 0, regressions: 0 }
    // A full tick in one batch, an ID that borrows the next tick, the clock 5 ms back (one regression).
    const g = new Generator({ nodeId: 1, clock: script(T0, T0, T0 - 5, T0 - 4) })
    assert.deepEqual(g.stats(), zero)
    g.nextIds(4096)
    g.nextId()
    g.nextId()
    g.nextId()
    assert.deepEqual(g.stats(), { ...zero, minted: 4099, batches: 1, borrowedTicks: 1, regressions: 1 })
    // The default fail policy never sleeps: running out of room ahead is an error, not a wait.
    const f = new Generator({ nodeId: 1, clock: () => T0, maxAheadMs: 0 })
    f.nextIds(4096)
    throwsCode(assert, () => f.nextId(), 'TOO_FAR_AHEAD', 'fail policy')
    assert.deepEqual(f.stats(), { ...zero, minted: 4096, batches: 1 })
    // Under wait, the 4097th ID at T0 waits exactly 1 ms for the clock's next tick.
    const w = new Generator({ nodeId: 1, policy: 'wait', maxAheadMs: 0, clock: script(T0, T0, T0 + 1) })
    w.nextIds(4096)
    w.nextId()
    const s = w.stats()
    assert.deepEqual(s, { ...zero, minted: 4097, batches: 1, waits: 1, waitNs: 1_000_000 })
    assert.equal(JSON.stringify(s), JSON.stringify({ ...s }))
  })
}
