// State-file bench (SPEC §4a): nextId() on a generator with `stateFile` against the in-process
// generator, in interleaved rounds of one run; then 2 processes minting from one state file against 2
// worker_threads minting from one state file (a Generator cannot be shared between threads, so the
// threads share the file's word instead; wall time per ID from a common start). Prints
// `STATEFILE <key> <ns per ID> <name>` lines (see bench.sh).
import { createRequire } from 'node:module'
import { fork } from 'node:child_process'
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads'
import { unlinkSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const { Generator } = require('./index.js')
const ROUNDS = 60
const PER_ROUND = 20_000
const PARALLEL_IDS = 1_000_000
const PARALLEL_ROUNDS = 5
const wallMs = () => performance.timeOrigin + performance.now() // comparable across processes

function mintFrom(path, startAt, n) {
  const gen = new Generator({ nodeId: 3, stateFile: path, policy: 'wait' })
  gen.nextId()
  while (wallMs() < startAt) {}
  for (let i = 0; i < n; i++) gen.nextId()
  return wallMs()
}

function timed(gen, n) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) gen.nextId()
  return Number(process.hrtime.bigint() - t0) / n
}

function inWorker(path, startAt, n) {
  return new Promise((resolve, reject) => {
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: { path, startAt, n } })
    w.once('message', resolve)
    w.once('error', reject)
  })
}

function inProcess(path, startAt, n) {
  return new Promise((resolve, reject) => {
    const c = fork(fileURLToPath(import.meta.url), ['--child', path, String(startAt), String(n)])
    c.once('message', (end) => {
      resolve(end)
      c.disconnect()
    })
    c.once('error', reject)
  })
}

if (!isMainThread) {
  parentPort.postMessage(mintFrom(workerData.path, workerData.startAt, workerData.n))
} else if (process.argv[2] === '--child') {
  const [path, startAt, n] = process.argv.slice(3)
  process.send(mintFrom(path, Number(startAt), Number(n)))
} else {
  const path = `/dev/shm/snowmint-node-bench-${process.pid}.state`
  const memory = new Generator({ nodeId: 3, policy: 'wait' })
  const file = new Generator({ nodeId: 3, stateFile: path, policy: 'wait' })
  let bestMemory = Infinity
  let bestFile = Infinity
  for (let r = 0; r < ROUNDS; r++) {
    let a, b
    if (r % 2 === 0) {
      a = timed(memory, PER_ROUND)
      b = timed(file, PER_ROUND)
    } else {
      b = timed(file, PER_ROUND)
      a = timed(memory, PER_ROUND)
    }
    bestMemory = Math.min(bestMemory, a)
    bestFile = Math.min(bestFile, b)
  }
  console.log(`STATEFILE memory ${bestMemory.toFixed(3)} Node: nextId(), in process`)
  console.log(`STATEFILE file ${bestFile.toFixed(3)} Node: nextId() with stateFile (/dev/shm)`)
  let threads = Infinity
  let processes = Infinity
  for (let r = 0; r < PARALLEL_ROUNDS; r++) {
    let startAt = wallMs() + 300
    let ends = await Promise.all([
      inWorker(path, startAt, PARALLEL_IDS / 2),
      inWorker(path, startAt, PARALLEL_IDS / 2),
    ])
    threads = Math.min(threads, ((Math.max(...ends) - startAt) * 1e6) / PARALLEL_IDS)
    startAt = wallMs() + 400
    ends = await Promise.all([
      inProcess(path, startAt, PARALLEL_IDS / 2),
      inProcess(path, startAt, PARALLEL_IDS / 2),
    ])
    processes = Math.min(processes, ((Math.max(...ends) - startAt) * 1e6) / PARALLEL_IDS)
  }
  console.log(
    `STATEFILE threads2 ${threads.toFixed(3)} Node: 2 worker_threads, one state file (a Generator is per thread)`,
  )
  console.log(`STATEFILE processes2 ${processes.toFixed(3)} Node: 2 processes, one state file`)
  unlinkSync(path)
}
