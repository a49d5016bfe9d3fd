// The shared JavaScript suite (tests/js/surface.mjs, also run on the native package `snowmint`) against
// the installed tarball: same exports, members, errors, JSON and console output, and d.ts files that agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { api } from './load.mjs';

const { surfaceTests } = await import(new URL('../../tests/js/surface.mjs', import.meta.url).href);
const { default: _, ...named } = api;
surfaceTests(named, {
  test,
  assert,
  flavour: 'wasm',
  packageName: 'snowmint-wasm',
  project: process.env.SNOWMINT_WASM_PROJECT,
  tsc: path.join(process.env.SNOWMINT_TOOLS, '.bin', 'tsc'),
});
