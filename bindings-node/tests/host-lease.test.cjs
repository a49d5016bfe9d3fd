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
const { killAWorker, killThePrimary, serveRecipe } = require('./http-helpers.cjs')
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
  test(`the README's Node cluster recipe with one lease per host (${kind}): 4 workers, 1 node ID, a worker killed`, async () => {
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
    // 3 runs in a row, every request a batch (`?n=5`: a worker's first call is `nextIds`), one worker
    // SIGKILLed mid-load each run: the primary replaces it, and the replacement answers within 1 s under
    // the host's node ID (issue 40).
    let all = []
    for (let run = 0; run < 3; run++) {
      const { bodies, outlived, dropped, during } = await serveRecipe(
        dir,
        [process.execPath, 'cluster-host-lease.js'],
        { SNOWMINT_NODE_SOURCE: source },
        signal,
        { ...to, path: '/?n=5', during: killAWorker },
      )
      assert.deepEqual(outlived, [], 'the primary stops after its workers')
      assert.ok(dropped <= 8, `only the killed worker's requests go unanswered: ${dropped}`)
      const ids = bodies.flatMap((b) => b.trim().split(' ').slice(0, -1).map(BigInt))
      assert.equal(ids.length, 5 * (400 - dropped))
      assert.deepEqual([...new Set(ids.map((id) => decode(id).nodeId))], [0], 'the one node ID')
      const pids = new Set(bodies.map((b) => b.trim().split(' ').at(-1)))
      assert.ok(pids.size >= 2, `the requests reached several workers: ${[...pids]}`)
      assert.ok(
        during.recoveredMs >= 0 && during.recoveredMs < 1000,
        `the replacement answered after ${during.recoveredMs} ms`,
      )
      assert.equal(
        decode(BigInt(during.body.split(' ')[0])).nodeId,
        0,
        "the replacement mints under the host's node ID",
      )
      console.log(
        `${kind} run ${run}: ${ids.length} IDs, 0 errors, ${dropped} dropped by the killed worker, replacement answered in ${during.recoveredMs} ms`,
      )
      all = all.concat(ids)
    }
    // The primary SIGKILLed mid-load: its workers exit, and the recipe started again (as systemd would)
    // answers under the host's node ID.
    const argv = [process.execPath, 'cluster-host-lease.js']
    const env = { SNOWMINT_NODE_SOURCE: source }
    const { bodies, during } = await serveRecipe(dir, argv, env, signal, {
      ...to,
      path: '/?n=5',
      during: killThePrimary(argv, dir, env),
    })
    assert.ok(during.recoveredMs >= 0, 'the recipe started again answers')
    const restarted = during.body.trim().split(' ').slice(0, -1).map(BigInt)
    assert.deepEqual([...new Set(restarted.map((id) => decode(id).nodeId))], [0], "the host's node ID")
    console.log(
      `${kind} primary killed: ${bodies.length} answers before, started again, answered in ${during.recoveredMs} ms`,
    )
    all = all.concat(
      bodies.flatMap((b) => b.trim().split(' ').slice(0, -1).map(BigInt)),
      restarted,
    )
    assert.equal(new Set(all).size, all.length, 'the workers minted a duplicate')
    // Released by the last worker: the one node ID can be claimed again at once.
    const again = await Generator.open({ nodeId: source })
    try {
      assert.equal(again.nodeId, 0)
      assert.ok(again.nextId() > all.reduce((a, b) => (a > b ? a : b)))
    } finally {
      await again.close()
    }
  })
}
