// `tsc --noEmit` of examples/example.ts (CommonJS) and examples/esm-example.mts (ES module) against the
// installed package's index.d.ts; each has `@ts-expect-error` lines, so wrong types must be rejected too.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

const project = fileURLToPath(new URL('..', import.meta.url))

test('tsc --noEmit: the TypeScript examples (CommonJS and ESM) type-check against the shipped index.d.ts', () => {
  const tsc = process.env.SNOWMINT_TSC
  assert.ok(tsc && existsSync(tsc), `typescript is not installed (SNOWMINT_TSC=${tsc})`)
  const r = spawnSync(tsc, ['--noEmit', '--listFiles', '-p', join(project, 'examples', 'tsconfig.json')], {
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`)
  // The types came from the installed main package, and both examples were checked.
  const files = r.stdout.split('\n').map((l) => l.trim())
  for (const f of [
    join(project, 'node_modules', 'snowmint', 'index.d.ts'),
    join(project, 'examples', 'example.ts'),
    join(project, 'examples', 'esm-example.mts'),
  ]) {
    assert.ok(files.includes(f), `${f} not in tsc's files:\n${r.stdout}`)
  }
})
