// CommonJS, from the installed tarball: `require('snowmint-wasm')` in a fresh project (test.sh copies this
// file into it). Asserts that the package, its wasm-bindgen `nodejs` glue and the .wasm bytes all come
// from the project's node_modules, never from the source folder (bindings-wasm/).
const fs = require('node:fs');
const path = require('node:path');

// Record which .wasm file the glue reads (before anything loads the package).
const wasmReads = [];
const realReadFileSync = fs.readFileSync;
fs.readFileSync = function readFileSync(file, ...rest) {
  if (String(file).endsWith('.wasm')) wasmReads.push(String(file));
  return realReadFileSync.call(this, file, ...rest);
};
const snowmint = require('snowmint-wasm');
fs.readFileSync = realReadFileSync;

const test = require('node:test');
const assert = require('node:assert/strict');

const project = path.resolve(__dirname, '..');
const pkg = path.join(project, 'node_modules', 'snowmint-wasm');
const source = process.env.SNOWMINT_WASM_SRC;

test('require("snowmint-wasm") resolves to the installed package (js/node.cjs)', () => {
  assert.equal(process.env.NODE_PATH, undefined);
  assert.equal(require.resolve('snowmint-wasm'), path.join(pkg, 'js', 'node.cjs'));
  assert.equal(require.resolve('snowmint-wasm/package.json'), path.join(pkg, 'package.json'));
});

test('the glue and the .wasm were loaded from the installed tarball, nothing from the source folder', () => {
  assert.ok(source, 'test.sh passes SNOWMINT_WASM_SRC');
  // The main module and Opaque IDs' module (see opaque/src/lib.rs).
  assert.deepEqual(
    wasmReads,
    ['snowmint_wasm_bg.wasm', 'snowmint_wasm_opaque_bg.wasm'].map((f) => path.join(pkg, 'dist', 'nodejs', f)),
  );
  const loaded = Object.keys(require.cache).filter((f) => f.includes('snowmint'));
  assert.ok(loaded.includes(path.join(pkg, 'dist', 'nodejs', 'snowmint_wasm.js')), loaded.join('\n'));
  for (const file of loaded) {
    if (file === __filename) continue;
    assert.ok(file.startsWith(pkg + path.sep), `${file} is not from the installed package`);
    assert.ok(!file.startsWith(source + path.sep), `${file} was loaded from the source folder`);
  }
});

test('the tarball holds the package only: entries, builds, types; no Rust sources or tests', () => {
  for (const f of [
    'package.json',
    'README.md',
    'index.d.ts',
    'js/node.cjs',
    'js/node.mjs',
    'js/web.js',
    'js/bundler.js',
    'dist/nodejs/snowmint_wasm.js',
    'dist/nodejs/snowmint_wasm_bg.wasm',
    'dist/web/snowmint_wasm_bg.wasm',
  ]) {
    assert.ok(fs.existsSync(path.join(pkg, f)), f);
  }
  for (const f of ['src', 'Cargo.toml', 'tests', 'build.sh', 'www'])
    assert.ok(!fs.existsSync(path.join(pkg, f)), f);
  const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
  assert.equal(manifest.name, 'snowmint-wasm');
  assert.equal(manifest.exports['.'].types, './index.d.ts');
});

test('CommonJS: mint, batch, decode, encode/parse, coded errors', () => {
  const { Generator, Layout, decode, encode, parse, ERROR_CODES } = snowmint;
  let now = 1_750_000_000_000;
  const gen = new Generator({ nodeId: 7, layout: 'twitter', clock: () => now });
  const a = gen.nextId();
  const b = gen.nextId();
  assert.equal(typeof a, 'bigint');
  assert.ok(b > a);
  assert.deepEqual([decode(a).nodeId, decode(a).timestampMs, decode(b).sequence], [7, now, 1]);
  const batch = gen.nextIds(1000);
  assert.ok(batch instanceof BigUint64Array && batch.length === 1000 && batch[0] > b);
  assert.equal(parse(encode(a, 'base58'), 'base58'), a);
  assert.equal(Layout.preset('discord').epochMs, 1420070400000n);
  assert.ok(ERROR_CODES.includes('NODE_ID_OUT_OF_RANGE'));
  assert.throws(
    () => new Generator({ nodeId: 1024 }),
    (e) => e instanceof Error && e.code === 'NODE_ID_OUT_OF_RANGE',
  );
  assert.throws(
    () => parse('12x', 'dec'),
    (e) => e.code === 'PARSE',
  );
});
