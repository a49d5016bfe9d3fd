// The shared tests of the ID-service `Client` (bindings-wasm/js/client.js), run on both packages — the
// native `snowmint` and `snowmint-wasm` in Node — against live HTTP services on free 127.0.0.1 ports:
// the real `snowmint serve` (the CLI binary named by SNOWMINT_SERVE, which test.sh builds; the stand-in
// when it is not set) and tests/service/fake_service.py, the protocol stand-in, for what only it can do
// (inject each error code, count requests). Each service is SIGKILLed when its test ends (and on every
// exit path of the process).
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const FAKE = path.join(HERE, '..', 'service', 'fake_service.py')
const PYTHON = process.env.PYTHON ?? 'python3'
const live = new Set()
process.on('exit', () => {
  for (const p of live) p.kill('SIGKILL')
})

/** Starts the real service (`snowmint serve`) when SNOWMINT_SERVE names its binary, else the stand-in.
 * `args`: the stand-in's (`--validity MS`), translated. */
export function startLive(...args) {
  const serve = process.env.SNOWMINT_SERVE
  if (!serve) return startService(...args)
  const validity = args[0] === '--validity' ? ['--validity', `${args[1]}ms`] : []
  return startService.call({ cmd: [serve, 'serve', '--listen', '127.0.0.1:0', '--node', '7', ...validity] })
}

/** Starts the stand-in; resolves { url, control, stats, kill }. */
export async function startService(...args) {
  const [cmd, ...rest] = this?.cmd ?? [PYTHON, FAKE, ...args]
  const proc = spawn(cmd, rest, { stdio: ['ignore', 'pipe', 'inherit'] })
  live.add(proc)
  const url = await new Promise((resolve, reject) => {
    let buf = ''
    proc.stdout.on('data', (d) => {
      buf += d
      const m = buf.match(/listening (?:on )?(https?:\/\/[^\s]+)/)
      if (m) resolve(m[1])
    })
    proc.on('exit', (code) => reject(new Error(`fake_service.py exited with ${code}`)))
  })
  const control = async (p) =>
    (await fetch(url + p, { method: /(stats|\/log)$/.test(p) ? 'GET' : 'POST' })).json()
  return {
    url,
    control,
    stats: () => control('/_test/stats'),
    kill() {
      proc.kill('SIGKILL')
      live.delete(proc)
    },
  }
}

