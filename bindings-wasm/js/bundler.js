// Bundler entry (webpack's asyncWebAssembly, vite-plugin-wasm …): the .wasm is imported as a module.
import * as wasm from '../dist/bundler/snowmint_wasm.js';
import * as opaqueCore from '../dist/bundler/snowmint_wasm_opaque.js';
import { installFastPath, makeOpaque } from './fast-path.js';
import { SnowmintError, installSurface } from './surface.js';
import { makeClient } from './client.js';
import { makeOfflineGenerator } from './offline.js';

installFastPath(wasm);

export const { Layout, Generator, compose, minIdAt, encode, parse } = wasm;
export const Opaque = makeOpaque(wasm, opaqueCore);
export const { decode, PRESET_NAMES } = installSurface({ ...wasm, Opaque });
export { SnowmintError };
export const ERROR_CODES = Object.freeze(wasm.__errorCodes().split(','));
export const Client = makeClient(ERROR_CODES);
// Browser-only: minting under a lease of the ID service, offline too (js/offline.js).
export const OfflineGenerator = makeOfflineGenerator({ Generator: wasm.Generator, SnowmintError });
