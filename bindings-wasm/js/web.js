// Browser entry: an ES module that fetches the .wasm next to it (top-level await), so importing it is
// all a page needs: `import { Generator } from 'snowmint-wasm'`. Serve `.wasm` as application/wasm.
import init, * as wasm from '../dist/web/snowmint_wasm.js';
import initOpaque, * as opaqueCore from '../dist/web/snowmint_wasm_opaque.js';
import { installFastPath, makeOpaque } from './fast-path.js';
import { SnowmintError, installSurface } from './surface.js';
import { makeClient } from './client.js';
import { makeOfflineGenerator } from './offline.js';

await Promise.all([
  init({ module_or_path: new URL('../dist/web/snowmint_wasm_bg.wasm', import.meta.url) }),
  initOpaque({ module_or_path: new URL('../dist/web/snowmint_wasm_opaque_bg.wasm', import.meta.url) }),
]);

installFastPath(wasm);

export const { Layout, Generator, compose, minIdAt, encode, parse } = wasm;
export const Opaque = makeOpaque(wasm, opaqueCore);
export const { decode, PRESET_NAMES } = installSurface({ ...wasm, Opaque });
export { SnowmintError };
export const ERROR_CODES = Object.freeze(wasm.__errorCodes().split(','));
export const Client = makeClient(ERROR_CODES);
// Browser-only: minting under a lease of the ID service, offline too (js/offline.js).
export const OfflineGenerator = makeOfflineGenerator({ Generator: wasm.Generator, SnowmintError });