async function rejectsWith(assert, promise, code) {
  let caught
  try {
    await promise
  } catch (e) {
    caught = e
  }
  assert.ok(caught !== undefined, `expected a rejection with ${code}`)
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message}`)
  return caught
}

/** `api`: the package's exports; `moduleUrl`: what a worker thread imports to get the same package. */
export function clientTests(api, { test, assert, flavour, moduleUrl }) {
  const { Client, SnowmintError } = api
  const t = (name, fn) => test(`client (${flavour}): ${name}`, fn)

  t('IDs increase and are unique; nextIds spans requests of at most 10000', async () => {
    const s = await startLive()
    try {
      const c = new Client({ url: s.url, prefetch: 50 })
      const ids = []
      for (let i = 0; i < 1000; i++) ids.push(await c.nextId())
      ids.push(...(await c.nextIds(25000)))
      assert.equal(typeof ids[0], 'bigint')
      assert.equal(new Set(ids).size, ids.length)
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
      const st = c.stats()
      assert.equal(st.ids, 26000)
      assert.equal(st.expired, 0)
      assert.equal(st.failures, 0)
      c.close()
      assert.ok(c.closed)
      assert.equal(c.tryNextId(), undefined)
      await rejectsWith(assert, c.nextId(), 'SERVICE_UNAVAILABLE')
    } finally {
      s.kill()
    }
  })

  t('the refill runs in the background: tryNextId never waits, no promise', async () => {
    const s = await startService()
    try {
      const c = new Client({ url: s.url, prefetch: 100 })
      assert.equal(c.tryNextId(), undefined) // nothing prefetched yet, and no fetch started by it
      await c.nextId()
      assert.equal((await s.stats()).requests, 1)
      for (let i = 0; i < 50; i++) assert.equal(typeof c.tryNextId(), 'bigint') // 49 left < 50
      for (let i = 0; i < 200 && c.stats().available < 149; i++) await new Promise((r) => setTimeout(r, 10))
      assert.equal(c.stats().available, 149)
      assert.equal((await s.stats()).requests, 2)
      c.close()
    } finally {
      s.kill()
    }
  })

  t('concurrent clients (promises, worker threads) get unique IDs', async () => {
    const s = await startLive()
    try {
      const clients = [new Client({ url: s.url, prefetch: 20 }), new Client({ url: s.url, prefetch: 100 })]
      const tasks = []
      for (let i = 0; i < 6; i++) {
        const c = clients[i % 2]
        tasks.push(
          (async () => {
            const out = []
            for (let j = 0; j < 1000; j++) out.push(await c.nextId())
            return out.concat(await c.nextIds(300))
          })(),
        )
      }
      const src = `
        const { parentPort, workerData } = require('node:worker_threads');
        import(workerData.moduleUrl).then(async (m) => {
          const c = new m.Client({ url: workerData.url, prefetch: 64 });
          const out = [];
          for (let i = 0; i < 1500; i++) out.push(String(await c.nextId()));
          c.close();
          parentPort.postMessage(out);
        });`
      for (let i = 0; i < 2; i++) {
        tasks.push(
          new Promise((resolve, reject) => {
            const w = new Worker(src, { eval: true, workerData: { url: s.url, moduleUrl } })
            w.once('message', (ids) => resolve(ids.map(BigInt)))
            w.once('error', reject)
          }),
        )
      }
      const results = await Promise.all(tasks)
      const all = results.flat()
      assert.equal(all.length, 6 * 1300 + 2 * 1500)
      assert.equal(new Set(all).size, all.length)
      for (const c of clients) c.close()
    } finally {
      s.kill()
    }
  })

  t('validity: the injected clock past it drops the batch and fetches a fresh one', async () => {
    const s = await startLive('--validity', '500')
    try {
      let now = 1000
      // The client allows 10 s; the service's valid_for_ms (500) is shorter and rules.
      const c = new Client({ url: s.url, prefetch: 10, validityMs: 10000, clock: () => now })
      const first = await c.nextId()
      now += 499
      assert.equal(c.tryNextId(), first + 1n)
      now += 1
      assert.equal(c.tryNextId(), undefined) // 8 IDs dropped, never returned
      const fresh = await c.nextId()
      assert.ok(fresh > first + 1n)
      assert.equal(c.stats().expired, 8)
      c.close()
      let t2 = 0
      const d = new Client({ url: s.url, prefetch: 5, validityMs: 100, clock: () => t2 })
      const a = await d.nextId()
      t2 = 99.5
      assert.equal(await d.nextId(), a + 1n)
      t2 = 100
      assert.ok((await d.nextId()) > a + 1n)
      assert.equal(d.stats().expired, 3)
      d.close()
    } finally {
      s.kill()
    }
  })

  t('validity on the host clock (performance.now)', async () => {
    const s = await startLive()
    try {
      const c = new Client({ url: s.url, prefetch: 10, validityMs: 300 })
      const a = await c.nextId()
      assert.equal(c.tryNextId(), a + 1n)
      await new Promise((r) => setTimeout(r, 350))
      assert.equal(c.tryNextId(), undefined)
      assert.ok((await c.nextId()) > a + 1n)
      assert.equal(c.stats().expired, 8)
      c.close()
    } finally {
      s.kill()
    }
  })

  t('each service error rejects with its code, field and retryAfterMs', async () => {
    const s = await startService()
    try {
      const cases = [
        [400, 'INVALID_ARGUMENT'],
        [400, 'PARSE'],
        [409, 'LEASE_LOST'],
        [409, 'SEQUENCER_DESTROYED'],
        [500, 'PANIC'],
        [503, 'STORE_UNAVAILABLE'],
        [503, 'NODE_IDS_EXHAUSTED'],
        [503, 'SERVICE_UNAVAILABLE'],
        [503, 'TOO_FAR_AHEAD'],
      ]
      for (const [status, code] of cases) {
        const before = (await s.stats()).requests
        await s.control(`/_test/fail?status=${status}&code=${code}&times=-1&field=count&retry_after_ms=7`)
        const c = new Client({ url: s.url, timeoutMs: 1000, retries: 2 })
        const e = await rejectsWith(assert, c.nextId(), code)
        assert.ok(e instanceof SnowmintError && e instanceof Error, code)
        assert.equal(e.field, 'count')
        assert.match(e.message, new RegExp(`injected ${code}`))
        if (code === 'TOO_FAR_AHEAD') assert.equal(e.retryAfterMs, 7)
        assert.equal((await s.stats()).requests - before, status === 503 ? 3 : 1, code)
        await s.control('/_test/reset')
        assert.equal(typeof (await c.nextId()), 'bigint') // recovers with the service
        c.close()
      }
      await s.control('/_test/fail?status=503&code=STORE_UNAVAILABLE&times=2')
      const c = new Client({ url: s.url, retries: 2 })
      assert.equal(typeof (await c.nextId()), 'bigint') // two 503s retried transparently
      assert.equal(c.stats().failures, 2)
      await s.control('/_test/garbage?times=100')
      const g = new Client({ url: s.url, retries: 1 })
      const e = await rejectsWith(assert, g.nextId(), 'SERVICE_UNAVAILABLE')
      assert.match(e.message, /not the ID service's protocol/)
    } finally {
      s.kill()
    }
  })

  /** Runs `fn(service)` against the stand-in misbehaving as `/_test/misbehave?QUERY` says. */
  async function misbehaving(query, fn) {
    const s = await startService()
    try {
      await s.control(`/_test/misbehave?${query}`)
      await fn(s)
    } finally {
      s.kill()
    }
  }

  for (const mode of ['repeat', 'backward']) {
    t(`a ${mode === 'repeat' ? 'repeated' : 'backward'} batch is refused: no ID handed out twice`, () =>
      misbehaving(`mode=${mode}`, async (s) => {
        const c = new Client({ url: s.url, prefetch: 4, retries: 1 })
        const ids = []
        let caught
        try {
          for (let i = 0; i < 12; i++) ids.push(await c.nextId())
        } catch (e) {
          caught = e
        }
        c.close()
        assert.equal(caught?.code, 'SERVICE_UNAVAILABLE', `${ids}`)
        assert.match(caught.message, /does not continue above/)
        assert.equal(ids.length, 4)
        assert.equal(new Set(ids).size, 4)
      }),
    )
  }

  t('the timeout bounds the whole request, a trickling answer included', () =>
    misbehaving('mode=trickle&interval_ms=150', async (s) => {
      const c = new Client({ url: s.url, timeoutMs: 400, retries: 1 })
      const t0 = performance.now()
      const e = await rejectsWith(assert, c.nextId(), 'SERVICE_UNAVAILABLE')
      c.close()
      assert.match(e.message, /within 400 ms/)
      assert.ok(performance.now() - t0 <= c.maxWaitMs + 500)
    }),
  )

  t('an answer larger than the largest batch is refused', () =>
    misbehaving(`mode=huge&bytes=${64 << 20}`, async (s) => {
      const c = new Client({ url: s.url, retries: 0 })
      const e = await rejectsWith(assert, c.nextId(), 'SERVICE_UNAVAILABLE')
      c.close()
      assert.match(e.message, /more than \d+ bytes/)
    }),
  )

  t('a valid_for_ms out of range is not the protocol', () =>
    misbehaving(`mode=valid_for&valid_for_ms=${10n ** 30n}`, async (s) => {
      const c = new Client({ url: s.url, retries: 0 })
      const e = await rejectsWith(assert, c.nextId(), 'SERVICE_UNAVAILABLE')
      c.close()
      assert.match(e.message, /valid_for_ms/)
    }),
  )

  t('a SIGKILLed service rejects SERVICE_UNAVAILABLE within maxWaitMs', async () => {
    const s = await startLive()
    let now = 0
    const c = new Client({ url: s.url, prefetch: 10, timeoutMs: 300, retries: 2, clock: () => now })
    await c.nextId()
    s.kill()
    now = 600000 // the batch expires: the next call must reach the (dead) service
    assert.equal(c.maxWaitMs, 3 * 300 + 50 + 100)
    const t0 = performance.now()
    await rejectsWith(assert, c.nextId(), 'SERVICE_UNAVAILABLE')
    const took = performance.now() - t0
    assert.ok(took <= c.maxWaitMs + 200, `took ${took} ms`)
    assert.equal(c.stats().failures, 3)
  })

  if (process.env.SNOWMINT_SERVE) {
    t('https with a private CA (ca) and a bearer token (token)', async () => {
      const fs = await import('node:fs')
      const os = await import('node:os')
      const { execFileSync } = await import('node:child_process')
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-js-tls-'))
      const ssl = (...a) => execFileSync('openssl', a, { cwd: dir, stdio: 'ignore' })
      ssl(
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.pem',
        '-days',
        '2',
        '-subj',
        '/CN=snowmint test CA',
      )
      ssl(
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'server.key',
        '-out',
        'server.csr',
        '-subj',
        '/CN=localhost',
      )
      fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
      ssl(
        'x509',
        '-req',
        '-in',
        'server.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        'server.pem',
        '-days',
        '2',
        '-extfile',
        'ext.cnf',
      )
      const token = 'js-client-token-0123456789'
      fs.writeFileSync(path.join(dir, 'tokens'), token + '\n')
      const s = await startService.call({
        cmd: [
          process.env.SNOWMINT_SERVE,
          'serve',
          '--listen',
          '127.0.0.1:0',
          '--node',
          '7',
          '--tls-cert',
          path.join(dir, 'server.pem'),
          '--tls-key',
          path.join(dir, 'server.key'),
          '--auth-token-file',
          path.join(dir, 'tokens'),
        ],
      })
      try {
        assert.match(s.url, /^https:\/\/127\.0\.0\.1:/)
        const ca = fs.readFileSync(path.join(dir, 'ca.pem'))
        const c = new Client({ url: s.url, prefetch: 5, ca, token })
        const ids = await c.nextIds(20)
        assert.equal(new Set(ids).size, 20)
        c.close()
        // Without the CA the certificate is not trusted.
        const untrusted = new Client({ url: s.url, retries: 0, token })
        await rejectsWith(assert, untrusted.nextId(), 'SERVICE_UNAVAILABLE')
        // The CA but no token or another: 401 (INVALID_ARGUMENT, field authorization), the token in no message.
        for (const other of [undefined, 'another-token-0123456789']) {
          const opts = { url: s.url, retries: 0, ca: ca.toString() }
          if (other) opts.token = other
          const e = await rejectsWith(assert, new Client(opts).nextId(), 'INVALID_ARGUMENT')
          assert.equal(e.field, 'authorization')
          assert.ok(!e.message.includes('token-0123'), e.message)
        }
        assert.throws(() => new Client({ url: 'http://127.0.0.1:1', ca }), /https/)
      } finally {
        s.kill()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })

    t(
      'the real service refuses a count above its limit: INVALID_ARGUMENT (field count), not retried',
      async () => {
        const s = await startService.call({
          cmd: [
            process.env.SNOWMINT_SERVE,
            'serve',
            '--listen',
            '127.0.0.1:0',
            '--node',
            '7',
            '--max-count',
            '50',
          ],
        })
        try {
          const c = new Client({ url: s.url, prefetch: 100, retries: 3 })
          const e = await rejectsWith(assert, c.nextId(), 'INVALID_ARGUMENT')
          assert.equal(e.field, 'count')
          assert.equal(c.stats().requests, 1)
          const ok = new Client({ url: s.url, prefetch: 50 })
          assert.equal(new Set(await ok.nextIds(120)).size, 120)
          ok.close()
          c.close()
        } finally {
          s.kill()
        }
      },
    )
  }

  t('a service that never answers times out', async () => {
    const net = await import('node:net')
    const sockets = []
    const server = net.createServer((sock) => sockets.push(sock)) // accepts, never answers
    await new Promise((r) => server.listen(0, '127.0.0.1', r))
    try {
      const c = new Client({ url: `http://127.0.0.1:${server.address().port}`, timeoutMs: 200, retries: 1 })
      const t0 = performance.now()
      const e = await rejectsWith(assert, c.nextId(), 'SERVICE_UNAVAILABLE')
      assert.match(e.message, /within 200 ms/)
      assert.ok(performance.now() - t0 <= c.maxWaitMs + 1000) // scheduling slack on a busy machine
    } finally {
      for (const s of sockets) s.destroy()
      server.close()
    }
  })

  t('a redirect is never followed: INVALID_ARGUMENT (field url), not retried', async () => {
    const a = await startService()
    const b = await startService()
    try {
      await a.control(`/_test/misbehave?mode=redirect&to=${encodeURIComponent(b.url)}`)
      const c = new Client({ url: a.url, retries: 3 })
      const e = await rejectsWith(assert, c.nextId(), 'INVALID_ARGUMENT')
      assert.equal(e.field, 'url')
      assert.match(e.message, /redirect/)
      assert.equal(c.stats().requests, 1)
      assert.equal((await b.stats()).requests, 0, 'the other origin was never asked')
      c.close()
    } finally {
      a.kill()
      b.kill()
    }
  })

  t('a ca that holds no certificate is refused at construction', () => {
    for (const ca of [
      'not a pem',
      Buffer.from('not a pem'),
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
    ]) {
      assert.throws(
        () => new Client({ url: 'https://127.0.0.1:1', ca }),
        (e) => e instanceof SnowmintError && e.code === 'INVALID_ARGUMENT' && e.field === 'ca',
        String(ca),
      )
    }
  })

  t('bad options: TypeError for a wrong type, INVALID_ARGUMENT for a bad value', () => {
    const bad = (options, cls, code) =>
      assert.throws(
        () => new Client(options),
        (e) => e instanceof cls && e.code === code,
        JSON.stringify(options),
      )
    bad(undefined, TypeError, 'INVALID_ARGUMENT')
    bad({}, TypeError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1', prefetch: '10' }, TypeError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1', prefetch: 1.5 }, TypeError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1', clock: 5 }, TypeError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1', nope: 1 }, TypeError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1', prefetch: 0 }, SnowmintError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1', prefetch: 10001 }, SnowmintError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1', retries: -1 }, SnowmintError, 'INVALID_ARGUMENT')
    bad({ url: 'ftp://127.0.0.1/' }, SnowmintError, 'INVALID_ARGUMENT')
    bad({ url: 'http://127.0.0.1:1/?x=1' }, SnowmintError, 'INVALID_ARGUMENT')
    const c = new Client({ url: 'http://127.0.0.1:1', clock: () => NaN })
    assert.throws(
      () => c.tryNextId(),
      (e) => e instanceof SnowmintError && e.code === 'INVALID_CLOCK',
    )
    return rejectsWith(assert, c.nextIds(-1), 'INVALID_ARGUMENT')
  })
}
