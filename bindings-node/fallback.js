// The WebAssembly fallback. Where no native addon loads — a platform with no platform package (macOS,
// Windows, FreeBSD, a CPU or C library the addon is not built for) or an addon the system refuses (a
// glibc older than the one it was linked against) — `require('snowmint')` and `import 'snowmint'` serve
// snowmint-wasm, the same Rust core compiled to WebAssembly, behind the same API: the same IDs from the
// same inputs (tests/vectors/ is run against it), the same errors and codes.
//
// What needs the operating system is the native addon's alone: node sources other than a fixed node ID
// (leases on a store, `env`, `k8s`, `ip`), state files, sequencers and range sequences. There each call
// throws (or rejects with) a SnowmintError with code INVALID_ARGUMENT that says so and why the addon did
// not load; secrets in a source (a password in a store URL) are never repeated. `backend` tells which
// build is serving ('native' or 'wasm').
'use strict'

/** Why the native addon did not load, in one line (napi-rs's loader lists every path it tried). */
function because(reason, where) {
  const text = reason && reason.message ? String(reason.message) : String(reason)
  if (text.startsWith('Cannot find native binding')) return `no platform package for ${where} is installed`
  return text.split('\n')[0].slice(0, 300)
}

/** A string `nodeId` the WASM build takes: a node ID in decimal (SPEC §3.1's fixed source). */
const DECIMAL =
  /^[\s\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[0-9]+[\s\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/

/** What a node source is, without its details (a store URL may hold a password). */
function sourceKind(s) {
  const scheme = /^\s*([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(s)
  if (scheme) return `the node source ${scheme[1]}://… (a lease)`
  const word = /^\s*([A-Za-z0-9]+)/.exec(s)
  return word ? `the node source ${word[1]}` : 'this node source'
}

module.exports = function wasmFallback(reason) {
  const where = `${process.platform}-${process.arch}`
  const why = because(reason, where)
  let wasm
  try {
    wasm = require('snowmint-wasm')
  } catch (e) {
    throw new Error(
      `snowmint: the native addon did not load on ${where} (${why}), nor its WebAssembly fallback ` +
        `snowmint-wasm (${because(e, where)}): install snowmint's optional dependencies (npm install without --omit=optional)`,
    )
  }
  const { SnowmintError } = wasm

  function unsupported(what) {
    const e = new SnowmintError(
      `${what} needs snowmint's native addon, which did not load on ${where} (${why}); ` +
        'this process runs the WebAssembly build, which mints from a fixed node ID (a number, bigint or ' +
        'decimal string) and has no leases, env/k8s/ip node sources, state files, sequencers or range sequences',
    )
    e.code = 'INVALID_ARGUMENT'
    return e
  }

  /** Refuses, before the module sees them, the options only the native addon serves. */
  function check(options) {
    if (options === null || typeof options !== 'object') return
    if (options.stateFile !== undefined) throw unsupported('stateFile (a state file shared by processes)')
    if (typeof options.nodeId === 'string' && !DECIMAL.test(options.nodeId)) {
      throw unsupported(sourceKind(options.nodeId))
    }
    if (options.waitForNodeMs !== undefined) throw unsupported('waitForNodeMs (waiting for a leased node ID)')
  }

  class Generator extends wasm.Generator {
    constructor(options) {
      check(options)
      super(options)
    }
    /** As the native `Generator.open`: here only fixed node IDs, so nothing to wait for. */
    static async open(options) {
      return new Generator(options)
    }
    /** No lease: a fixed node ID. */
    get lease() {
      return null
    }
    /** No state file. */
    get stateFile() {
      return null
    }
    flush() {
      throw unsupported('flush (a state file)')
    }
    verifyStateFile() {
      throw unsupported('verifyStateFile (a state file)')
    }
    async detach() {
      throw unsupported('detach (a leased node ID)')
    }
    async attach() {
      throw unsupported('attach (a leased node ID)')
    }
    /** Nothing to give back: frees the module's memory for this generator. */
    async close() {
      this.free()
    }
  }

  class Sequencer {
    constructor() {
      throw unsupported('Sequencer')
    }
    static async create() {
      throw unsupported('Sequencer.create')
    }
    static async open() {
      throw unsupported('Sequencer.open')
    }
    static async list() {
      throw unsupported('Sequencer.list')
    }
  }

  class RangeSequence {
    constructor() {
      throw unsupported('RangeSequence')
    }
    static async open() {
      throw unsupported('RangeSequence.open')
    }
  }

  return Object.freeze({
    ...wasm,
    Generator,
    Sequencer,
    RangeSequence,
    backend: 'wasm',
  })
}
