// Node sources, leases and sequencers against the embedded store and the real etcd and PostgreSQL
// servers test.sh starts (scripts/servers.sh). Every decision is the Rust coord crate's; these tests
// check that Node reaches it without blocking the event loop, with Errors carrying the Rust codes.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'
import { Generator, Sequencer, decode } from 'snowmint'

const here = path.dirname(fileURLToPath(import.meta.url))
const ETCD = process.env.SNOWMINT_TEST_ETCD_URL
const POSTGRES = process.env.SNOWMINT_TEST_POSTGRES_URL
if (process.env.SNOWMINT_REQUIRE_SERVERS === '1') assert.ok(ETCD && POSTGRES, 'server URLs missing')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-node-coord-'))
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }))
const FILE = `file://${tmp}/store`
fs.mkdirSync(path.join(tmp, 'store'))
const SERVERS = [
  ['etcd', ETCD],
  ['postgres', POSTGRES],
].filter(([, u]) => u)
const STORES = [['file', FILE], ...SERVERS]
let n = 0
const uniq = (p) => `${p}-${process.pid}-${n++}`
const withParams = (url, q) => `${url}${url.includes('?') ? '&' : '?'}${q}`

function readIds(file) {
  const b = fs.readFileSync(file)
  return new BigUint64Array(b.buffer, b.byteOffset, Math.floor(b.length / 8))
}

test('the synchronous constructor takes numbers and env/k8s/ip, and names open() for lease sources', () => {
  process.env.SNOWMINT_NODE_ID = '12'
  assert.equal(new Generator({ nodeId: 'env' }).nodeId, 12)
  assert.equal(new Generator({ nodeId: '7' }).nodeId, 7)
  const g = new Generator({ nodeId: 5 })
  assert.equal(g.state, 'attached')
  assert.equal(g.lease, null)
  for (const src of [FILE, 'etcd://127.0.0.1:2379/x', 'postgres://u@h/db']) {
    assert.throws(
      () => new Generator({ nodeId: src }),
      (e) => e instanceof Error && e.code === 'INVALID_ARGUMENT' && /Generator\.open/.test(e.message),
    )
  }
  process.env.SNOWMINT_NODE_ID = '4096'
  assert.throws(() => new Generator({ nodeId: 'env' }), { code: 'NODE_ID_OUT_OF_RANGE' })
  delete process.env.SNOWMINT_NODE_ID
})

