// One node ID shared by many processes through a state file (SPEC §4a): 4 child processes x 10^6 IDs on
// one file, Node and C processes on one file at once, SIGKILL mid-minting then a restart an hour back,
// an unlinked file, every kind of bad file, and the README's cluster recipe run for real.
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { freePort, get } = require('./http-helpers.cjs')
const { spawn, execFile } = require('node:child_process')
const { Generator, decode, ERROR_CODES } = require('snowmint')

const HOUR_MS = 3_600_000
const WORKER = path.join(__dirname, 'state-file-worker.cjs')

function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-node-state-'))
  test.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

function run(cmd, args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: { ...process.env, ...env }, maxBuffer: 1 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout),
    )
  })
}

function readIds(file) {
  const b = fs.readFileSync(file)
  return new BigUint64Array(b.buffer, b.byteOffset, b.length / 8)
}

function checkRuns(runs, each) {
  let total = 0
  for (const ids of runs) {
    assert.equal(ids.length, each)
    for (let i = 1; i < ids.length; i++) {
      if (ids[i] <= ids[i - 1]) assert.fail(`a process's IDs must strictly increase (at ${i})`)
    }
    total += ids.length
  }
  const all = new BigUint64Array(total)
  let at = 0
  for (const ids of runs) {
    all.set(ids, at)
    at += ids.length
  }
  all.sort()
  for (let i = 1; i < all.length; i++) {
    if (all[i] === all[i - 1]) assert.fail(`duplicate ID ${all[i]}`)
  }
  return all
}

/** Asserts fn throws STATE_FILE_MISMATCH with `words` (a RegExp) and the path in the message. */
function mismatch(fn, words, file) {
  let err
  try {
    fn()
  } catch (e) {
    err = e
  }
  assert.ok(err instanceof Error, `expected STATE_FILE_MISMATCH, got ${err}`)
  assert.equal(err.code, 'STATE_FILE_MISMATCH', err.message)
  assert.match(err.message, words)
  if (file) assert.ok(err.message.includes(file), err.message)
  return err
}

test('4 processes x 10^6 IDs on one state file: no duplicate, each increasing', async () => {
  const dir = tempDir()
  const file = path.join(dir, 'orders.snowmint')
  const n = 1_000_000
  await Promise.all(
    [0, 1, 2, 3].map((p) => run(process.execPath, [WORKER, file, String(n), path.join(dir, `ids${p}`)])),
  )
  const all = checkRuns(
    [0, 1, 2, 3].map((p) => readIds(path.join(dir, `ids${p}`))),
    n,
  )
  const gen = new Generator({ nodeId: 3, stateFile: file })
  assert.equal(gen.stateFile, file)
  assert.ok(gen.nextId() > all[all.length - 1], 'continues after every process')
  gen.flush()
  gen.verifyStateFile()
  assert.equal(decode(all[0]).nodeId, 3)
})

test('Node and C processes on one state file at the same time never collide', async () => {
  const worker = process.env.SNOWMINT_C_STATE_WORKER
  assert.ok(worker, "test.sh passes the C binding's state-file worker in SNOWMINT_C_STATE_WORKER")
  const dir = tempDir()
  const file = path.join(dir, 'mixed.snowmint')
  const n = 500_000
  const startAt = String(Date.now() + 1000)
  await Promise.all([
    run(worker, ['--mint', file, 'twitter', '3', String(n), path.join(dir, 'c0')], {
      SNOWMINT_START_AT_MS: startAt,
    }),
    run(worker, ['--mint', file, 'twitter', '3', String(n), path.join(dir, 'c1')], {
      SNOWMINT_START_AT_MS: startAt,
    }),
    run(process.execPath, [WORKER, file, String(n), path.join(dir, 'js0'), startAt]),
    run(process.execPath, [WORKER, file, String(n), path.join(dir, 'js1'), startAt]),
  ])
  const runs = ['c0', 'c1', 'js0', 'js1'].map((f) => readIds(path.join(dir, f)))
  checkRuns(runs, n)
  const first = (a, b) => (a[0] < b[0] ? a[0] : b[0])
  const last = (a, b) => (a[n - 1] > b[n - 1] ? a[n - 1] : b[n - 1])
  assert.ok(
    first(runs[2], runs[3]) < last(runs[0], runs[1]) && first(runs[0], runs[1]) < last(runs[2], runs[3]),
    'the C and Node processes did not overlap',
  )
})

test('SIGKILL mid-minting, then a restart with the clock an hour back: no repeat', async () => {
  const dir = tempDir()
  const file = path.join(dir, 'kill.snowmint')
  const child = spawn(process.execPath, [WORKER, file, 'forever'], { stdio: ['ignore', 'pipe', 'inherit'] })
  let text = ''
  await new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      text += d
      if (text.length > 2_000_000 && child.exitCode === null && !child.killed) {
        child.kill('SIGKILL')
      }
    })
    child.on('close', resolve)
  })
  assert.equal(child.signalCode, 'SIGKILL')
  const lines = text.split('\n').slice(0, -1) // the last line may be cut short
  let last = 0n
  for (const l of lines) {
    const id = BigInt(l)
    if (id > last) last = id
  }
  assert.ok(lines.length > 100_000)

  const back = () => Date.now() - HOUR_MS
  const failing = new Generator({ nodeId: 3, stateFile: file, clock: back })
  let err
  try {
    failing.nextId()
  } catch (e) {
    err = e
  }
  assert.equal(err && err.code, 'TOO_FAR_AHEAD')
  assert.ok(err.retryAfterMs > HOUR_MS - 60_000)
  const patient = new Generator({ nodeId: 3, stateFile: file, clock: back, maxAheadMs: 2 * HOUR_MS })
  for (const id of patient.nextIds(10_000)) assert.ok(id > last)
  for (let i = 0; i < 1000; i++) assert.ok(patient.nextId() > last)
})

