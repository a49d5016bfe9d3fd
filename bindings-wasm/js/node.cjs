'use strict';
// Node (CommonJS) entry: the wasm-bindgen `nodejs` build, loaded synchronously.
const wasm = require('../dist/nodejs/snowmint_wasm.js');

module.exports = {
  Layout: wasm.Layout,
  Generator: wasm.Generator,
  decode: wasm.decode,
  compose: wasm.compose,
  minIdAt: wasm.minIdAt,
  encode: wasm.encode,
  parse: wasm.parse,
  ERROR_CODES: Object.freeze(wasm.__errorCodes()),
};
