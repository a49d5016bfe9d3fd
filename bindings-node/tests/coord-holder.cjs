// A lease holder for tests/coord.test.mjs, run as a cluster worker, a worker_thread or a plain child
// process. Opens `source` (or attaches to sequencer `name` in `store`, retrying while every node ID is
// held), mints `count` IDs (or for `seconds`, in small paced batches), and reports
// { node, ids (decimal strings in a file), error: { code, isError } | null }.
'use strict'
const fs = require('node:fs')
const { Generator, Sequencer } = require('snowmint')

async function run({ source, store, name, count, seconds, out, holdUntil }) {
  let gen
  if (source) {
    gen = await Generator.open({ nodeId: source })
  } else {
    const seq = await Sequencer.open(name, { store })
    const deadline = Date.now() + 20_000
    for (;;) {
      try {
        gen = await seq.attach()
        break
      } catch (e) {
        if (e.code !== 'NODE_IDS_EXHAUSTED' || Date.now() > deadline) throw e
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  }
  const node = gen.nodeId
  const claimedAt = Date.now()
  if (process.send) process.send({ ready: node })
  else if (!require('node:worker_threads').isMainThread)
    require('node:worker_threads').parentPort.postMessage({ ready: node })
  else process.stdout.write(`ready ${node}\n`)
  const fd = fs.openSync(out, 'w')
  let error = null
  let minted = 0
  const stop = seconds ? Date.now() + seconds * 1000 : Infinity
  try {
    while (count ? minted < count : Date.now() < stop) {
      let ids
      try {
        ids = gen.nextIds(count ? Math.min(1000, count - minted) : 100)
      } catch (e) {
        if (e.code === 'TOO_FAR_AHEAD') {
          await new Promise((r) => setTimeout(r, 5))
          continue
        }
        throw e
      }
      fs.writeSync(fd, Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength))
      minted += ids.length
      if (seconds) await new Promise((r) => setTimeout(r, 2))
    }
  } catch (e) {
    error = { code: e.code, isError: e instanceof Error, message: e.message }
  }
  fs.closeSync(fd)
  // Hold the node ID until every worker of a fleet has claimed one (so that they must all differ).
  if (holdUntil) await new Promise((r) => setTimeout(r, Math.max(0, holdUntil - Date.now())))
  const heldUntil = Date.now()
  // A release the store does not answer in time is not an error of minting (the claim then expires
  // after its TTL); it is reported apart.
  let closeError = null
  await gen.close().catch((e) => {
    closeError = e.code
  })
  return { node, error, claimedAt, heldUntil, closeError }
}

module.exports = { run }

if (require.main === module) {
  // A plain child process: the job is a JSON argument; the result goes to stdout.
  run(JSON.parse(process.argv[2])).then(
    (r) => {
      process.stdout.write(`result ${JSON.stringify(r)}\n`)
    },
    (e) => {
      process.stdout.write(`result ${JSON.stringify({ fatal: `${e.code}: ${e.message}` })}\n`)
      process.exitCode = 1
    },
  )
}
