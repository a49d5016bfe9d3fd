// HTTP helpers of the tests that run the README's server recipes (state-file.test.cjs, recipes.test.cjs,
// recipes-killed.test.cjs).
'use strict'
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** The body of `GET path` on 127.0.0.1:`port` (a fresh connection, at most 10 s); rejects unless 200. */
function get(port, path = '/') {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false, timeout: 10_000 }, (res) => {
        let body = ''
        res.on('data', (d) => {
          body += d
        })
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(body)
            : reject(Object.assign(new Error(body), { status: res.statusCode })),
        )
      })
      .on('timeout', function () {
        this.destroy(new Error(`GET 127.0.0.1:${port}: no answer in 10 s`))
      })
      .on('error', reject)
  })
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', resolve))
}

/** The PIDs of the live (not zombie) processes whose parent and group pass `keep(ppid, pgrp)` (Linux, /proc). */
function liveProcesses(keep) {
  const pids = []
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue
    let stat
    try {
      stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8')
    } catch {
      continue // ended while listed
    }
    // After the command's closing parenthesis: state, ppid, pgrp, ...
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (state !== 'Z' && keep(Number(ppid), Number(pgrp))) pids.push(Number(p))
  }
  return pids
}

/** The live processes of process group `pgid`. */
const groupMembers = (pgid) => liveProcesses((_, pgrp) => pgrp === pgid)

/** The live children of `pid`. */
const childrenOf = (pid) => liveProcesses((ppid) => ppid === pid)

/** Seconds since boot (/proc/uptime: 10 ms steps, the clock of a process's start time). */
const uptime = () => Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0])

/** When process `pid` started, in seconds since boot (/proc/PID/stat's starttime: 10 ms steps); -1 if gone. */
function startedAt(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // After the command's closing parenthesis: field 3 (state) onwards; starttime is field 22, in ticks.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / 100
  } catch {
    return -1
  }
}

/**
 * A `during` of `serveRecipe`: after `after` ms of load, SIGKILLs one worker of the primary and measures
 * how long until a worker that was not there before answers (`?n=1`): `{ recoveredMs, body, forkedMs,
 * startedMs, codeMs, killedAt, before }`: `recoveredMs` from the kill, `forkedMs` from the kill to the
 * replacement's process start, `startedMs` from that start to its answer (the process start times are the
 * kernel's, in 10 ms steps), `codeMs` from the kill to when its code began (the addon mapped: Node's own
 * start-up is over); `killedAt` (Date.now()), `before` the workers' PIDs.
 * The load's own answers may come from the replacement first: serveRecipe's `firstNew` tells.
 */
async function killAWorker(server, port, after = 300) {
  await new Promise((r) => setTimeout(r, after))
  const before = new Set(childrenOf(server.pid))
  assert.ok(before.size >= 2, `the primary's workers: ${[...before]}`)
  process.kill(Math.min(...before), 'SIGKILL')
  const t0 = Date.now()
  const killedAt = uptime()
  // When the replacement's own code began: the moment its process has the addon mapped (its first
  // `require('snowmint')`), seen every 5 ms.
  let codeAt = -1
  const watch = setInterval(() => {
    for (const pid of childrenOf(server.pid)) {
      if (before.has(pid) || codeAt >= 0) continue
      try {
        if (/snowmint\.[^/\n]*\.node/.test(fs.readFileSync(`/proc/${pid}/maps`, 'utf8'))) codeAt = Date.now()
      } catch {}
    }
  }, 5)
  try {
    while (Date.now() - t0 < 10_000) {
      let body
      try {
        body = await get(port, '/?n=1')
      } catch {
        await new Promise((r) => setTimeout(r, 5))
        continue
      }
      const pid = Number(body.trim().split(' ').at(-1))
      if (!before.has(pid)) {
        const [recoveredMs, now, started] = [Date.now() - t0, uptime(), startedAt(pid)]
        const forkedMs = started < 0 ? -1 : Math.round((started - killedAt) * 1000)
        const startedMs = started < 0 ? -1 : Math.round((now - started) * 1000)
        const codeMs = codeAt < 0 ? -1 : codeAt - t0
        return { recoveredMs, body, forkedMs, startedMs, codeMs, killedAt: t0, before }
      }
    }
    return { recoveredMs: -1, body: '', forkedMs: -1, startedMs: -1, codeMs: -1, killedAt: t0, before }
  } finally {
    clearInterval(watch)
  }
}

