// `tsc --noEmit` of examples/example.ts against the installed package's generated index.d.ts.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

const project = fileURLToPath(new URL('..', import.meta.url))

test('tsc --noEmit: the TypeScript example type-checks against index.d.ts', () => {
  const tsc = join(project, 'node_modules', '.bin', 'tsc')
  assert.ok(existsSync(tsc), `typescript is not installed in ${project}`)
  const r = spawnSync(tsc, ['--noEmit', '-p', join(project, 'examples', 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 })
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`)
})
