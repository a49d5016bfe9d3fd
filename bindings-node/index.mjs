// ESM entry: re-exports the native binding loaded by the generated CommonJS loader.
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
} = native
export default native
