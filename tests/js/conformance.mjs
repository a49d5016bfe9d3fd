// Shared JavaScript conformance runner for the `snowmint` (Node, napi-rs) and `snowmint-wasm` packages,
// which have the same API. It runs EVERY case of EVERY tests/vectors/*.json file through the package's
// public API, one node:test subtest per case, and checks every field.
//
//   import test from 'node:test'
//   import assert from 'node:assert/strict'
//   import * as api from 'snowmint'
//   import { runConformance } from '.../tests/js/conformance.mjs'
//   await runConformance(api, { test, assert, vectorsDir: '.../tests/vectors', runtime: 'node' })
//
// Record of cases run: with `runtime` given and SNOWMINT_CONFORMANCE_DIR set (Node), every case appends
// `file.json<TAB>case name<TAB>pass|fail` to $SNOWMINT_CONFORMANCE_DIR/<runtime>.txt, which
// scripts/check-conformance.py checks; or pass `record(file, name, passed)` (the browser harness does).
//
// Strictness (tests/vectors/README.md): unknown fields and duplicate names are errors, a file with no
// case is an error, an unknown file is an error, and no case is ever skipped. The format is validated
// before any subtest is registered, so a malformed corpus fails loudly rather than shrinking silently.

import { readdirSync, readFileSync } from 'node:fs'
import * as fs from 'node:fs'
import { join } from 'node:path'

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** A u64 written as a decimal string, as a bigint (throws on anything else). */
function u64(v, what) {
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]*)$/.test(v)) {
    throw new Error(`${what}: expected a u64 as a decimal string, got ${JSON.stringify(v)}`)
  }
  const b = BigInt(v)
  if (b >= 1n << 64n) throw new Error(`${what}: ${v} does not fit in 64 bits`)
  return b
}

function small(v, what) {
  if (!Number.isSafeInteger(v) || v < 0)
    throw new Error(`${what}: expected a small whole JSON number, got ${JSON.stringify(v)}`)
  return v
}

function keysOnly(obj, allowed, required, what) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
    throw new Error(`${what}: expected an object`)
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw new Error(`${what}: unknown field ${JSON.stringify(k)}`)
  }
  for (const k of required) {
    if (!(k in obj)) throw new Error(`${what}: missing field ${JSON.stringify(k)}`)
  }
}

/** Exactly one of `keys` is present. */
function oneOf(obj, keys, what) {
  const present = keys.filter((k) => k in obj)
  if (present.length !== 1)
    throw new Error(
      `${what}: expected exactly one of ${keys.join(', ')}, got ${present.join(', ') || 'none'}`,
    )
  return present[0]
}

const CUSTOM_KEYS = [
  'timestamp_bits',
  'node_bits',
  'sequence_bits',
  'order',
  'tick_ns',
  'epoch_ms',
  'node_id_offset',
  'use_sign_bit',
]

/** Validates a layout spec's shape (no API call). */
function checkLayoutSpec(spec, what) {
  if (spec && typeof spec === 'object' && 'preset' in spec) {
    if (spec.preset === 'snowcast')
      keysOnly(spec, ['preset', 'epoch_ms', 'node_count'], ['epoch_ms', 'node_count'], what)
    else if (spec.preset === 'hazelcast') keysOnly(spec, ['preset', 'node_id_offset'], [], what)
    else keysOnly(spec, ['preset'], [], what)
    if (typeof spec.preset !== 'string') throw new Error(`${what}: preset must be a string`)
    for (const k of ['epoch_ms', 'node_count', 'node_id_offset']) if (k in spec) u64(spec[k], `${what}.${k}`)
  } else {
    keysOnly(spec, CUSTOM_KEYS, CUSTOM_KEYS.slice(0, 6), what)
    for (const k of ['timestamp_bits', 'node_bits', 'sequence_bits']) small(spec[k], `${what}.${k}`)
    for (const k of ['tick_ns', 'epoch_ms', 'node_id_offset']) if (k in spec) u64(spec[k], `${what}.${k}`)
    if ('use_sign_bit' in spec && typeof spec.use_sign_bit !== 'boolean')
      throw new Error(`${what}.use_sign_bit: expected a boolean`)
  }
}