test('an unlinked state file is detected on the next open', () => {
  const dir = tempDir()
  const file = path.join(dir, 'gone.snowmint')
  const old = new Generator({ nodeId: 3, stateFile: file })
  fs.unlinkSync(file)
  mismatch(() => old.verifyStateFile(), /unlinked/)
  mismatch(
    () => new Generator({ nodeId: 3, stateFile: file }),
    new RegExp(`process ${process.pid} maps another file`),
    file,
  )
})

test('every bad state file is a clear STATE_FILE_MISMATCH', () => {
  const dir = tempDir()
  const good = path.join(dir, 'good.snowmint')
  new Generator({ nodeId: 3, stateFile: good }).nextId()
  const raw = fs.readFileSync(good)
  const put = (name, bytes) => {
    const p = path.join(dir, name)
    fs.writeFileSync(p, bytes)
    return p
  }
  const noise = Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 73 + 41) % 256))
  const damaged = Buffer.from(raw)
  damaged[33] ^= 1
  const readOnly =
    process.getuid() === 0
      ? '/sys/snowmint-test.state' // root may write anywhere but sysfs
      : (fs.mkdirSync(path.join(dir, 'ro'), { mode: 0o555 }), path.join(dir, 'ro', 's'))
  const cases = [
    ['another node ID', good, 4, 'twitter', /made for node ID 3, not 4/],
    ['another layout', good, 3, 'discord', /another layout/],
    ['a decimal layout', good, 3, 'decimal', /another layout/],
    ['truncated', put('short', raw.subarray(0, 100)), 3, 'twitter', /100 bytes long.*truncated/],
    ['random bytes', put('random', noise), 3, 'twitter', /not a snowmint state file/],
    ['damaged', put('damaged', damaged), 3, 'twitter', /checksum/],
    ['a directory', dir, 3, 'twitter', /not a regular file/],
    ['read-only', readOnly, 3, 'twitter', /create failed/],
  ]
  for (const [, file, nodeId, layout, words] of cases) {
    mismatch(() => new Generator({ nodeId, layout, stateFile: file }), words, file)
  }
  assert.deepEqual(fs.readFileSync(path.join(dir, 'random')), noise, 'a bad file is never reset')
  assert.throws(() => new Generator({ nodeId: 3, stateFile: 42 }), TypeError)
  assert.throws(
    () => new Generator({ nodeId: 3 }).flush(),
    (e) => e.code === 'INVALID_ARGUMENT',
  )
  assert.throws(
    () => new Generator({ nodeId: 3, policy: 'nope', stateFile: path.join(dir, 'never') }),
    (e) => e.code === 'INVALID_ARGUMENT',
  )
  assert.ok(!fs.existsSync(path.join(dir, 'never')), 'bad options never touch the file system')
  assert.ok(ERROR_CODES.includes('STATE_FILE_MISMATCH'))
})

test('a decimal (Chronicle) layout on a state file', () => {
  const dir = tempDir()
  const file = path.join(dir, 'd')
  const a = new Generator({ nodeId: 28, layout: 'decimal', stateFile: file })
  const b = new Generator({ nodeId: 28, layout: 'decimal', stateFile: file })
  const [x, y, z] = [a.nextId(), b.nextId(), a.nextId()]
  assert.ok(x < y && y < z)
  for (const id of [x, y, z]) assert.equal(id % 100n, 28n)
})

// ---- the README's cluster recipe, run for real ------------------------------------------------------

test("the README's Node cluster recipe: 4 workers on one state file", async () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8')
  const m = readme.match(/```js title=cluster\.js\n([\s\S]*?)```/)
  assert.ok(m, 'the README shows cluster.js')
  const top = fs.readFileSync(path.join(process.env.SNOWMINT_NODE_SRC, '..', 'README.md'), 'utf8')
  assert.ok(top.includes(m[0]), 'the repository README shows the same recipe')
  assert.match(m[1], /\.listen\([^\n]*, '127\.0\.0\.1'\)/, 'the recipe listens on loopback only')
  const dir = tempDir()
  const state = path.join(dir, 'orders.snowmint')
  const script = path.join(__dirname, '..', 'cluster-recipe.cjs') // beside node_modules, as a user's app
  fs.writeFileSync(script, m[1].replace('/dev/shm/orders.snowmint', state))
  test.after(() => fs.rmSync(script, { force: true }))
  const port = await freePort()
  const primary = spawn(process.execPath, [script], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'inherit',
    detached: true,
  })
  try {
    let up = false
    for (let i = 0; i < 200 && !up; i++) {
      try {
        await get(port)
        up = true
      } catch {
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    assert.ok(up, 'the cluster answers')
    const bodies = []
    for (let round = 0; round < 250; round++) {
      bodies.push(...(await Promise.all(Array.from({ length: 8 }, () => get(port)))))
    }
    const ids = bodies.map((b) => BigInt(b.split(' ')[0]))
    const pids = new Set(bodies.map((b) => b.split(' ')[1].trim()))
    assert.equal(new Set(ids).size, ids.length, 'cluster workers minted a duplicate')
    assert.ok(pids.size >= 2, 'the requests reached several workers')
    for (const id of ids.slice(0, 50)) assert.equal(decode(id).nodeId, 3)
  } finally {
    process.kill(-primary.pid, 'SIGTERM')
  }
})