/** Starts `argv` in `dir` in a process group of its own, `env` added and PORT=`port`, its output in `log`. */
function startRecipe(dir, argv, env, port, log) {
  const out = fs.openSync(log, 'w')
  const child = spawn(argv[0], argv.slice(1), {
    cwd: dir,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', out, out],
    detached: true,
  })
  fs.closeSync(out)
  return child
}

/**
 * A `during` of `serveRecipe` for the recipe `argv` in `dir` with `env`: after `after` ms of load, SIGKILLs
 * the primary, waits until its workers have exited (a cluster worker exits when its primary is gone), then
 * starts the recipe again (as a supervisor would, on another port) and measures how long until it answers a
 * batch (`?n=5`): `{ recoveredMs, body, killedAt }` (killedAt: Date.now() at the kill); then stops it
 * (SIGTERM to its group).
 */
function killThePrimary(argv, dir, env, after = 300) {
  return async (server) => {
    await new Promise((r) => setTimeout(r, after))
    process.kill(server.pid, 'SIGKILL')
    const killedAt = Date.now()
    const left = await groupGone(server.pid, 15_000)
    assert.deepEqual(left, [], 'the workers of a killed primary exit')
    const port = await freePort()
    const t0 = Date.now()
    const again = startRecipe(dir, argv, env, port, path.join(dir, 'restarted.log'))
    try {
      while (Date.now() - t0 < 30_000) {
        try {
          return { recoveredMs: Date.now() - t0, body: await get(port, '/?n=5'), killedAt }
        } catch {
          await new Promise((r) => setTimeout(r, 10))
        }
      }
      return { recoveredMs: -1, body: '', killedAt }
    } finally {
      process.kill(-again.pid, 'SIGTERM')
      const late = await groupGone(again.pid, 15_000)
      assert.deepEqual(late, [], 'the restarted recipe stops on SIGTERM')
    }
  }
}

/** Waits (at most `ms`) until no live process is left in group `pgid`; the PIDs still there. */
async function groupGone(pgid, ms) {
  const deadline = Date.now() + ms
  let left = groupMembers(pgid)
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20))
    left = groupMembers(pgid)
  }
  return left
}

/**
 * Starts `argv` in `dir` (its own process group, `env` added to this process's environment and PORT set to
 * a free port), waits until 4 workers answer, sends 400 requests (8 at a time), stops the group with
 * `signal` (sent to the leader alone with `leaderOnly`), waits until every process of the group has
 * stopped, and returns the 400 answer bodies, the recipe's log and the PIDs of the group that were still
 * running when the leader exited (none if it outlived its workers). Each request is `GET path`; with
 * `during(server, port)` (run beside the requests, e.g. `killAWorker`) the requests a killed worker dropped
 * are counted (`dropped`) instead of failing, and its result is returned (`during`). An answer 503 whose
 * body (an error code) matches `answers` is counted in `errors` (the recipe's "retry shortly"); any
 * other error fails.
 */