/** Builds a Layout through the public API (may throw the API's coded error). */
export function makeLayout(api, spec) {
  if ('preset' in spec) {
    if (spec.preset === 'snowcast')
      return api.Layout.snowcast(u64(spec.epoch_ms, 'epoch_ms'), u64(spec.node_count, 'node_count'))
    if (spec.preset === 'hazelcast' && 'node_id_offset' in spec)
      return api.Layout.hazelcast(u64(spec.node_id_offset, 'node_id_offset'))
    return api.Layout.preset(spec.preset)
  }
  const config = {
    timestampBits: spec.timestamp_bits,
    nodeBits: spec.node_bits,
    sequenceBits: spec.sequence_bits,
    order: spec.order,
    tickNs: u64(spec.tick_ns, 'tick_ns'),
    epochMs: u64(spec.epoch_ms, 'epoch_ms'),
  }
  if ('node_id_offset' in spec) config.nodeIdOffset = u64(spec.node_id_offset, 'node_id_offset')
  if ('use_sign_bit' in spec) config.useSignBit = spec.use_sign_bit
  return new api.Layout(config)
}

/** Asserts `fn()` throws an Error (not a string) whose `code` is `code`; returns the error. */
function expectCode(assert, fn, code, what) {
  let thrown = null
  let value
  try {
    value = fn()
  } catch (e) {
    thrown = e
  }
  assert.ok(
    thrown !== null,
    `${what}: expected error ${code}, got ${typeof value === 'bigint' ? value + 'n' : JSON.stringify(value)}`,
  )
  assert.ok(thrown instanceof Error, `${what}: thrown value is not an Error: ${String(thrown)}`)
  assert.equal(thrown.code, code, `${what}: ${thrown.message}`)
  assert.equal(typeof thrown.message, 'string')
  if (code === 'TOO_FAR_AHEAD') {
    assert.equal(typeof thrown.retryAfterMs, 'number', `${what}: TOO_FAR_AHEAD without retryAfterMs`)
    assert.ok(Number.isSafeInteger(thrown.retryAfterMs) && thrown.retryAfterMs >= 0)
  }
  return thrown
}

/** A u64 result that must be a bigint equal to `expected` (a decimal string). */
function eqId(assert, actual, expected, what) {
  assert.equal(typeof actual, 'bigint', `${what}: expected a bigint`)
  assert.equal(actual, u64(expected, what), what)
}

/** A count that is a Number at every width (a power of two, or decimal's 100 and 1): exactly the u64. */
function eqCount(assert, actual, expected, what) {
  assert.equal(typeof actual, 'number', `${what}: expected a Number`)
  assert.equal(BigInt(actual), u64(expected, what), what)
}

/** A JS Number or bigint field compared with a u64 decimal string. */
function eqNum(assert, actual, expected, what) {
  assert.ok(typeof actual === 'number' || typeof actual === 'bigint', `${what}: expected a number or bigint`)
  if (typeof actual === 'number')
    assert.ok(Number.isSafeInteger(actual), `${what}: ${actual} is not a safe integer`)
  assert.equal(BigInt(actual), u64(expected, what), what)
}

// ---------------------------------------------------------------------------------------------------
// One handler per file: `check(case)` validates the shape (throws), `run(api, assert, case)` runs it.
// ---------------------------------------------------------------------------------------------------

const LAYOUT_EXPECT = [
  'total_bits',
  'node_count',
  'ids_per_tick',
  'max_node_id',
  'max_tick',
  'lifespan_end_ms',
  'lifespan_end_iso',
  'clock_unit',
]

const layouts = {
  check(c) {
    keysOnly(c, ['name', 'layout', 'expect', 'error', 'field'], ['name', 'layout'], c.name)
    checkLayoutSpec(c.layout, `${c.name}.layout`)
    if (oneOf(c, ['expect', 'error'], c.name) === 'expect') {
      keysOnly(c.expect, LAYOUT_EXPECT, [], `${c.name}.expect`)
      if (Object.keys(c.expect).length === 0) throw new Error(`${c.name}: empty expect`)
      if ('field' in c) throw new Error(`${c.name}: field without error`)
    } else if (typeof c.field !== 'string') {
      throw new Error(`${c.name}: error case needs a field name`)
    }
  },
  run(api, assert, c) {
    if ('error' in c) {
      const e = expectCode(assert, () => makeLayout(api, c.layout), c.error, c.name)
      assert.ok(
        e.message.includes(c.field),
        `${c.name}: message ${JSON.stringify(e.message)} does not name ${c.field}`,
      )
      return
    }
    const l = makeLayout(api, c.layout)
    const x = c.expect
    if ('total_bits' in x) assert.equal(l.totalBits, small(x.total_bits, 'total_bits'))
    if ('node_count' in x) eqCount(assert, l.nodeCount, x.node_count, 'nodeCount')
    if ('ids_per_tick' in x) eqCount(assert, l.idsPerTick, x.ids_per_tick, 'idsPerTick')
    if ('max_node_id' in x) eqId(assert, l.maxNodeId, x.max_node_id, 'maxNodeId')
    if ('max_tick' in x) eqId(assert, l.maxTick, x.max_tick, 'maxTick')
    if ('lifespan_end_ms' in x) eqId(assert, l.lifespanEndMs, x.lifespan_end_ms, 'lifespanEndMs')
    if ('lifespan_end_iso' in x) assert.equal(l.lifespanEndIso, x.lifespan_end_iso)
    if ('clock_unit' in x) assert.equal(l.clockUnit, x.clock_unit)
    // The spec's fields read back as given.
    if (!('preset' in c.layout)) {
      assert.equal(l.timestampBits, c.layout.timestamp_bits)
      assert.equal(l.nodeBits, c.layout.node_bits)
      assert.equal(l.sequenceBits, c.layout.sequence_bits)
      assert.equal(l.order, c.layout.order)
      eqId(assert, l.tickNs, c.layout.tick_ns, 'tickNs')
      eqId(assert, l.epochMs, c.layout.epoch_ms, 'epochMs')
      assert.equal(l.name, null)
    } else {
      assert.equal(l.name, c.layout.preset === 'chronicle' ? 'decimal' : c.layout.preset)
    }
  },
}

