// HTTP helpers of the tests that run the README's server recipes (state-file.test.cjs, recipes.test.cjs,
// host-lease.test.cjs).
'use strict'
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
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

/** The body of `GET /` on 127.0.0.1:`port` (a fresh connection, at most 10 s); rejects unless 200. */
function get(port) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, agent: false, timeout: 10_000 }, (res) => {
        let body = ''
        res.on('data', (d) => {
          body += d
        })
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(body))))
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

/**
 * Starts `argv` in `dir` (its own process group, `env` added to this process's environment and PORT set to
 * a free port), waits until 4 workers answer, sends 400 requests (8 at a time), stops the group with
 * `signal` and returns the 400 answer bodies.
 */
async function serveRecipe(dir, argv, env, signal) {
  const port = await freePort()
  const log = path.join(dir, 'server.log')
  const out = fs.openSync(log, 'w')
  const server = spawn(argv[0], argv.slice(1), {
    cwd: dir,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', out, out],
    detached: true,
  })
  fs.closeSync(out)
  const bodies = []
  try {
    const deadline = Date.now() + 30_000
    for (;;) {
      try {
        await get(port)
        break
      } catch {
        const why = `the recipe answers: ${fs.readFileSync(log, 'utf8')}`
        assert.ok(server.exitCode === null && Date.now() < deadline, why)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    // A worker still starting gets no connection yet: wait (bounded) until 4 answer, then count from there.
    const seen = new Set()
    for (let i = 0; i < 200 && seen.size < 4; i++) {
      seen.add((await get(port)).split(' ')[1].trim())
      if (seen.size < 4) await new Promise((r) => setTimeout(r, 25))
    }
    for (let round = 0; round < 50; round++) {
      bodies.push(...(await Promise.all(Array.from({ length: 8 }, () => get(port)))))
    }
  } finally {
    try {
      process.kill(-server.pid, signal)
    } catch {}
    const stopped = await Promise.race([
      exited(server),
      new Promise((r) => setTimeout(() => r('late'), 15_000)),
    ])
    if (stopped === 'late') process.kill(-server.pid, 'SIGKILL')
    await exited(server)
  }
  return { bodies, log: fs.readFileSync(log, 'utf8') }
}

module.exports = { freePort, get, serveRecipe }
