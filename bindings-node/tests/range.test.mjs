// RangeSequence (SPEC §4) from Node: two datacenters on the embedded store and on the real etcd and
// PostgreSQL servers test.sh starts, child processes minting at once, typed arrays, exhaustion, bad input.
// The allocation is the Rust coord crate's; these tests check that Node reaches it.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { RangeSequence, ERROR_CODES, SnowmintError } from 'snowmint'

const run = promisify(execFile)
const here = fileURLToPath(import.meta.url)
const ETCD = process.env.SNOWMINT_TEST_ETCD_URL
const POSTGRES = process.env.SNOWMINT_TEST_POSTGRES_URL
if (process.env.SNOWMINT_REQUIRE_SERVERS === '1') assert.ok(ETCD && POSTGRES, 'server URLs missing')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-node-range-'))
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }))
let n = 0
const uniq = (p) => `${p}-${process.pid}-${n++}`
// An embedded store in the temporary folder: created first, as a missing one is STORE_NOT_FOUND.
const fileStore = (name) => {
  fs.mkdirSync(path.join(tmp, name), { recursive: true })
  return `file://${tmp}/${name}`
}

// A child: `node range.test.mjs --child NAME DC GLOBAL LOCAL COUNT` prints its values as JSON.
if (process.argv[2] === '--child') {
  const [name, dc, globalStore, localStore, count] = process.argv.slice(3)
  // A long wait: the embedded store fsyncs, which can take seconds on a disk busy with builds.
  const seq = await RangeSequence.open({
    name,
    dc,
    globalStore,
    localStore,
    dcRange: 500,
    processRange: 20,
    waitMs: 30000,
  })
  const out = []
  for (let i = 0; i < Number(count); i++) out.push(seq.nextId())
  process.stdout.write(JSON.stringify(out))
  process.exit(0)
}

const GLOBALS = [
  ['file', fileStore('global')],
  ...[
    ['etcd', ETCD],
    ['postgres', POSTGRES],
  ].filter(([, u]) => u),
]

for (const [kind, globalStore] of GLOBALS) {
  test(`two datacenters, six processes, global on ${kind}: every value once, increasing per process`, async () => {
    const name = uniq('node')
    const localB = fileStore(uniq('dc-b'))
    const outs = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        run(process.execPath, [
          here,
          '--child',
          name,
          i % 2 ? 'b' : 'a',
          globalStore,
          i % 2 ? localB : globalStore,
          '300',
        ]),
      ),
    )
    const seen = new Set()
    for (const { stdout } of outs) {
      const values = JSON.parse(stdout)
      assert.equal(values.length, 300)
      for (let i = 0; i < values.length; i++) {
        assert.ok(Number.isSafeInteger(values[i]) && values[i] >= 1 && values[i] < 2 ** 31)
        if (i > 0) assert.ok(values[i] > values[i - 1], 'increasing')
        assert.ok(!seen.has(values[i]), `${values[i]} twice`)
        seen.add(values[i])
      }
    }
    assert.equal(seen.size, 1800)
  })
}

test('nextIds is a Uint32Array up to 32 bits, a Float64Array above; stats', async () => {
  const store = fileStore('typed')
  const seq = await RangeSequence.open({
    name: 's',
    dc: 'eu',
    globalStore: store,
    dcRange: 100,
    processRange: 10,
  })
  assert.ok(seq instanceof RangeSequence)
  assert.equal(seq.bits, 31)
  const { nextId } = seq // detached, it still mints from this sequence
  const first = nextId() + 1
  assert.equal(seq.nextId(), first)
  assert.equal(typeof first, 'number')
  const batch = seq.nextIds(25)
  assert.ok(batch instanceof Uint32Array)
  assert.deepEqual(
    [...batch],
    Array.from({ length: 25 }, (_, i) => first + 1 + i),
  )
  const s = seq.stats()
  assert.equal(s.values, 27)
  assert.ok(s.processRanges >= 3 && s.dcRanges >= 1)
  assert.equal(s.current.length, 2)
  const wide = await RangeSequence.open({ name: 'w', dc: 'eu', globalStore: store, bits: 40, start: 2 ** 33 })
  const w = wide.nextIds(3)
  assert.ok(w instanceof Float64Array)
  assert.deepEqual([...w], [2 ** 33, 2 ** 33 + 1, 2 ** 33 + 2])
})

test('RANGE_EXHAUSTED once the width is used up', async () => {
  const seq = await RangeSequence.open({
    name: 'x',
    dc: 'a',
    globalStore: fileStore('x'),
    bits: 4,
    start: 2,
    dcRange: 5,
    processRange: 3,
  })
  const values = []
  assert.throws(
    () => {
      for (;;) values.push(seq.nextId())
    },
    (e) => e instanceof Error && e.code === 'RANGE_EXHAUSTED',
  )
  assert.deepEqual(
    values,
    Array.from({ length: 14 }, (_, i) => i + 2),
  )
  assert.ok(ERROR_CODES.includes('RANGE_EXHAUSTED'))
})

test('bad input rejects with INVALID_ARGUMENT; an unreachable store with STORE_UNAVAILABLE', async () => {
  const globalStore = fileStore('bad')
  for (const [extra, words] of [
    [{ bits: 0 }, /width 0 bits/],
    [{ bits: 54 }, /1 to 53/],
    [{ start: 2 ** 31 }, /start value/],
    [{ bits: 8, dcRange: 1000, processRange: 10 }, /datacenter range 1000/],
    [{ dcRange: 10, processRange: 11 }, /process range 11/],
    [{ threshold: 0 }, /threshold/],
  ]) {
    assert.throws(
      () => RangeSequence.open({ name: 'n', dc: 'a', globalStore, ...extra }),
      (e) => e.code === 'INVALID_ARGUMENT' && words.test(e.message),
    )
  }
  for (const url of ['etcd://', 'postgres://host/db', 'redis://x', 'file://relative']) {
    await assert.rejects(
      RangeSequence.open({ name: 'n', dc: 'a', globalStore: url }),
      (e) => e instanceof Error && e.code === 'INVALID_ARGUMENT',
    )
  }
  for (const [name, dc] of [
    ['a/b', 'a'],
    ['n', 'a@b'],
  ]) {
    await assert.rejects(RangeSequence.open({ name, dc, globalStore }), (e) => e.code === 'INVALID_ARGUMENT')
  }
  assert.throws(
    () => RangeSequence.open({ name: 'n', dc: 'a' }),
    (e) => e instanceof TypeError,
  )
  assert.throws(
    () => RangeSequence.open({ name: 'n', dc: 'a', globalStore, bogus: 1 }),
    (e) => e instanceof TypeError && /unknown option/.test(e.message),
  )
  assert.throws(
    () => RangeSequence.open({ name: 'n', dc: 'a', globalStore, bits: -1 }),
    (e) => e instanceof SnowmintError && e.code === 'INVALID_ARGUMENT',
  )
  const dead = `etcd://127.0.0.1:${await freePort()}/x`
  await assert.rejects(
    RangeSequence.open({ name: 'n', dc: 'a', globalStore, localStore: dead }),
    (e) => e.code === 'STORE_UNAVAILABLE',
  )
})

async function freePort() {
  const net = await import('node:net')
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port
      s.close(() => resolve(p))
    })
  })
}