/** A reading string as the clock returns it: a Number when exact, else a bigint (both are accepted). */
export function reading(s) {
  const b = u64(s, 'clock reading')
  return b <= MAX_SAFE ? Number(b) : b
}

const STEP_KEYS = ['clock', 'op', 'count', 'ids', 'first', 'last', 'error']

const generate = {
  check(c) {
    keysOnly(
      c,
      ['name', 'layout', 'node_id', 'policy', 'max_ahead_ms', 'random_seed', 'steps', 'error'],
      ['name', 'layout', 'node_id'],
      c.name,
    )
    checkLayoutSpec(c.layout, `${c.name}.layout`)
    u64(c.node_id, 'node_id')
    if ('policy' in c && !['wait', 'fail', 'strict'].includes(c.policy))
      throw new Error(`${c.name}: bad policy`)
    if ('max_ahead_ms' in c) u64(c.max_ahead_ms, 'max_ahead_ms')
    if ('random_seed' in c) u64(c.random_seed, 'random_seed')
    if (oneOf(c, ['steps', 'error'], c.name) === 'error') return
    if (!Array.isArray(c.steps) || c.steps.length === 0)
      throw new Error(`${c.name}: steps must be a non-empty array`)
    c.steps.forEach((s, i) => {
      const w = `${c.name}.steps[${i}]`
      if (s.op === 'state' || s.op === 'restore') {
        keysOnly(s, ['op', 'state'], ['op', 'state'], w)
        u64(s.state, `${w}.state`)
        return
      }
      keysOnly(s, STEP_KEYS, ['clock', 'op', 'count'], w)
      if (!Array.isArray(s.clock) || s.clock.length === 0)
        throw new Error(`${w}: clock must be a non-empty array`)
      s.clock.forEach((r) => u64(r, `${w}.clock`))
      if (s.op !== 'next' && s.op !== 'batch') throw new Error(`${w}: bad op ${s.op}`)
      small(s.count, `${w}.count`)
      const kind = oneOf(s, ['ids', 'first', 'error'], w)
      if (kind === 'ids') {
        if (!Array.isArray(s.ids) || s.ids.length !== s.count)
          throw new Error(`${w}: ids must hold count IDs`)
        s.ids.forEach((id) => u64(id, `${w}.ids`))
      }
      if (kind === 'first') u64(s.last, `${w}.last`)
      if ('last' in s && kind !== 'first') throw new Error(`${w}: last without first`)
    })
  },
  run(api, assert, c) {
    let script = []
    let at = 0
    let reads = 0
    const clock = () => {
      reads++
      const r = script[Math.min(at, script.length - 1)]
      at++
      return reading(r)
    }
    const options = { nodeId: u64(c.node_id, 'node_id'), clock, policy: c.policy ?? 'wait' }
    if ('max_ahead_ms' in c) options.maxAheadMs = u64(c.max_ahead_ms, 'max_ahead_ms')
    if ('random_seed' in c) options.randomSeed = u64(c.random_seed, 'random_seed')
    if ('error' in c) {
      expectCode(
        assert,
        () => new api.Generator({ ...options, layout: makeLayout(api, c.layout) }),
        c.error,
        c.name,
      )
      return
    }
    const gen = new api.Generator({ ...options, layout: makeLayout(api, c.layout) })
    assert.equal(gen.policy ?? options.policy, options.policy)
    c.steps.forEach((s, i) => {
      const w = `${c.name}.steps[${i}]`
      if (s.op === 'state') {
        const mark = gen.highWaterMark()
        assert.equal(typeof mark, 'bigint', `${w}: highWaterMark() must be a bigint`)
        eqId(assert, mark, s.state, `${w}: highWaterMark()`)
        return
      }
      if (s.op === 'restore') {
        // Alternate the two input types: bigint, and the decimal string a file would hold.
        gen.restore(i % 2 ? u64(s.state, `${w}.state`) : s.state)
        return
      }
      script = s.clock
      at = 0
      if ('error' in s) {
        if (s.op === 'next') expectCode(assert, () => gen.nextId(), s.error, w)
        else expectCode(assert, () => gen.nextIds(s.count), s.error, w)
        return
      }
      let ids
      if (s.op === 'next') {
        ids = []
        for (let k = 0; k < s.count; k++) ids.push(gen.nextId())
      } else {
        const arr = gen.nextIds(s.count)
        assert.ok(arr instanceof BigUint64Array, `${w}: nextIds must return a BigUint64Array`)
        ids = Array.from(arr)
      }
      assert.equal(ids.length, s.count, `${w}: count`)
      if ('ids' in s) {
        ids.forEach((id, k) => eqId(assert, id, s.ids[k], `${w}.ids[${k}]`))
      } else {
        eqId(assert, ids[0], s.first, `${w}.first`)
        eqId(assert, ids[ids.length - 1], s.last, `${w}.last`)
      }
      for (let k = 1; k < ids.length; k++) {
        if (!(ids[k] > ids[k - 1]))
          assert.fail(`${w}: IDs not strictly increasing at ${k}: ${ids[k - 1]} then ${ids[k]}`)
      }
    })
    assert.ok(reads > 0, `${c.name}: the injected clock was never read`)
  },
}

