// The shared JavaScript suite (tests/js/surface.mjs, also run on snowmint-wasm) against the installed
// package: same exports, members, errors, JSON and console output, and d.ts files that agree.
import test from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath, pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const { surfaceTests } = await import(new URL('surface.mjs', pathToFileURL(runner)).href)
const { default: _, ...named } = api
surfaceTests(named, {
  test,
  assert,
  flavour: 'native',
  packageName: 'snowmint',
  project: fileURLToPath(new URL('..', import.meta.url)),
  tsc: process.env.SNOWMINT_TSC,
})
