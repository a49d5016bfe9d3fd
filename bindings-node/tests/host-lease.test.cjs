// One leased node ID per host (a lease source with `stateFile`): the repository README's Node cluster
// recipe (cluster-host-lease.js) run as written, 4 workers on a sequencer of exactly ONE node ID (on the
// embedded store, and on etcd and PostgreSQL when test.sh started them), so a worker that did not share the
// lease would fail with NODE_IDS_EXHAUSTED. Every request must succeed, no ID may repeat, every ID is under
// that node ID, the primary outlives its workers, and after the stop the node ID is free again (the last
// worker released it).
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { serveRecipe } = require('./http-helpers.cjs')
const { Generator, Sequencer, decode } = require('snowmint')

// The repository's README (this project holds a copy of the binding's own README only).
const README = fs.readFileSync(path.join(process.env.SNOWMINT_NODE_SRC, '..', 'README.md'), 'utf8')

function block(title) {
  const m = README.match(new RegExp('```\\w+ title=' + title.replace(/\./g, '\\.') + '\\n([\\s\\S]*?)```'))
  assert.ok(m, `the README shows ${title}`)
  return m[1]
}

// Each store with another stop: SIGINT to the primary alone (Ctrl-C of a foreground primary, `kill`),
// SIGTERM to the whole group (systemd), SIGTERM to the primary alone (systemd's KillMode=mixed).
const stores = [['file', null, 'SIGINT', { leaderOnly: true }]]
for (const [kind, url, signal, to] of [
  ['etcd', process.env.SNOWMINT_TEST_ETCD_URL, 'SIGTERM', { leaderOnly: false }],
  ['postgres', process.env.SNOWMINT_TEST_POSTGRES_URL, 'SIGTERM', { leaderOnly: true }],
]) {
  if (url) stores.push([kind, url, signal, to])
  else if (process.env.SNOWMINT_REQUIRE_SERVERS === '1') throw new Error(`no ${kind} URL`)
}

for (const [kind, url, signal, to] of stores) {
  test(`the README's Node cluster recipe with one lease per host (${kind}): 4 workers, 1 node ID`, async () => {
    const dir = fs.mkdtempSync(path.join(__dirname, '..', 'host-lease-'))
    test.after(() => fs.rmSync(dir, { recursive: true, force: true }))
    const store = url || `file://${path.join(dir, 'leases')}`
    const name = `host-${process.pid}-${Date.now()}`
    await Sequencer.create(name, { store, layout: 'twitter', nodeCount: 1 })
    const source = `${store}${store.includes('?') ? '&' : '?'}sequencer=${name}&ttl=2s`
    const stateFile = path.join(dir, 'orders.lease')
    fs.writeFileSync(
      path.join(dir, 'cluster-host-lease.js'),
      block('cluster-host-lease.js').replace('/dev/shm/orders.lease', stateFile),
    )
    const { bodies, outlived } = await serveRecipe(
      dir,
      [process.execPath, 'cluster-host-lease.js'],
      { SNOWMINT_NODE_SOURCE: source },
      signal,
      to,
    )
    assert.deepEqual(outlived, [], 'the primary stops after its workers')
    const ids = bodies.map((b) => BigInt(b.split(' ')[0]))
    assert.equal(ids.length, 400)
    assert.equal(new Set(ids).size, ids.length, 'the workers minted a duplicate')
    assert.deepEqual([...new Set(ids.map((id) => decode(id).nodeId))], [0], 'the one node ID')
    const pids = new Set(bodies.map((b) => b.trim().split(' ')[1]))
    assert.ok(pids.size >= 2, `the requests reached several workers: ${[...pids]}`)
    // Released by the last worker: the one node ID can be claimed again at once.
    const again = await Generator.open({ nodeId: source })
    try {
      assert.equal(again.nodeId, 0)
      assert.ok(again.nextId() > ids.reduce((a, b) => (a > b ? a : b)))
    } finally {
      await again.close()
    }
  })
}