// An ID as strings decode() takes: 0x-hex always; decimal unless it has a fixed width of another form
// (16, 13 or 11 digits), which parsing by shape refuses as ambiguous (encodings.json checks that).
function idStrings(text, id) {
  return [16, 13, 11].includes(text.length) ? ['0x' + id.toString(16)] : [text, '0x' + id.toString(16)]
}

function jsonReading(r, what) {
  if (typeof r === 'number') return r
  if (r === 'NaN') return NaN
  if (r === 'Infinity') return Infinity
  if (r === '-Infinity') return -Infinity
  throw new Error(`${what}: bad reading ${JSON.stringify(r)}`)
}

const clockReadings = {
  check(c) {
    keysOnly(c, ['name', 'layout', 'reading', 'error', 'ns'], ['name', 'layout', 'reading'], c.name)
    checkLayoutSpec(c.layout, `${c.name}.layout`)
    jsonReading(c.reading, c.name)
    if (oneOf(c, ['error', 'ns'], c.name) === 'ns') u64(c.ns, `${c.name}.ns`)
  },
  run(api, assert, c) {
    const layout = makeLayout(api, c.layout)
    const r = jsonReading(c.reading, c.name)
    if ('error' in c) {
      const gen = new api.Generator({ nodeId: 0, layout, clock: () => r, policy: 'fail' })
      expectCode(assert, () => gen.nextId(), c.error, c.name)
      expectCode(assert, () => gen.nextIds(2), c.error, `${c.name} (nextIds)`)
      return
    }
    // A good reading: read it back exactly through a probe layout with the same clock unit whose IDs are
    // the reading itself (ns unit: 1 ns ticks from epoch 0; ms unit: 1 ms ticks from epoch 0).
    const ns = u64(c.ns, 'ns')
    const unit = layout.clockUnit
    const probe =
      unit === 'ns'
        ? new api.Layout({
            timestampBits: 64,
            nodeBits: 0,
            sequenceBits: 0,
            order: 'timestamp_node_sequence',
            tickNs: 1n,
            epochMs: 0n,
            useSignBit: true,
          })
        : new api.Layout({
            timestampBits: 63,
            nodeBits: 0,
            sequenceBits: 0,
            order: 'timestamp_node_sequence',
            tickNs: 1000000n,
            epochMs: 0n,
          })
    const pg = new api.Generator({ nodeId: 0, layout: probe, clock: () => r, policy: 'fail' })
    const id = pg.nextId()
    assert.equal(unit === 'ns' ? id : id * 1000000n, ns, `${c.name}: reading read as ${id} in ${unit}`)
    // Under the case's own layout the reading is accepted as a clock value: any error is about the
    // instant (before the epoch, past the lifespan), never INVALID_CLOCK.
    const gen = new api.Generator({ nodeId: 0, layout, clock: () => r, policy: 'fail' })
    try {
      const got = gen.nextId()
      const epochNs = layout.epochMs * 1000000n
      assert.equal(api.decode(got, layout).timestampTicks, (ns - epochNs) / layout.tickNs)
    } catch (e) {
      if (!(e instanceof Error) || !['CLOCK_BEFORE_EPOCH', 'LAYOUT_EXHAUSTED'].includes(e.code)) throw e
      const epochNs = layout.epochMs * 1000000n
      assert.equal(
        e.code,
        ns < epochNs ? 'CLOCK_BEFORE_EPOCH' : 'LAYOUT_EXHAUSTED',
        `${c.name}: ${e.message}`,
      )
    }
  },
}

