// TypeScript against the shipped index.d.ts: `tsc --noEmit` of examples/example.ts (CommonJS) and
// examples/esm-example.mts (ES module) in the fresh project. Both have `@ts-expect-error` lines, so types
// that are too loose (or `any`) fail the check as surely as types that are wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const project = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('tsc --noEmit: the examples type-check against the installed index.d.ts', () => {
  const tsc = process.env.SNOWMINT_TSC;
  assert.ok(tsc && existsSync(tsc), `typescript is not installed (SNOWMINT_TSC=${tsc})`);
  const r = spawnSync(
    tsc,
    ['--noEmit', '--listFiles', '-p', path.join(project, 'examples', 'tsconfig.json')],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
  // The types came from the installed package.
  const files = r.stdout.split('\n').map((l) => l.trim());
  assert.ok(files.includes(path.join(project, 'node_modules', 'snowmint-wasm', 'index.d.ts')), r.stdout);
});
