// The package as installed from its two npm tarballs (test.sh): `snowmint` (the napi-rs loader, no
// binary) and `snowmint-linux-x64-gnu` (the platform package with the .node), both in this project's
// node_modules. Asserts where everything was loaded from: the platform package, never the source folder
// (bindings-node/) or cargo's target dir, with no NODE_PATH or napi override on the way.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const project = path.resolve(__dirname, '..')
const modules = path.join(project, 'node_modules')
const platformPkg = path.join(modules, 'snowmint-linux-x64-gnu')
const addon = path.join(platformPkg, 'snowmint.linux-x64-gnu.node')
const cargoTarget = process.env.SNOWMINT_CARGO_TARGET
// The source folder, and cargo's build outputs (this project itself lives under target/, so not all of it).
const forbidden =
  process.env.SNOWMINT_NODE_SRC && cargoTarget
    ? [
        process.env.SNOWMINT_NODE_SRC,
        ...['release', 'debug', 'x86_64-unknown-linux-gnu'].map((d) => path.join(cargoTarget, d)),
      ]
    : []

/** Every file this process has mapped (shared objects included) that names snowmint. */
function mappedSnowmintFiles() {
  const files = new Set()
  for (const line of fs.readFileSync('/proc/self/maps', 'utf8').split('\n')) {
    const file = line.split(/\s+/).slice(5).join(' ')
    if (file.startsWith('/') && /snowmint/.test(path.basename(file))) files.add(file)
  }
  return [...files]
}

test('no NODE_PATH and no napi override in the environment', () => {
  assert.equal(process.env.NODE_PATH, undefined)
  assert.equal(process.env.NAPI_RS_NATIVE_LIBRARY_PATH, undefined)
  assert.ok(forbidden.length > 0, 'test.sh passes SNOWMINT_NODE_SRC and SNOWMINT_CARGO_TARGET')
})

test('the native addon serves (not the WebAssembly fallback)', () => {
  assert.equal(require('snowmint').backend, 'native')
})

test('both packages are installed, at the same version, in the platform-package layout', () => {
  const main = JSON.parse(fs.readFileSync(path.join(modules, 'snowmint', 'package.json'), 'utf8'))
  const platform = JSON.parse(fs.readFileSync(path.join(platformPkg, 'package.json'), 'utf8'))
  assert.equal(platform.name, 'snowmint-linux-x64-gnu')
  assert.equal(platform.version, main.version)
  assert.equal(main.optionalDependencies['snowmint-linux-x64-gnu'], main.version)
  assert.deepEqual(platform.os, ['linux'])
  assert.deepEqual(platform.cpu, ['x64'])
  assert.deepEqual(platform.libc, ['glibc'])
  assert.equal(platform.main, 'snowmint.linux-x64-gnu.node')
  assert.ok(main.napi.targets.includes('x86_64-unknown-linux-gnu'))
  // The main package ships the loader only; the binary lives in the platform package.
  const shipped = fs.readdirSync(path.join(modules, 'snowmint'))
  assert.deepEqual(
    shipped.filter((f) => f.endsWith('.node')),
    [],
  )
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'package.json', 'README.md'])
    assert.ok(shipped.includes(f), f)
  assert.ok(fs.statSync(addon).size > 0)
})

test('require("snowmint") resolves to the installed loader, which loads the platform package', () => {
  assert.equal(require.resolve('snowmint'), path.join(modules, 'snowmint', 'index.js'))
  const snowmint = require('snowmint')
  const nodes = Object.keys(require.cache).filter((f) => f.endsWith('.node'))
  assert.deepEqual(nodes, [addon])
  assert.deepEqual(mappedSnowmintFiles(), [addon])
  for (const file of [...Object.keys(require.cache), ...mappedSnowmintFiles()]) {
    if (/snowmint/.test(file) && !file.startsWith(path.join(project, 'tests') + path.sep)) {
      assert.ok(file.startsWith(modules + path.sep), `${file} is not from the project's node_modules`)
    }
    for (const dir of forbidden) assert.ok(!file.startsWith(dir + path.sep), `${file} was loaded from ${dir}`)
  }
  // It works: mint, decode, a coded error.
  const gen = new snowmint.Generator({ nodeId: 7 })
  const id = gen.nextId()
  assert.equal(typeof id, 'bigint')
  assert.equal(snowmint.decode(id).nodeId, 7)
  assert.throws(() => new snowmint.Generator({ nodeId: 1024 }), { code: 'NODE_ID_OUT_OF_RANGE' })
})
