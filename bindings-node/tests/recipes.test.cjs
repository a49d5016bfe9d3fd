// The README's Node `cluster` and PM2 recipes with a lease source, run as written: app.js, cluster-lease.js,
// ecosystem.config.js and the `pm2-runtime` command, each with 4 workers on a sequencer of exactly 4 node
// IDs (on the embedded store), so that a primary holding a node ID would starve a worker. Every request
// must succeed, no ID may repeat, every worker mints under a node ID of its own, and after the stop all 4
// node IDs are free again (nothing holds one past its process).
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { commandOf, serveRecipe } = require('./http-helpers.cjs')
const { Generator, Sequencer, decode } = require('snowmint')

const README = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8')

function block(title) {
  const m = README.match(new RegExp('```\\w+ title=' + title.replace(/\./g, '\\.') + '\\n([\\s\\S]*?)```'))
  assert.ok(m, `the README shows ${title}`)
  return m[1]
}

// Beside node_modules (in the test project), as a user's app: `require('snowmint')` resolves from there.
function appDir() {
  const dir = fs.mkdtempSync(path.join(__dirname, '..', 'recipe-'))
  test.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function fourNodeSource(dir) {
  const store = `file://${path.join(dir, 'leases')}`
  await Sequencer.create('web', { store, layout: 'twitter', nodeCount: 4 })
  return `${store}?sequencer=web&ttl=2s`
}

// Runs `argv` in `dir` (4 workers on the 4-node source), sends 400 requests, stops them with `signal`
// (to the leader alone: the primary, or pm2-runtime, stops its workers) and checks the answers, that the
// leader outlived its workers, and that every node ID is free again.
async function runRecipe(dir, argv, signal, env = {}) {
  const source = await fourNodeSource(dir)
  // TOO_FAR_AHEAD is the recipe's "retry shortly" (the SPEC allows it between the keeper's rounds, a
  // lease's first second on a loaded host among them): counted, as in recipes-killed.test.cjs.
  const {
    bodies,
    errors,
    log: logText,
    outlived,
  } = await serveRecipe(
    dir,
    argv,
    { ...env, SNOWMINT_NODE_SOURCE: source, PM2_HOME: path.join(dir, 'pm2') },
    signal,
    { leaderOnly: true, answers: /^TOO_FAR_AHEAD$/ },
  )
  assert.deepEqual(outlived, [], `the leader stops after its workers\n${logText}`)
  const ids = bodies.map((b) => BigInt(b.split(' ')[0]))
  assert.equal(ids.length + errors.length, 400)
  assert.equal(new Set(ids).size, ids.length, 'the workers minted a duplicate')
  const nodeOfPid = new Map()
  for (const b of bodies) {
    const [id, pid] = b.trim().split(' ')
    if (!nodeOfPid.has(pid)) nodeOfPid.set(pid, new Set())
    nodeOfPid.get(pid).add(decode(BigInt(id)).nodeId)
  }
  assert.equal(nodeOfPid.size, 4, `4 workers answered: ${[...nodeOfPid.keys()]}\n${logText}`)
  for (const [pid, nodes] of nodeOfPid) assert.equal(nodes.size, 1, `worker ${pid}: one node ID`)
  const nodes = [...nodeOfPid.values()].map((s) => [...s][0]).sort()
  assert.deepEqual(nodes, [0, 1, 2, 3], 'every worker has a node ID of its own')
  // Every node ID is free again at once (no waiting for the 2 s claims to expire).
  const again = []
  try {
    for (let i = 0; i < 4; i++) again.push(await Generator.open({ nodeId: source }))
    assert.deepEqual(again.map((g) => g.nodeId).sort(), [0, 1, 2, 3])
  } finally {
    for (const g of again) await g.close()
  }
}

test("the README's Node cluster recipe with a lease source: 4 workers, 4 node IDs", async () => {
  const dir = appDir()
  fs.writeFileSync(path.join(dir, 'app.js'), block('app.js'))
  fs.writeFileSync(path.join(dir, 'cluster-lease.js'), block('cluster-lease.js'))
  await runRecipe(dir, [process.execPath, 'cluster-lease.js'], 'SIGTERM')
})

test("the README's PM2 recipe (cluster mode) with a lease source: 4 instances, 4 node IDs", async () => {
  const bin = process.env.SNOWMINT_PM2_RUNTIME
  assert.ok(bin && fs.existsSync(bin), 'test.sh installs pm2 and sets SNOWMINT_PM2_RUNTIME')
  const dir = appDir()
  fs.writeFileSync(path.join(dir, 'app.js'), block('app.js'))
  fs.writeFileSync(path.join(dir, 'ecosystem.config.js'), block('ecosystem.config.js'))
  const { argv, env } = commandOf(block('pm2'))
  assert.equal(argv[0], 'pm2-runtime')
  argv[0] = bin
  await runRecipe(dir, argv, 'SIGINT', env)
})