const DECODE_EXPECT = ['timestamp_ticks', 'unix_ms', 'sub_ms_ns', 'node', 'sequence', 'iso']

const decode = {
  check(c) {
    keysOnly(c, ['name', 'layout', 'id', 'expect', 'error'], ['name', 'layout', 'id'], c.name)
    checkLayoutSpec(c.layout, `${c.name}.layout`)
    u64(c.id, `${c.name}.id`)
    if (oneOf(c, ['expect', 'error'], c.name) === 'expect') {
      keysOnly(c.expect, DECODE_EXPECT, [], `${c.name}.expect`)
      if (Object.keys(c.expect).length === 0) throw new Error(`${c.name}: empty expect`)
    }
  },
  run(api, assert, c) {
    const layout = makeLayout(api, c.layout)
    const id = u64(c.id, 'id')
    if ('error' in c) {
      expectCode(assert, () => api.decode(id, layout), c.error, c.name)
      for (const s of idStrings(c.id, id))
        expectCode(assert, () => api.decode(s, layout), c.error, `${c.name} (string id ${s})`)
      return
    }
    const d = api.decode(id, layout)
    const x = c.expect
    eqId(assert, d.id, c.id, 'id')
    if ('timestamp_ticks' in x) eqId(assert, d.timestampTicks, x.timestamp_ticks, 'timestampTicks')
    if ('unix_ms' in x) eqNum(assert, d.timestampMs, x.unix_ms, 'timestampMs')
    if ('sub_ms_ns' in x) assert.equal(d.subMsNs, small(x.sub_ms_ns, 'sub_ms_ns'))
    if ('node' in x) eqNum(assert, d.nodeId, x.node, 'nodeId')
    if ('sequence' in x) eqNum(assert, d.sequence, x.sequence, 'sequence')
    if ('iso' in x) assert.equal(d.iso, x.iso)
    assert.ok(d.date instanceof Date, 'date is a Date')
    // timestampMs is a bigint where the layout's last millisecond passes 2^53 - 1; a Date holds less.
    assert.equal(d.date.getTime(), Number(d.timestampMs), 'date holds timestampMs')
    // The same ID as a string decodes the same.
    for (const text of idStrings(c.id, id)) {
      const s = api.decode(text, layout)
      assert.equal(s.id, d.id)
      assert.equal(s.iso, d.iso)
    }
    // Decoded fields compose back to the ID (within the layout's tick range: a decimal ID's top values
    // decode to a tick past what a generator may mint).
    if (d.timestampTicks <= layout.maxTick)
      assert.equal(
        api.compose({ timestampTicks: d.timestampTicks, nodeId: d.nodeId, sequence: d.sequence }, layout),
        id,
      )
  },
}

const composeFile = {
  check(c) {
    if (c.op === 'compose') {
      keysOnly(
        c,
        ['name', 'layout', 'op', 'timestamp_ticks', 'node', 'sequence', 'id', 'error'],
        ['name', 'layout', 'op', 'timestamp_ticks', 'node', 'sequence'],
        c.name,
      )
      for (const k of ['timestamp_ticks', 'node', 'sequence']) u64(c[k], `${c.name}.${k}`)
    } else if (c.op === 'min_id_at') {
      keysOnly(
        c,
        ['name', 'layout', 'op', 'unix_ms', 'id', 'error'],
        ['name', 'layout', 'op', 'unix_ms'],
        c.name,
      )
      u64(c.unix_ms, `${c.name}.unix_ms`)
    } else {
      throw new Error(`${c.name}: unknown op ${JSON.stringify(c.op)}`)
    }
    checkLayoutSpec(c.layout, `${c.name}.layout`)
    if (oneOf(c, ['id', 'error'], c.name) === 'id') u64(c.id, `${c.name}.id`)
  },
  run(api, assert, c) {
    const layout = makeLayout(api, c.layout)
    const call =
      c.op === 'compose'
        ? () =>
            api.compose(
              {
                timestampTicks: u64(c.timestamp_ticks, 't'),
                nodeId: u64(c.node, 'n'),
                sequence: u64(c.sequence, 's'),
              },
              layout,
            )
        : () => api.minIdAt(u64(c.unix_ms, 'unix_ms'), layout)
    if ('error' in c) {
      expectCode(assert, call, c.error, c.name)
      return
    }
    eqId(assert, call(), c.id, c.name)
    if (c.op === 'min_id_at') {
      const ms = u64(c.unix_ms, 'unix_ms')
      if (ms <= MAX_SAFE) {
        eqId(assert, api.minIdAt(Number(ms), layout), c.id, `${c.name} (number)`)
        if (ms <= 8640000000000000n)
          eqId(assert, api.minIdAt(new Date(Number(ms)), layout), c.id, `${c.name} (Date)`)
      }
    }
  },
}

