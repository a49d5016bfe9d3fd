// The README's quickstart runs as written (CommonJS) against the installed package.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { join } from 'node:path'

const project = fileURLToPath(new URL('..', import.meta.url))

test('README quickstart runs', () => {
  const readme = readFileSync(join(project, 'README.md'), 'utf8')
  const m = readme.match(/## Quickstart\s+```js\n([\s\S]*?)```/)
  assert.ok(m, 'no js code block under ## Quickstart')
  const file = join(project, 'quickstart.cjs')
  writeFileSync(file, m[1])
  const r = spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /NODE_ID_OUT_OF_RANGE/)
  assert.match(r.stdout, /^\d{4}-\d\d-\d\dT/m)
})

test('README restart recipe runs', () => {
  const readme = readFileSync(join(project, 'README.md'), 'utf8')
  const m = readme.match(/## Restarts: persist the high-water mark[\s\S]*?```js\n([\s\S]*?)```/)
  assert.ok(m, 'no js code block under ## Restarts')
  const file = join(project, 'restart.cjs')
  writeFileSync(file, m[1])
  const r = spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /^restarted after \d+$/m)
})

test('README lease example runs (embedded store, and etcd when the tests started it)', () => {
  const readme = readFileSync(join(project, 'README.md'), 'utf8')
  const m = readme.match(/## Leases and sequencers[\s\S]*?```js\n([\s\S]*?)```/)
  assert.ok(m, 'no js code block under ## Leases and sequencers')
  const file = join(project, 'leases.cjs')
  writeFileSync(file, m[1])
  const r = spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /true LEASE_LOST/)
  if (process.env.SNOWMINT_TEST_ETCD_URL) {
    assert.match(r.stdout, /etcd node \d+/)
    assert.match(r.stdout, /payments listed: false/)
  }
})

test('README client example runs against a live service', async () => {
  const { startService } = await import(
    new URL('client.mjs', pathToFileURL(process.env.SNOWMINT_CONFORMANCE)).href
  )
  const readme = readFileSync(join(project, 'README.md'), 'utf8')
  const m = readme.match(/## Client: IDs from the ID service[\s\S]*?```js\n([\s\S]*?)```/)
  assert.ok(m, 'no js code block under ## Client')
  const file = join(project, 'client.cjs')
  writeFileSync(file, m[1])
  const s = await startService()
  try {
    const r = spawnSync(process.execPath, [file], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, SNOWMINT_SERVICE_URL: s.url },
    })
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.stdout, 'true bigint\n5000 0\ntrue SERVICE_UNAVAILABLE\n')
  } finally {
    s.kill()
  }
})
