// The package entry (CommonJS). `binding.js` is napi-rs's generated loader: it finds the platform
// package's addon. This file re-exports it, with one addition: a faster `nextId`.
//
// Turning a u64 into a bigint costs N-API more than minting the ID, while JavaScript reads a bigint out
// of a BigUint64Array in a few nanoseconds; and V8 calls a native function quickly only when its
// optimizing compiler knows which function it is. So every generator is registered, at construction,
// in its environment's table, and gets its own `nextId` calling one module-level function, `nextIdAt`:
// `__mintAt(index)` mints into the environment's ID cell (errors throw exactly as before), and the cell
// is read through a BigUint64Array over it. The own `nextId` is bound: it can be detached
// (`const { nextId } = gen`) and keeps its generator alive. Where the runtime refuses the external
// buffer behind the cell, `Generator` is the addon's class unchanged. Sequencing is all in the Rust core.
//
// Where the addon does not load (no platform package for this platform, or one the system refuses), the
// package serves its WebAssembly build instead (fallback.js); SNOWMINT_WASM=1 asks for it anywhere.
'use strict'

let native
try {
  if (process.env.SNOWMINT_WASM === '1') throw new Error('SNOWMINT_WASM=1 asks for the WebAssembly build')
  native = require('./binding.js')
} catch (reason) {
  module.exports = require('./fallback.js')(reason)
  return
}
// The surface shared with snowmint-wasm (generated from bindings-wasm/js/surface.js by build.sh):
// the SnowmintError class every non-type error is made of, JSON forms and util.inspect output.
const { SnowmintError, installSurface } = require('./surface.cjs')
// The ID-service client (generated from bindings-wasm/js/client.js by build.sh), shared with snowmint-wasm.
const { makeClient } = require('./client.cjs')

native.__setErrorClass(SnowmintError)
const surface = installSurface(native)
// Sequencers are native only: console.log shows their name, node count and layout.
Object.defineProperty(native.Sequencer.prototype, Symbol.for('nodejs.util.inspect.custom'), {
  value: function (depth, options, inspect) {
    const l = this.layout
    const fields = { name: this.name, nodeCount: this.nodeCount, layout: l.name !== null ? l.name : l }
    return depth < 0
      ? '[Sequencer]'
      : `Sequencer ${inspect(fields, { ...options, depth: options.depth === null ? null : options.depth - 1 })}`
  },
  writable: true,
  configurable: true,
})

const slot = native.__idSlot()
const register = native.__register
const mintAt = native.__mintAt

/** Mints from registered generator `index`. `self` is not used: passing it keeps the generator alive
 * as long as a detached `nextId` can still call this. */
function nextIdAt(index, self) {
  mintAt(index, self)
  return slot[0]
}

/** Gives `gen` its own fast `nextId` (see above). */
function fast(gen) {
  const index = register(gen)
  Object.defineProperty(gen, 'nextId', {
    value: function nextId() {
      return nextIdAt(index, gen)
    },
    writable: true,
    configurable: true,
  })
  return gen
}

let Generator = native.Generator
if (slot !== null) {
  Generator = class Generator extends native.Generator {
    constructor(options) {
      super(options)
      fast(this)
    }
  }
}

// Opaque: encode / decode through module-level N-API functions over a per-object handle, the result
// read from the ID cell as nextId reads it (see src/opaque.rs: a napi-rs method call costs several
// times the permutation). Where the cell cannot be viewed, the napi-rs methods serve.
let Opaque = native.Opaque
if (slot !== null) {
  const opaqueEncode = native.__opaqueEncode
  const opaqueDecode = native.__opaqueDecode
  Opaque = class Opaque extends native.Opaque {
    constructor(options) {
      super(options)
      const handle = native.__opaqueHandle(this)
      Object.defineProperties(this, {
        encode: {
          value: function encode(id) {
            opaqueEncode(handle, id)
            return slot[0]
          },
          writable: true,
          configurable: true,
        },
        decode: {
          value: function decode(token) {
            opaqueDecode(handle, token)
            return slot[0]
          },
          writable: true,
          configurable: true,
        },
      })
    }
  }
}
// Generators made by the addon (Generator.open, Sequencer#attach: resolved on the main thread after the
// claim ran on the thread pool) get the same class and the same fast nextId as constructed ones.
function adopt(gen) {
  if (slot === null) return gen
  Object.setPrototypeOf(gen, Generator.prototype)
  return fast(gen)
}
const nativeOpen = native.Generator.open
Object.defineProperty(Generator, 'open', {
  value: async function open(options) {
    return adopt(await nativeOpen.call(native.Generator, options))
  },
  writable: true,
  configurable: true,
})
const nativeAttach = native.Sequencer.prototype.attach
Object.defineProperty(native.Sequencer.prototype, 'attach', {
  value: async function attach() {
    return adopt(await nativeAttach.call(this))
  },
  writable: true,
  configurable: true,
})

// RangeSequence: `nextId` through the module-level `__rangeNext(handle)`, which leaves the value in the
// ID cell, read here as a double (see src/range.rs: a napi-rs method call costs several times the atomic
// step). Sequences come from `RangeSequence.open`, which throws synchronously on bad options and rejects
// when the store refuses, as the addon's does. Where the cell cannot be viewed, the method serves.
const nativeRangeOpen = native.RangeSequence.open
const rangeHandle = native.__rangeHandle
const rangeNext = native.__rangeNext
const rangeCell = slot === null ? null : new Float64Array(slot.buffer, slot.byteOffset, 1)
class RangeSequence extends native.RangeSequence {
  static open(options) {
    return nativeRangeOpen.call(native.RangeSequence, options).then((seq) => {
      Object.setPrototypeOf(seq, RangeSequence.prototype)
      if (rangeCell !== null) {
        const handle = rangeHandle(seq)
        Object.defineProperty(seq, 'nextId', {
          value: function nextId() {
            rangeNext(handle)
            return rangeCell[0]
          },
          writable: true,
          configurable: true,
        })
      }
      return seq
    })
  }
}

module.exports = {
  Client: makeClient(native.ERROR_CODES),
  Generator,
  Layout: native.Layout,
  Opaque,
  RangeSequence,
  Sequencer: native.Sequencer,
  compose: native.compose,
  decode: surface.decode,
  encode: native.encode,
  parse: native.parse,
  minIdAt: native.minIdAt,
  ERROR_CODES: Object.freeze(native.ERROR_CODES),
  PRESET_NAMES: surface.PRESET_NAMES,
  SnowmintError,
  backend: 'native',
}
