// The `bundler` build (the .wasm imported as an ES module, as webpack/vite do) loads and mints, checked
// through Node's own wasm ES-module integration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

test('snowmint-wasm/bundler works where .wasm is an ES module', () => {
  const file = path.join(process.env.SNOWMINT_WASM_PROJECT, 'bundler-check.mjs');
  fs.writeFileSync(
    file,
    `import { Generator, decode, ERROR_CODES } from 'snowmint-wasm/bundler';
const id = new Generator({ nodeId: 9 }).nextId();
console.log(typeof id, decode(id).nodeId, ERROR_CODES.includes('PARSE'));
`,
  );
  const out = execFileSync(process.execPath, ['--no-warnings', '--experimental-wasm-modules', file], {
    encoding: 'utf8',
  });
  assert.equal(out, 'bigint 9 true\n');
});