test('bad sources reject with the same codes as Rust', async () => {
  const cases = [
    ['', 'INVALID_ARGUMENT'],
    ['zookeeper://h:2181/x', 'INVALID_ARGUMENT'],
    ['file://relative', 'INVALID_ARGUMENT'],
    ['file:///tmp/x?ttl=0s', 'INVALID_ARGUMENT'],
    ['file:///tmp/x?sequencer=.bad', 'INVALID_ARGUMENT'],
    ['etcd://127.0.0.1:1/x?ttl=1s', 'STORE_UNAVAILABLE'],
    ['postgres://u@127.0.0.1:1/db?ttl=1s', 'STORE_UNAVAILABLE'],
    ['4096', 'NODE_ID_OUT_OF_RANGE'],
    ['99999999999999999999', 'INVALID_ARGUMENT'],
  ]
  for (const [src, code] of cases) {
    await assert.rejects(Generator.open({ nodeId: src }), (e) => e instanceof Error && e.code === code, src)
  }
  await assert.rejects(Generator.open({ nodeId: 'file:///tmp/x', clock: () => 1 }), {
    code: 'INVALID_ARGUMENT',
  })
  await assert.rejects(Sequencer.create('.bad', { store: FILE }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(Sequencer.create('zero', { store: FILE, nodeCount: 0 }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(Sequencer.open('missing', { store: FILE }), { code: 'SEQUENCER_NOT_FOUND' })
  // A store path that does not exist is refused, nothing is written; Sequencer.create creates it.
  const missing = path.join(tmp, 'nonexistent', 'x')
  await assert.rejects(
    Generator.open({ nodeId: `file://${missing}?sequencer=orders` }),
    (e) => e.code === 'STORE_NOT_FOUND' && /sequencer create/.test(e.message),
  )
  assert.equal(fs.existsSync(path.join(tmp, 'nonexistent')), false)
  assert.throws(() => Sequencer.create('x', { store: 7 }), { code: 'INVALID_ARGUMENT' })
})

test('the event loop keeps running while a claim waits on a store that never answers', async () => {
  const net = await import('node:net')
  const sockets = []
  const server = net.createServer((s) => sockets.push(s)) // accepts, never answers
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  let ticks = 0
  const timer = setInterval(() => {
    ticks++
  }, 5)
  const start = Date.now()
  await assert.rejects(Generator.open({ nodeId: `etcd://127.0.0.1:${server.address().port}/x?ttl=1s` }), {
    code: 'STORE_UNAVAILABLE',
  })
  const elapsed = Date.now() - start
  clearInterval(timer)
  for (const s of sockets) s.destroy()
  server.close()
  assert.ok(elapsed > 500, `the claim waited ${elapsed} ms`)
  assert.ok(ticks > elapsed / 5 / 4, `only ${ticks} timer ticks in ${elapsed} ms: the event loop was blocked`)
})

/** A new twitter-layout sequencer of every node ID on `store` (only `default` is created on first use). */
async function created(store, tag) {
  const name = uniq(tag)
  await Sequencer.create(name, { store, layout: 'twitter', nodeCount: 1024 })
  return name
}

for (const [kind, url] of STORES) {
  test(`${kind}: a missing sequencer is SEQUENCER_NOT_FOUND, naming the one meant; nothing is created`, async () => {
    const name = await created(url, 'orders')
    const typo = name.replace('orders', 'ordres')
    await assert.rejects(Generator.open({ nodeId: withParams(url, `sequencer=${typo}&ttl=2s`) }), (e) => {
      assert.equal(e.code, 'SEQUENCER_NOT_FOUND')
      assert.ok(e.message.includes(name), e.message)
      return true
    })
    assert.ok(!(await Sequencer.list({ store: url })).includes(typo))
  })

  test(`${kind}: open, lease, detach/attach, close`, async () => {
    const g = await Generator.open({
      nodeId: withParams(url, `sequencer=${await created(url, 'node')}&ttl=2s`),
    })
    assert.ok(g instanceof Generator)
    assert.equal(g.state, 'attached')
    const lease = g.lease
    assert.equal(lease.nodeId, g.nodeId)
    assert.equal(typeof lease.fencingToken, 'bigint')
    assert.ok(lease.expiresAt instanceof Date && lease.expiresAt.getTime() > Date.now() - 1000)
    const a = g.nextId()
    const batch = g.nextIds(1000)
    assert.ok(batch[0] > a && decode(a).nodeId === g.nodeId)
    await g.detach()
    assert.equal(g.state, 'detached')
    assert.equal(g.lease, null)
    assert.throws(
      () => g.nextId(),
      (e) => e instanceof Error && e.code === 'LEASE_LOST',
    )
    await g.attach()
    assert.ok(g.nextId() > batch[999])
    await g.close()
    assert.equal(g.state, 'detached')
  })

  test(`${kind}: sequencer lifecycle (create, conflict, exhausted, detach/attach, destroyed by another process, re-create)`, async () => {
    const store = withParams(url, 'ttl=1s')
    const name = uniq('life')
    const seq = await Sequencer.create(name, { store, layout: 'twitter', nodeCount: 2 })
    assert.equal(seq.name, name)
    assert.equal(seq.nodeCount, 2)
    assert.equal(inspect(seq), `Sequencer { name: '${name}', nodeCount: 2, layout: 'twitter' }`)
    assert.ok((await Sequencer.list({ store })).includes(name))
    await Sequencer.create(name, { store, layout: 'twitter', nodeCount: 2 })
    await assert.rejects(Sequencer.create(name, { store, nodeCount: 3 }), { code: 'SEQUENCER_CONFLICT' })
    const [a, b] = [await seq.attach(), await seq.attach()]
    assert.deepEqual([a.nodeId, b.nodeId].sort(), [0, 1])
    await assert.rejects(seq.attach(), { code: 'NODE_IDS_EXHAUSTED' })
    const last = a.nextId()
    const script = `const {Sequencer}=require('snowmint');Sequencer.open(${JSON.stringify(name)},{store:${JSON.stringify(store)}}).then(s=>s.destroy())`
    execFileSync(process.execPath, ['-e', script], { cwd: process.cwd(), timeout: 30_000 })
    const deadline = Date.now() + 10_000
    while ((a.state !== 'destroyed' || b.state !== 'destroyed') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20))
    assert.equal(a.state, 'destroyed')
    assert.throws(
      () => a.nextId(),
      (e) => e instanceof Error && e.code === 'SEQUENCER_DESTROYED',
    )
    await assert.rejects(a.attach(), { code: 'SEQUENCER_DESTROYED' })
    await a.close()
    await b.close()
    assert.ok(!(await Sequencer.list({ store })).includes(name))
    const again = await Sequencer.create(name, { store, nodeCount: 2 })
    const c = await again.attach()
    assert.ok(c.nextId() > last)
    await again.destroy()
    await c.close()
  })
}

for (const [kind, url] of SERVERS) {
  test(`${kind}: 4 cluster workers and 4 worker_threads claim distinct node IDs, no duplicate`, async () => {
    const dir = fs.mkdtempSync(path.join(tmp, `cluster-${kind}-`))
    const src = withParams(url, `sequencer=${await created(url, 'fleet')}&ttl=2s`)
    const out = execFileSync(process.execPath, [path.join(here, 'coord-cluster.cjs'), src, '50000', dir], {
      timeout: 90_000,
    }).toString()
    const results = JSON.parse(out.trim().split('\n').pop())
    assert.equal(results.length, 8)
    const nodes = new Set()
    const all = new Set()
    for (const r of results) {
      assert.equal(r.fatal, undefined, r.fatal)
      assert.equal(r.error, null, JSON.stringify(r.error))
      nodes.add(r.node)
      const ids = readIds(r.out)
      assert.equal(ids.length, 50000)
      for (const id of ids) all.add(id)
    }
    assert.deepEqual([...new Set(results.map((r) => r.kind))].sort(), ['cluster', 'thread'])
    // Every worker held its node ID while all the others held theirs: so the node IDs must differ.
    const lastClaim = Math.max(...results.map((r) => r.claimedAt))
    assert.ok(
      results.every((r) => r.heldUntil >= lastClaim),
      'a worker released before all had claimed',
    )
    assert.equal(nodes.size, 8)
    assert.equal(all.size, 8 * 50000)
  })

  test(`${kind}: a worker paused (SIGSTOP) past the TTL loses its node ID to another; resumed, it stops with LEASE_LOST; no duplicate`, async () => {
    // A 2 s TTL: the store's answer timeout follows the TTL, and a loaded machine must not fail renewals.
    const store = withParams(url, 'ttl=2s')
    const name = uniq('pause')
    const seq = await Sequencer.create(name, { store, nodeCount: 1 })
    const spawnHolder = (job) => {
      const child = spawn(process.execPath, [path.join(here, 'coord-holder.cjs'), JSON.stringify(job)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let text = ''
      const done = new Promise((resolve) =>
        child.on('exit', () => {
          const m = /result (.*)/.exec(text)
          resolve(m ? JSON.parse(m[1]) : { fatal: text })
        }),
      )
      const ready = new Promise((resolve, reject) => {
        child.stdout.on('data', (d) => {
          text += d
          const m = /ready (\d+)/.exec(text)
          if (m) resolve(Number(m[1]))
        })
        done.then((r) => reject(new Error(`holder ended before it held a node ID: ${JSON.stringify(r)}`)))
      })
      return { child, ready, done }
    }
    const a = spawnHolder({ store, name, seconds: 12, out: path.join(tmp, `${name}-a.bin`) })
    assert.equal(await a.ready, 0)
    await new Promise((r) => setTimeout(r, 300))
    a.child.kill('SIGSTOP')
    const b = spawnHolder({ store, name, seconds: 2.5, out: path.join(tmp, `${name}-b.bin`) })
    assert.equal(await b.ready, 0, "the second holder takes the paused one's node ID after its TTL")
    a.child.kill('SIGCONT')
    const [ra, rb] = await Promise.all([a.done, b.done])
    assert.equal(rb.error, null, JSON.stringify(rb))
    assert.deepEqual(ra.error && [ra.error.code, ra.error.isError], ['LEASE_LOST', true], JSON.stringify(ra))
    const ia = readIds(path.join(tmp, `${name}-a.bin`))
    const ib = readIds(path.join(tmp, `${name}-b.bin`))
    assert.ok(ia.length > 0 && ib.length > 0)
    const all = new Set([...ia, ...ib])
    assert.equal(all.size, ia.length + ib.length, 'duplicate IDs between the paused and the new holder')
    await seq.destroy()
  })
}

test('waitForNodeMs: with every node ID held, Generator.open waits up to the bound, then says when the earliest claim expires', async () => {
  for (const [kind, url] of STORES) {
    const name = uniq('wait')
    const store = kind === 'file' ? FILE : url
    await Sequencer.create(name, { store, layout: 'twitter', nodeCount: 1 })
    const source = withParams(store, `sequencer=${name}&ttl=2s`)
    const holder = await Generator.open({ nodeId: source })
    await assert.rejects(Generator.open({ nodeId: source }), (e) => {
      assert.equal(e.code, 'NODE_IDS_EXHAUSTED', kind)
      assert.match(e.message, /the earliest held claim \(node ID 0\) expires at 20\d\d-/, kind)
      assert.match(e.message, /add \?wait=30s to the source/, kind)
      return true
    })
    let t0 = Date.now()
    await assert.rejects(Generator.open({ nodeId: source, waitForNodeMs: 300 }), (e) => {
      assert.equal(e.code, 'NODE_IDS_EXHAUSTED', kind)
      assert.match(e.message, /after waiting 300 ms/, kind)
      return true
    })
    assert.ok(Date.now() - t0 >= 300, kind)
    assert.throws(() => new Generator({ nodeId: 3, waitForNodeMs: 300 }), { name: 'TypeError' })
    const last = holder.nextId()
    setTimeout(() => holder.close(), 300)
    t0 = Date.now()
    const g = await Generator.open({ nodeId: source, waitForNodeMs: 10_000 })
    assert.ok(Date.now() - t0 >= 200, kind)
    assert.equal(g.nodeId, 0)
    assert.ok(g.nextId() > last, kind)
    await g.close()
  }
})

// TLS and authentication: the failure cases scripts/servers.sh wrote for every runtime (tls_servers): a
// wrong CA, no or an expired client certificate, a wrong password; each names its cause, never the
// password (nor does an unreachable store's error).
const TLS_FAILURES = process.env.SNOWMINT_TEST_TLS_FAILURES
if (process.env.SNOWMINT_REQUIRE_SERVERS === '1')
  assert.ok(TLS_FAILURES, 'SNOWMINT_TEST_TLS_FAILURES missing')

test(
  'TLS and authentication failures name the cause, never the password',
  { skip: !TLS_FAILURES },
  async () => {
    const cases = fs
      .readFileSync(TLS_FAILURES, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'))
    cases.push([
      'unreachable',
      'postgres://app:hunter2@127.0.0.1:1/db?ttl=1s',
      'STORE_UNAVAILABLE',
      '127.0.0.1:1',
      'hunter2',
    ])
    for (const [name, url, code, must, secret] of cases) {
      await assert.rejects(
        Generator.open({ nodeId: url }),
        (e) => {
          assert.equal(e.code, code, `${name}: ${e.message}`)
          assert.ok(e.message.includes(must), `${name}: ${must} not in ${e.message}`)
          for (const shown of [e.message, String(e), inspect(e)])
            assert.ok(!shown.includes(secret), `${name}: ${shown}`)
          return true
        },
        name,
      )
    }
  },
)

test(
  'etcd over TLS, etcd with authentication and PostgreSQL over TLS mint',
  { skip: !TLS_FAILURES },
  async () => {
    const names = [
      'SNOWMINT_TEST_ETCD_TLS_URL',
      'SNOWMINT_TEST_ETCD_AUTH_URL',
      'SNOWMINT_TEST_ETCD_AUTH_TLS_URL',
      'SNOWMINT_TEST_POSTGRES_TLS_URL',
    ]
    for (const name of names) {
      const g = await Generator.open({
        nodeId: `${process.env[name]}${process.env[name].includes('?') ? '&' : '?'}ttl=3s`,
      })
      assert.ok(g.nextId() > 0n, name)
      assert.ok(!inspect(g).includes('snowmint-root-secret'), name)
      await g.detach()
    }
  },
)
