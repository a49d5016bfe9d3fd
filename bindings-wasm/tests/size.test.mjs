// The optimized main module stays within its budget: 60.5 KB (61,952 bytes; 60 KB until the shared
// generator's per-thread windows added their exact statistics, 51 bytes here) for every build in the package;
// Opaque IDs' module (loaded next to it) within 24 KB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const pkg = path.join(process.env.SNOWMINT_WASM_PROJECT, 'node_modules', 'snowmint-wasm');

test('optimized .wasm ≤ 60.5 KB in every build', () => {
  for (const target of ['nodejs', 'web', 'bundler', 'no-modules']) {
    const size = fs.statSync(path.join(pkg, 'dist', target, 'snowmint_wasm_bg.wasm')).size;
    console.log(`# ${target}: ${size} bytes`);
    assert.ok(size <= 61952, `${target}: ${size} bytes > 61952`);
  }
});

test('optimized Opaque IDs module ≤ 24 KB in every build', () => {
  for (const target of ['nodejs', 'web', 'bundler', 'no-modules']) {
    const size = fs.statSync(path.join(pkg, 'dist', target, 'snowmint_wasm_opaque_bg.wasm')).size;
    console.log(`# ${target} opaque: ${size} bytes`);
    assert.ok(size <= 24576, `${target}: ${size} bytes > 24576`);
  }
});
