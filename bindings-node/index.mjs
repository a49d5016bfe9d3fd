// ESM entry: re-exports what the CommonJS entry serves (the native addon, or the WebAssembly fallback).
import { createRequire } from 'node:module'

const native = createRequire(import.meta.url)('./index.js')

export const {
  Client,
  Generator,
  Layout,
  Opaque,
  RangeSequence,
  Sequencer,
  compose,
  decode,
  encode,
  parse,
  minIdAt,
  ERROR_CODES,
  PRESET_NAMES,
  SnowmintError,
  backend,
} = native
export default native