async function serveRecipe(
  dir,
  argv,
  env,
  signal,
  { leaderOnly = false, path: reqPath = '/', during = null, answers = /^$/ } = {},
) {
  const port = await freePort()
  const log = path.join(dir, 'server.log')
  const server = startRecipe(dir, argv, env, port, log)
  const bodies = []
  let dropped = 0
  // The error codes answered (503 with `answers`' codes: the recipe's "retry shortly").
  const errors = []
  const answered503 = (e) => e.status === 503 && answers.test(e.message.trim())
  let duringResult = null
  let late = []
  let outlived = []
  // The group's members when the leader has exited (its 'exit' comes once it is reaped).
  server.once('exit', () => {
    outlived = groupMembers(server.pid)
  })
  try {
    const deadline = Date.now() + 30_000
    for (;;) {
      try {
        await get(port)
        break
      } catch {
        assert.ok(server.exitCode === null && Date.now() < deadline, 'the recipe answers within 30 s')
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    // A worker still starting gets no connection yet: wait (bounded) until 4 answer, then count from there.
    const seen = new Set()
    const allUp = Date.now() + 60_000
    while (seen.size < 4 && Date.now() < allUp) {
      try {
        seen.add((await get(port)).split(' ')[1].trim())
      } catch (e) {
        if (!answered503(e)) throw e // an error the recipe answers (retry shortly): asked again below
      }
      if (seen.size < 4) await new Promise((r) => setTimeout(r, 25))
    }
    // With `during` (a worker killed mid-load), a request the killed worker dropped counts as dropped.
    const side = during && during(server, port)
    const answered = [] // [Date.now(), body] of every answer, in order
    const one = () =>
      get(port, reqPath)
        .then((b) => {
          answered.push([Date.now(), b])
          return b
        })
        .catch((e) => {
          if (answered503(e)) {
            errors.push(e.message.trim())
            return null
          }
          // A hang fails; refused: the primary was killed and its workers have exited.
          if (!during || !/ECONNRESET|ECONNREFUSED|socket hang up/.test(e.message)) throw e
          dropped++
          return null
        })
    for (let round = 0; round < 50; round++) {
      bodies.push(...(await Promise.all(Array.from({ length: 8 }, one))).filter((b) => b !== null))
    }
    duringResult = side && (await side)
    // When the load's last answer came (a kill after it was not mid-load), and the first answer of the load
    // from a worker `during` did not see (its replacement).
    if (duringResult) duringResult.lastAnswerAt = answered.length > 0 ? answered.at(-1)[0] : -1
    if (duringResult && duringResult.before) {
      const first = answered.find(([, b]) => !duringResult.before.has(Number(b.trim().split(' ').at(-1))))
      duringResult.firstNewAt = first ? first[0] : -1
    }
  } catch (e) {
    e.message += `\nthe recipe's log:\n${fs.readFileSync(log, 'utf8')}`
    throw e
  } finally {
    // The whole group, not only its leader: a cluster primary or PM2 may exit before its workers, which
    // still hold their node IDs until they have given them back (and must not outlive the test).
    try {
      process.kill(leaderOnly ? server.pid : -server.pid, signal)
    } catch {}
    late = await groupGone(server.pid, 15_000)
    if (late.length > 0) {
      try {
        process.kill(-server.pid, 'SIGKILL')
      } catch {}
      await groupGone(server.pid, 5_000)
    }
    await exited(server)
  }
  assert.deepEqual(late, [], `every process of the recipe stops on ${signal} within 15 s`)
  return { bodies, log: fs.readFileSync(log, 'utf8'), outlived, dropped, errors, during: duringResult }
}

/** A README's one-line shell command: its leading `NAME=value` words (`env`) and the rest (`argv`). */
function commandOf(line) {
  const words = line.trim().split(/\s+/)
  const n = words.findIndex((w) => !/^[A-Za-z_]\w*=/.test(w))
  return { argv: words.slice(n), env: Object.fromEntries(words.slice(0, n).map((w) => w.split(/=(.*)/s, 2))) }
}

/**
 * The bound on a replacement's first answer, taken as it answered: 1000 ms (issue 40) on a host with a CPU
 * to spare; on a busier one (`make test` runs its stages side by side on 2 cores, and a starved process
 * runs several times slower) 1000 ms per CPU's worth of runnable work, the 1-minute load average over the
 * CPUs. Its CPU time stretches by that factor; a defect's wait (a lease's TTL, a lock held by the dead)
 * does not, and on a quiet host the bound is 1 s. `{ ms, text }`, the text for the run's line.
 */
function replacementBound() {
  const load = Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
  const cpus = os.availableParallelism()
  const ms = Math.round(1000 * Math.max(1, load / cpus))
  return { ms, text: `bound ${ms} ms at load ${load.toFixed(1)} on ${cpus} CPUs` }
}

module.exports = { commandOf, freePort, get, killAWorker, killThePrimary, replacementBound, serveRecipe }
