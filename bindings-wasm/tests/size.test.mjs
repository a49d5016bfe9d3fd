// The optimized module stays within its budget: 60 KB (61,440 bytes) for every build in the package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const pkg = path.join(process.env.SNOWMINT_WASM_PROJECT, 'node_modules', 'snowmint-wasm');

test('optimized .wasm ≤ 60 KB in every build', () => {
  for (const target of ['nodejs', 'web', 'bundler', 'no-modules']) {
    const size = fs.statSync(path.join(pkg, 'dist', target, 'snowmint_wasm_bg.wasm')).size;
    console.log(`# ${target}: ${size} bytes`);
    assert.ok(size <= 61440, `${target}: ${size} bytes > 61440`);
  }
});