const FORMS = ['dec', 'hex', 'base32', 'base58']

const encodings = {
  check(c) {
    if (c.op === 'encode') {
      keysOnly(c, ['name', 'op', 'id', ...FORMS], ['name', 'op', 'id'], c.name)
      u64(c.id, `${c.name}.id`)
      if (!FORMS.some((f) => f in c)) throw new Error(`${c.name}: no form to check`)
      for (const f of FORMS)
        if (f in c && typeof c[f] !== 'string') throw new Error(`${c.name}.${f}: expected a string`)
    } else if (c.op === 'parse') {
      keysOnly(
        c,
        ['name', 'op', 'encoding', 'input', 'id', 'error', 'position', 'readings'],
        ['name', 'op', 'encoding', 'input'],
        c.name,
      )
      if ('readings' in c) {
        if (!('error' in c) || c.encoding !== 'any')
          throw new Error(`${c.name}: readings belong to an ambiguous "any" error`)
        for (const [form, v] of Object.entries(c.readings)) {
          if (!FORMS.includes(form)) throw new Error(`${c.name}: bad reading form ${form}`)
          u64(v, `${c.name}.readings.${form}`)
        }
      }
      if (![...FORMS, 'any'].includes(c.encoding)) throw new Error(`${c.name}: bad encoding`)
      if (typeof c.input !== 'string') throw new Error(`${c.name}: input must be a string`)
      if (oneOf(c, ['id', 'error'], c.name) === 'id') {
        u64(c.id, `${c.name}.id`)
        if ('position' in c) throw new Error(`${c.name}: position without error`)
      } else if ('position' in c) {
        small(c.position, `${c.name}.position`)
      }
    } else {
      throw new Error(`${c.name}: unknown op ${JSON.stringify(c.op)}`)
    }
  },
  run(api, assert, c) {
    if (c.op === 'encode') {
      const id = u64(c.id, 'id')
      for (const f of FORMS) {
        if (!(f in c)) continue
        assert.equal(api.encode(id, f), c[f], `${c.name}: encode ${f}`)
        eqId(assert, api.parse(c[f], f), c.id, `${c.name}: parse ${f}`)
      }
      if ('dec' in c) assert.equal(api.encode(id), c.dec, `${c.name}: default encoding is dec`)
      return
    }
    const call = () => api.parse(c.input, c.encoding)
    if ('error' in c) {
      const e = expectCode(assert, call, c.error, c.name)
      if ('position' in c) {
        if ('position' in e) assert.equal(e.position, c.position, `${c.name}: position (${e.message})`)
        else assert.match(e.message, new RegExp(`position ${c.position}\\b`), `${c.name}: position`)
      }
      // An ambiguous string: the message names every reading (form and value); nothing was chosen.
      for (const [form, v] of Object.entries(c.readings ?? {})) {
        assert.ok(
          e.message.includes(`${form} ${v}`),
          `${c.name}: ${JSON.stringify(e.message)} does not name ${form} ${v}`,
        )
        eqId(assert, api.parse(c.input, form), v, `${c.name}: parse as ${form}`)
      }
      return
    }
    eqId(assert, call(), c.id, c.name)
    if (c.encoding === 'any') eqId(assert, api.parse(c.input), c.id, `${c.name}: default encoding is any`)
  },
}

/** Bytes from a hex string (the vectors' keys). */
function hexBytes(hex, what) {
  if (typeof hex !== 'string' || !/^([0-9a-f]{2})*$/.test(hex))
    throw new Error(`${what}: expected lowercase hex bytes`)
  return Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16))
}

