// Build step (not shipped): makes the shared surface (js/surface.js) usable by every entry.
//
//   node js/patch-glue.mjs cjs OUT.cjs     the CommonJS copy of js/surface.js (both packages' CJS entries)
//   node js/patch-glue.mjs client OUT.cjs  the CommonJS copy of js/client.js (next to surface.cjs)
//   (dist also writes fast-path.cjs: the CommonJS copy of js/fast-path.js, for node.cjs)
//   node js/patch-glue.mjs dist DIST       wasm-bindgen's generated glue in DIST/{nodejs,web,bundler,
//                                          no-modules}: errors the modules make are SnowmintErrors
//
// wasm-bindgen's glue makes the module's errors with `new Error(…)` / `new RangeError(…)` in the import
// shims that `js_sys::Error::new` / `RangeError::new` compile to; each becomes `new SnowmintError(…)`, the
// class imported from js/surface.js (or its CommonJS copy), so no byte of the .wasm pays for it. Every
// replacement is counted: a wasm-bindgen version that writes the shims differently fails the build.
// The main module's Generator constructor passes its options through js/surface.js's decimalNodeId
// first (a string nodeId read in JavaScript, so the size-budgeted module has no string path); it too
// must be found exactly once.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SOURCE = fs.readFileSync(path.join(HERE, 'surface.js'), 'utf8');
const NAMES = ['SnowmintError', 'installSurface', 'decimalNodeId'];

/** js/surface.js without its `export` keywords: plain declarations. */
function declarations() {
  const text = SOURCE.replace(/^export (class|function) /gm, '$1 ');
  if (/^export /m.test(text))
    throw new Error('surface.js: only `export class` / `export function` are supported');
  for (const n of NAMES)
    if (!new RegExp(`^(class|function) ${n}\\b`, 'm').test(text)) throw new Error(`surface.js lacks ${n}`);
  return text;
}

const cjs = () =>
  `// Generated from js/surface.js by js/patch-glue.mjs: do not edit.\n'use strict';\n${declarations()}\nmodule.exports = { ${NAMES.join(', ')} };\n`;

// The shims wasm-bindgen writes for `js_sys::Error::new` and `js_sys::RangeError::new`.
const SHIM = /(const ret = new )(Error|RangeError)(\(getStringFromWasm0\(arg0, arg1\)\);)/g;

// The main module's Generator constructor: a string nodeId is read in JavaScript first (decimalNodeId).
const GENERATOR_NEW = 'wasm.generator_new(options)';

function patch(file, header, ctor, surface) {
  let text = fs.readFileSync(file, 'utf8');
  let n = 0;
  if (file.includes('snowmint_wasm_opaque')) {
    if (text.includes(GENERATOR_NEW))
      throw new Error(`${file}: a Generator constructor in Opaque IDs' module`);
  } else {
    if (text.split(GENERATOR_NEW).length !== 2)
      throw new Error(`${file}: expected one ${GENERATOR_NEW} (has wasm-bindgen changed its glue?)`);
    text = text.replace(GENERATOR_NEW, `wasm.generator_new(${surface}decimalNodeId(options))`);
  }
  text = text.replace(SHIM, (_, a, _cls, b) => {
    n++;
    return a + ctor + b;
  });
  // Each module makes Errors (the main one also TypeErrors, left as they are).
  if (n === 0) throw new Error(`${file}: no Error shim to patch (has wasm-bindgen changed its glue?)`);
  // After a leading `/* @ts-self-types=… */` comment, which must stay first.
  const m = text.match(/^\/\* @ts-self-types=[^\n]*\n/);
  const at = m ? m[0].length : 0;
  fs.writeFileSync(file, text.slice(0, at) + header + '\n' + text.slice(at));
  return n;
}

/** js/client.js as CommonJS, next to the surface's copy (surface.cjs in the same folder). */
function clientCjs() {
  const IMPORT = "import { SnowmintError } from './surface.js';";
  const source = fs.readFileSync(path.join(HERE, 'client.js'), 'utf8');
  if (!source.includes(IMPORT)) throw new Error(`client.js: expected the line ${IMPORT}`);
  const text = source
    .replace(IMPORT, "const { SnowmintError } = require('./surface.cjs');")
    .replace(/^export function /gm, 'function ');
  if (/^(export|import) /m.test(text))
    throw new Error('client.js: only `export function` and the surface import are supported');
  return `// Generated from js/client.js by js/patch-glue.mjs: do not edit.\n'use strict';\n${text}\nmodule.exports = { makeClient };\n`;
}

/** js/fast-path.js as CommonJS (node.cjs cannot load an ES module synchronously). */
function fastPathCjs() {
  const source = fs.readFileSync(path.join(HERE, 'fast-path.js'), 'utf8');
  const text = source.replace(/^export function /gm, 'function ');
  if (/^(export|import) /m.test(text)) throw new Error('fast-path.js: only `export function` is supported');
  return `// Generated from js/fast-path.js by js/patch-glue.mjs: do not edit.\n'use strict';\n${text}\nmodule.exports = { installFastPath, makeOpaque };\n`;
}

const [mode, out] = process.argv.slice(2);
if (mode === 'cjs') {
  fs.writeFileSync(out, cjs());
} else if (mode === 'client') {
  fs.writeFileSync(out, clientCjs());
} else if (mode === 'dist') {
  fs.writeFileSync(path.join(out, 'surface.cjs'), cjs());
  fs.writeFileSync(path.join(out, 'client.cjs'), clientCjs());
  fs.writeFileSync(path.join(out, 'fast-path.cjs'), fastPathCjs());
  let total = 0;
  for (const m of ['snowmint_wasm', 'snowmint_wasm_opaque']) {
    total += patch(
      path.join(out, 'nodejs', `${m}.js`),
      "const { SnowmintError, decimalNodeId } = require('../surface.cjs');",
      'SnowmintError',
      '',
    );
    total += patch(
      path.join(out, 'web', `${m}.js`),
      "import { SnowmintError, decimalNodeId } from '../../js/surface.js';",
      'SnowmintError',
      '',
    );
    total += patch(
      path.join(out, 'bundler', `${m}_bg.js`),
      "import { SnowmintError, decimalNodeId } from '../../js/surface.js';",
      'SnowmintError',
      '',
    );
    // A classic script: one shared object, whichever of the two scripts a page loads first defines it.
    total += patch(
      path.join(out, 'no-modules', `${m}.js`),
      `var snowmint_surface = typeof snowmint_surface === 'object' ? snowmint_surface : (function () {\n${declarations()}\nreturn { ${NAMES.join(', ')} };\n})();`,
      'snowmint_surface.SnowmintError',
      'snowmint_surface.',
    );
  }
  console.error(`[patch-glue] ${total} error shims now make SnowmintErrors`);
} else {
  throw new Error('usage: patch-glue.mjs cjs OUT | client OUT | dist DIST');
}
