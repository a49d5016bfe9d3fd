// Every case of every tests/vectors/*.json file through the installed package, by the shared JS runner
// (tests/js/conformance.mjs, also used by the native Node package).
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { api } from './load.mjs';
import { runConformance } from '../../tests/js/conformance.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const vectorsDir = process.env.SNOWMINT_VECTORS_DIR || path.join(here, '..', '..', 'tests', 'vectors');

const total = await runConformance(api, { test, assert, vectorsDir, runtime: 'wasm-node' });
test(`conformance corpus is not empty (${total} cases)`, () => assert.ok(total > 0));