const opaque = {
  check(c) {
    keysOnly(
      c,
      ['name', 'layout', 'key', 'bits', 'error', 'op', 'input', 'ids', 'tokens'],
      ['name', 'layout', 'key'],
      c.name,
    )
    checkLayoutSpec(c.layout, `${c.name}.layout`)
    hexBytes(c.key, `${c.name}.key`)
    if (!('bits' in c)) {
      keysOnly(c, ['name', 'layout', 'key', 'error'], ['error'], c.name)
    } else if ('op' in c) {
      keysOnly(
        c,
        ['name', 'layout', 'key', 'bits', 'op', 'input', 'error'],
        ['bits', 'op', 'input', 'error'],
        c.name,
      )
      if (!['encode', 'decode'].includes(c.op))
        throw new Error(`${c.name}: unknown op ${JSON.stringify(c.op)}`)
      u64(c.input, `${c.name}.input`)
    } else {
      keysOnly(c, ['name', 'layout', 'key', 'bits', 'ids', 'tokens'], ['bits', 'ids', 'tokens'], c.name)
      if (
        !Array.isArray(c.ids) ||
        !Array.isArray(c.tokens) ||
        c.ids.length === 0 ||
        c.ids.length !== c.tokens.length
      ) {
        throw new Error(`${c.name}: ids and tokens must be arrays of one length`)
      }
      c.ids.forEach((x, i) => u64(x, `${c.name}.ids[${i}]`))
      c.tokens.forEach((x, i) => u64(x, `${c.name}.tokens[${i}]`))
    }
    if ('bits' in c) small(c.bits, `${c.name}.bits`)
  },
  run(api, assert, c) {
    const key = hexBytes(c.key, 'key')
    const layout = makeLayout(api, c.layout)
    if (!('bits' in c)) {
      expectCode(assert, () => new api.Opaque({ key, layout }), c.error, c.name)
      return
    }
    const o = new api.Opaque({ key, layout })
    assert.equal(o.bits, c.bits, `${c.name}: bits`)
    if ('op' in c) {
      const input = u64(c.input, 'input')
      expectCode(assert, () => o[c.op](input), c.error, `${c.name}: ${c.op}`)
      expectCode(assert, () => o[`${c.op}Many`](BigUint64Array.of(input)), c.error, `${c.name}: ${c.op}Many`)
      return
    }
    c.ids.forEach((id, i) => {
      eqId(assert, o.encode(u64(id, 'id')), c.tokens[i], `${c.name}: encode(${id})`)
      eqId(assert, o.decode(u64(c.tokens[i], 'token')), id, `${c.name}: decode(${c.tokens[i]})`)
      const text = o.encodeString(u64(id, 'id'), 'base58')
      assert.equal(text, api.encode(u64(c.tokens[i], 'token'), 'base58'), `${c.name}: encodeString`)
      eqId(assert, o.decodeString(text, 'base58'), id, `${c.name}: decodeString`)
    })
    const ids = BigUint64Array.from(c.ids, (x) => u64(x, 'id'))
    const tokens = o.encodeMany(ids)
    assert.deepEqual([...tokens].map(String), c.tokens, `${c.name}: encodeMany`)
    assert.deepEqual([...o.decodeMany(tokens)].map(String), c.ids, `${c.name}: decodeMany`)
  },
}

/** Sets the case's variables (null: unsets) in `process.env`; returns a function that restores them. */
function setEnv(env) {
  const saved = Object.keys(env).map((k) => [
    k,
    Object.prototype.hasOwnProperty.call(process.env, k) ? process.env[k] : null,
  ])
  const put = ([k, v]) => {
    if (v === null) delete process.env[k]
    else process.env[k] = v
  }
  Object.entries(env).forEach(put)
  return () => saved.reverse().forEach(put)
}

/** Awaits `promise`, which must reject with an Error whose `code` is `code`. */
async function expectRejection(assert, promise, code, what) {
  let value
  try {
    value = await promise
  } catch (e) {
    assert.ok(e instanceof Error, `${what}: rejected with a non-Error: ${String(e)}`)
    assert.equal(e.code, code, `${what}: ${e.message}`)
    return
  }
  await value?.close?.()
  assert.fail(`${what}: expected error ${code}, got a generator with node ID ${value?.nodeId}`)
}

