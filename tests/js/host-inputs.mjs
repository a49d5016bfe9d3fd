// The host-input vectors (tests/host-inputs/host_inputs.json) against a JS package: the native `snowmint`
// and `snowmint-wasm` run the same cases and must give the same result for every value
// (tests/host-inputs/README.md).
import { readFileSync } from 'node:fs'

const FILE = new URL('../host-inputs/host_inputs.json', import.meta.url)

/** The JS value a vector's typed value stands for. */
function jsValue(v) {
  const [[type, raw]] = Object.entries(v)
  switch (type) {
    case 'int':
      return Number(raw) // may exceed 2^53 - 1: some cases are about that
    case 'bigint':
      return BigInt(raw)
    case 'float':
      return Number(raw) // "NaN", "Infinity", "1.5" all parse
    case 'string':
      return raw
    case 'bool':
      return raw
    case 'null':
      return null
    case 'throw':
      return { throws: raw }
    case 'layout':
      // A custom layout's fields, each a typed value, by their Python names: camelCase here.
      return Object.fromEntries(
        Object.entries(raw).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), jsValue(v)]),
      )
    default:
      throw new Error(`unknown value type ${type}`)
  }
}

const TWITTER = 'twitter'
const SOME_MS = 1750000000000

/** Runs one case's call; returns what it returned (or throws what it threw). */
function call(api, arg, value) {
  switch (arg) {
    case 'node_id':
      return new api.Generator({ nodeId: value, layout: TWITTER })
    case 'random_seed':
      return new api.Generator({ nodeId: 1, layout: TWITTER, randomStart: true, randomSeed: value })
    case 'random_seed_no_random_start':
      return new api.Generator({ nodeId: 1, layout: TWITTER, randomStart: false, randomSeed: value })
    case 'max_ahead_ms':
      return new api.Generator({ nodeId: 1, layout: TWITTER, maxAheadMs: value })
    case 'clock': {
      const clock =
        value && typeof value === 'object' && 'throws' in value
          ? () => {
              throw new HostError(value.throws)
            }
          : () => value
      return new api.Generator({ nodeId: 1, layout: TWITTER, clock }).nextId()
    }
    case 'count':
      return new api.Generator({ nodeId: 1, layout: TWITTER, clock: () => SOME_MS }).nextIds(value)
    case 'decode':
      return api.decode(value, TWITTER)
    case 'parse_encoding':
      return api.parse('1', value)
    case 'layout':
      return new api.Layout(value)
    default:
      throw new Error(`unknown arg ${arg}`)
  }
}

class HostError extends Error {}

export function hostInputTests(api, { test, assert, flavour }) {
  const doc = JSON.parse(readFileSync(FILE, 'utf8'))
  assert.ok(doc.cases.length > 40, 'the host-input vectors are there')
  const names = new Set()
  for (const c of doc.cases) {
    assert.ok(!names.has(c.name), `duplicate case ${c.name}`)
    names.add(c.name)
    const expect = c[flavour === 'native' ? 'node' : 'wasm'] ?? c.js ?? c.expect
    test(`host input ${c.name} -> ${expect}`, () => {
      const value = jsValue(c.value)
      let result
      let made
      try {
        made = call(api, c.arg, value)
        result = 'ok'
      } catch (e) {
        if (expect === 'HOST') {
          assert.ok(e instanceof HostError, `the clock's own exception, got ${e}`)
          return
        }
        if (c.secret !== undefined) {
          // A password in the input never reaches what the error shows.
          for (const shown of [String(e?.message), String(e), String(e?.stack)]) {
            assert.ok(!shown.includes(c.secret), `${c.name}: the secret in ${shown}`)
          }
        }
        if (e instanceof TypeError && !(e instanceof api.SnowmintError)) result = 'TYPE'
        else if (e instanceof api.SnowmintError) result = e.code
        else result = `${e?.constructor?.name}: ${e?.message}`
        // One rule, one message: both packages say it in the host layer's words (snowmint_host::js).
        if (c.js_message !== undefined) assert.equal(e?.message, c.js_message, `${c.name}: the message`)
      }
      assert.equal(result, expect, `${c.name}: ${JSON.stringify(c.value)} as ${c.arg}`)
      // What the result must be, field by field (a layout's defaults), as decimal text.
      for (const [field, want] of Object.entries(c.fields ?? {})) {
        const key = field.replace(/_([a-z])/g, (_, ch) => ch.toUpperCase())
        assert.equal(String(made[key]), want, `${c.name}: ${key}`)
      }
    })
  }
}
