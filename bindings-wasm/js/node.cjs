'use strict';
// Node (CommonJS) entry: the wasm-bindgen `nodejs` build, loaded synchronously.
const wasm = require('../dist/nodejs/snowmint_wasm.js');
// The shared surface (js/surface.js, as CommonJS): SnowmintError, JSON forms, util.inspect output.
const { SnowmintError, installSurface } = require('../dist/surface.cjs');
// The ID-service client (js/client.js, as CommonJS), shared with the native package.
const { makeClient } = require('../dist/client.cjs');

// The fast nextId() path and the Opaque class: js/fast-path.js, as CommonJS (dist/fast-path.cjs).
const { installFastPath, makeOpaque } = require('../dist/fast-path.cjs');
installFastPath(wasm);

const Opaque = makeOpaque(wasm, require('../dist/nodejs/snowmint_wasm_opaque.js'));
const surface = installSurface({ ...wasm, Opaque });

const ERROR_CODES = Object.freeze(wasm.__errorCodes().split(','));

module.exports = {
  Client: makeClient(ERROR_CODES),
  Layout: wasm.Layout,
  Generator: wasm.Generator,
  Opaque,
  decode: surface.decode,
  compose: wasm.compose,
  minIdAt: wasm.minIdAt,
  encode: wasm.encode,
  parse: wasm.parse,
  ERROR_CODES,
  PRESET_NAMES: surface.PRESET_NAMES,
  SnowmintError,
};