// Node: `Generator.open` (every source) and, for sources without `://`, the constructor. WASM (no
// `Generator.open`: numbers only) must refuse every string source with INVALID_ARGUMENT (README).
const nodeSources = {
  check(c) {
    keysOnly(c, ['name', 'layout', 'source', 'env', 'node_id', 'error'], ['name', 'layout', 'source'], c.name)
    checkLayoutSpec(c.layout, `${c.name}.layout`)
    if (typeof c.source !== 'string') throw new Error(`${c.name}: source must be a string`)
    if (oneOf(c, ['node_id', 'error'], c.name) === 'node_id') u64(c.node_id, `${c.name}.node_id`)
    if ('env' in c) {
      if (c.env === null || typeof c.env !== 'object' || Array.isArray(c.env))
        throw new Error(`${c.name}.env: expected an object`)
      for (const [k, v] of Object.entries(c.env)) {
        if (v !== null && typeof v !== 'string')
          throw new Error(`${c.name}.env.${k}: expected a string or null`)
      }
    }
  },
  async run(api, assert, c) {
    const layout = makeLayout(api, c.layout)
    if (typeof api.Generator.open !== 'function' || api.backend === 'wasm') {
      // WASM (snowmint-wasm, or the native package's WebAssembly fallback): a node ID in decimal is the one node source a browser has (the native package's result);
      // every other source needs a host or a store, and is INVALID_ARGUMENT.
      const make = () => new api.Generator({ nodeId: c.source, layout })
      const what = `${c.name} (WASM)`
      if (!/^\s*[0-9]+\s*$/.test(c.source)) expectCode(assert, make, 'INVALID_ARGUMENT', what)
      else if ('error' in c) expectCode(assert, make, c.error, what)
      else eqNum(assert, make().nodeId, c.node_id, `${what}: nodeId`)
      return
    }
    const restore = setEnv(c.env ?? {})
    try {
      const ways = [['Generator.open', () => api.Generator.open({ nodeId: c.source, layout })]]
      if (!c.source.includes('://'))
        ways.push(['new Generator', async () => new api.Generator({ nodeId: c.source, layout })])
      for (const [how, make] of ways) {
        const what = `${c.name} (${how})`
        if ('error' in c) {
          await expectRejection(assert, make(), c.error, what)
          continue
        }
        const gen = await make()
        try {
          eqNum(assert, gen.nodeId, c.node_id, `${what}: nodeId`)
        } finally {
          await gen.close?.()
        }
      }
    } finally {
      restore()
    }
  },
}

const HANDLERS = {
  'layouts.json': layouts,
  'generate.json': generate,
  'clock_readings.json': clockReadings,
  'decode.json': decode,
  'compose.json': composeFile,
  'encodings.json': encodings,
  'opaque.json': opaque,
  'node_sources.json': nodeSources,
}

/**
 * The recorder for `runtime` when SNOWMINT_CONFORMANCE_DIR is set (in Node), else null: appends one
 * line `file.json<TAB>case name<TAB>pass|fail` per case to $SNOWMINT_CONFORMANCE_DIR/<runtime>.txt.
 */
export function envRecorder(runtime) {
  const dir = globalThis.process?.env?.SNOWMINT_CONFORMANCE_DIR
  if (!dir || !runtime) return null
  if (!/^[a-z][a-z0-9-]*$/.test(runtime)) throw new Error(`bad runtime name ${JSON.stringify(runtime)}`)
  fs.mkdirSync(dir, { recursive: true })
  const path = join(dir, `${runtime}.txt`)
  return (file, name, passed) => fs.appendFileSync(path, `${file}\t${name}\t${passed ? 'pass' : 'fail'}\n`)
}

/**
 * Registers one node:test subtest per vector case (grouped per file) and returns the number of cases.
 * `api` is the package's module object; `test` and `assert` are node:test's and node:assert/strict's.
 */
export async function runConformance(api, { test, assert, vectorsDir, runtime, record }) {
  if (!record && !runtime && globalThis.process?.env?.SNOWMINT_CONFORMANCE_DIR) {
    throw new Error('SNOWMINT_CONFORMANCE_DIR is set: runConformance needs a runtime name to record under')
  }
  record = record ?? envRecorder(runtime)
  const files = readdirSync(vectorsDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
  if (files.length === 0) throw new Error(`no vector files in ${vectorsDir}`)
  const plan = files.map((file) => {
    const handler = HANDLERS[file]
    if (!handler) throw new Error(`${file}: unknown vector file (no runner for it)`)
    const doc = JSON.parse(readFileSync(join(vectorsDir, file), 'utf8'))
    keysOnly(doc, ['cases'], ['cases'], file)
    if (!Array.isArray(doc.cases) || doc.cases.length === 0) throw new Error(`${file}: holds no case`)
    const seen = new Set()
    for (const c of doc.cases) {
      if (!c || typeof c.name !== 'string' || c.name === '') throw new Error(`${file}: a case without a name`)
      if (seen.has(c.name)) throw new Error(`${file}: duplicate case name ${JSON.stringify(c.name)}`)
      seen.add(c.name)
      handler.check(c)
    }
    return { file, handler, cases: doc.cases }
  })
  let total = 0
  let ran = 0
  for (const { file, handler, cases } of plan) {
    total += cases.length
    await test(`conformance ${file} (${cases.length} cases)`, async (t) => {
      for (const c of cases) {
        await t.test(c.name, async () => {
          try {
            await handler.run(api, assert, c)
          } catch (e) {
            record?.(file, c.name, false)
            throw e
          }
          record?.(file, c.name, true)
          ran++
        })
      }
    })
  }
  await test('conformance: every case ran', () => {
    assert.equal(ran, total, `${total - ran} of ${total} vector cases did not pass`)
  })
  return total
}
