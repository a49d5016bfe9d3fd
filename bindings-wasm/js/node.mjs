// Node (ES module) entry: the same objects as the CommonJS entry.
import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./node.cjs');

export const {
  Client,
  Layout,
  Generator,
  Opaque,
  decode,
  compose,
  minIdAt,
  encode,
  parse,
  ERROR_CODES,
  PRESET_NAMES,
  SnowmintError,
} = api;
export default api;
