// The package as an ESM user imports it: named exports, the default export, the same classes as CJS.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import snowmintDefault, {
  Generator,
  Layout,
  decode,
  encode,
  parse,
  compose,
  minIdAt,
  ERROR_CODES,
  PRESET_NAMES,
} from 'snowmint'

const require = createRequire(import.meta.url)

test('ESM named exports are the CommonJS exports', () => {
  const cjs = require('snowmint')
  assert.equal(Generator, cjs.Generator)
  assert.equal(Layout, cjs.Layout)
  assert.equal(snowmintDefault.decode, cjs.decode)
  for (const f of [decode, encode, parse, compose, minIdAt]) assert.equal(typeof f, 'function')
  assert.ok(ERROR_CODES.includes('TOO_FAR_AHEAD'))
  assert.ok(PRESET_NAMES.includes('js53'))
})

test('ESM: mint, decode, errors with codes', () => {
  const gen = new Generator({ nodeId: 9, layout: Layout.preset('discord') })
  const id = gen.nextId()
  assert.equal(decode(id, 'discord').nodeId, 9)
  assert.equal(parse(encode(id, 'base58'), 'base58'), id)
  assert.throws(() => new Generator({ nodeId: 1024 }), { code: 'NODE_ID_OUT_OF_RANGE' })
  assert.throws(
    () => new Generator({ nodeId: true }),
    (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT',
  )
  // A string is a node source: a lease source needs Generator.open.
  assert.throws(
    () => new Generator({ nodeId: 'etcd://127.0.0.1:2379/x' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /Generator.open/.test(e.message),
  )
})

test('ESM: import "snowmint" resolves to the installed package (index.mjs, then its loader and platform package)', async () => {
  const project = fileURLToPath(new URL('..', import.meta.url))
  const resolved = fileURLToPath(import.meta.resolve('snowmint'))
  assert.equal(resolved, join(project, 'node_modules', 'snowmint', 'index.mjs'))
  await import('snowmint')
  const nodes = Object.keys(require.cache).filter((f) => f.endsWith('.node'))
  assert.deepEqual(nodes, [
    join(project, 'node_modules', 'snowmint-linux-x64-gnu', 'snowmint.linux-x64-gnu.node'),
  ])
})
