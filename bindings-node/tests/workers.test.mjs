// worker_threads: each worker loads the addon and creates its own Generator with its own node ID; the
// IDs of all workers and the main thread are distinct. A Generator cannot be shared across threads
// (it is a per-isolate native object: structured clone refuses it).
import test from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { Generator, decode } from 'snowmint'

const workerFile = fileURLToPath(new URL('./mint-worker.cjs', import.meta.url))

function mintIn(nodeId, count, layout = 'twitter') {
  return new Promise((resolve, reject) => {
    const w = new Worker(workerFile, { workerData: { nodeId, count, layout } })
    let got = null
    w.once('message', (m) => {
      got = m
    })
    w.once('error', reject)
    w.once('exit', (code) => (code === 0 && got ? resolve(got) : reject(new Error(`worker exited ${code}`))))
  })
}

test('two workers with different node IDs (and the main thread) mint disjoint, increasing IDs', async () => {
  const count = 200_000
  const main = new Generator({ nodeId: 3 })
  const [a, b] = await Promise.all([mintIn(1, count), mintIn(2, count)])
  const mine = main.nextIds(count)
  const all = new Set()
  for (const [ids, node] of [
    [a, 1],
    [b, 2],
    [mine, 3],
  ]) {
    assert.ok(ids instanceof BigUint64Array)
    assert.equal(ids.length, count)
    for (let i = 1; i < ids.length; i++)
      if (!(ids[i] > ids[i - 1])) assert.fail(`node ${node}: not increasing at ${i}`)
    assert.equal(decode(ids[0]).nodeId, node)
    assert.equal(decode(ids[ids.length - 1]).nodeId, node)
    for (const id of ids) all.add(id)
  }
  assert.equal(all.size, 3 * count, 'duplicates across threads')
})

test('workers can be created and torn down repeatedly (addon loads per isolate)', async () => {
  for (let round = 0; round < 3; round++) {
    const ids = await mintIn(round + 4, 1000, 'discord')
    assert.equal(decode(ids[0], 'discord').nodeId, round + 4)
  }
})

test('a Generator cannot be posted to a worker: one per thread, with distinct node IDs', () => {
  const gen = new Generator({ nodeId: 1 })
  assert.throws(() => structuredClone(gen).nextId())
})
