// ES module, from the installed tarball: `import … from 'snowmint-wasm'` in a fresh project (test.sh
// copies this file into it). The default and named exports, the same objects as through require().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import snowmint, {
  Generator,
  Layout,
  decode,
  compose,
  minIdAt,
  encode,
  parse,
  ERROR_CODES,
} from 'snowmint-wasm';

const require = createRequire(import.meta.url);
const project = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = path.join(project, 'node_modules', 'snowmint-wasm');

test('import "snowmint-wasm" resolves to the installed package (js/node.mjs)', () => {
  assert.equal(fileURLToPath(import.meta.resolve('snowmint-wasm')), path.join(pkg, 'js', 'node.mjs'));
  assert.ok(
    require.cache[path.join(pkg, 'dist', 'nodejs', 'snowmint_wasm.js')],
    'the nodejs build was loaded from the project',
  );
  for (const file of Object.keys(require.cache)) {
    if (file.includes('snowmint'))
      assert.ok(file.startsWith(pkg + path.sep), `${file} is not from the installed package`);
  }
});

test('ESM: named exports, the default export and require() give the same objects', () => {
  const cjs = require('snowmint-wasm');
  const named = { Generator, Layout, decode, compose, minIdAt, encode, parse, ERROR_CODES };
  for (const [name, value] of Object.entries(named)) {
    assert.ok(value !== undefined, name);
    assert.equal(snowmint[name], value, name);
    assert.equal(cjs[name], value, name);
  }
});

test('ESM: mint, decode, compose, minIdAt, coded errors', () => {
  const gen = new Generator({ nodeId: 9, layout: Layout.preset('discord') });
  const id = gen.nextId();
  const d = decode(id, 'discord');
  assert.equal(d.nodeId, 9);
  assert.equal(
    compose({ timestampTicks: d.timestampTicks, nodeId: d.nodeId, sequence: d.sequence }, 'discord'),
    id,
  );
  assert.ok(minIdAt(d.date, 'discord') <= id);
  assert.equal(parse(encode(id, 'hex'), 'hex'), id);
  assert.throws(
    () => new Generator({ nodeId: -1 }),
    (e) => e instanceof Error && typeof e.code === 'string' && ERROR_CODES.includes(e.code),
  );
  assert.throws(
    () => decode('nope'),
    (e) => e.code === 'PARSE' || e.code === 'INVALID_ID',
  );
});
