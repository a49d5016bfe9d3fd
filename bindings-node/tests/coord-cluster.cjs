// Run by tests/coord.test.mjs: a cluster primary forking 4 workers and starting 4 worker_threads, each
// opening the lease source in argv[2] and minting argv[3] IDs into a file under argv[4]. Prints one
// JSON line: [{ node, file, error }].
'use strict'
const cluster = require('node:cluster')
const { Worker, isMainThread, workerData, parentPort } = require('node:worker_threads')
const path = require('node:path')
const { run } = require('./coord-holder.cjs')

if (!isMainThread) {
  run(workerData).then(
    (r) => parentPort.postMessage({ done: r }),
    (e) => parentPort.postMessage({ done: { fatal: `${e.code}: ${e.message}` } }),
  )
} else if (cluster.isWorker) {
  run(JSON.parse(process.env.SNOWMINT_JOB)).then(
    (r) => process.send({ done: r }, () => process.exit(0)),
    (e) => process.send({ done: { fatal: `${e.code}: ${e.message}` } }, () => process.exit(1)),
  )
} else {
  const [source, count, dir] = [process.argv[2], Number(process.argv[3]), process.argv[4]]
  const jobs = []
  const holdUntil = Date.now() + 5000
  for (let i = 0; i < 8; i++) {
    const out = path.join(dir, `w${i}.bin`)
    const job = { source, count, out, holdUntil }
    jobs.push(
      new Promise((resolve, reject) => {
        const w =
          i < 4
            ? cluster.fork({ SNOWMINT_JOB: JSON.stringify(job) })
            : new Worker(__filename, { workerData: job })
        w.on('message', (m) => {
          if (m.done) resolve({ ...m.done, out, kind: i < 4 ? 'cluster' : 'thread' })
        })
        w.on('error', reject)
      }),
    )
  }
  Promise.all(jobs).then((r) => {
    process.stdout.write(JSON.stringify(r) + '\n')
    process.exit(0)
  })
}
