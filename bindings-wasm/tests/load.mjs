// Loads the installed package (an `npm pack` tarball installed into a temporary project by test.sh):
// SNOWMINT_WASM_PROJECT names that project, whose api.mjs / api.cjs import / require 'snowmint-wasm'.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const project = process.env.SNOWMINT_WASM_PROJECT;
if (!project) throw new Error('SNOWMINT_WASM_PROJECT is not set: run the tests through test.sh');

export const api = await import(pathToFileURL(path.join(project, 'api.mjs')).href);
export const apiCjs = createRequire(path.join(project, 'api.cjs'))('./api.cjs');

// The shared error assertion (tests/js/throws-code.cjs).
export { throwsCode } from '../../tests/js/throws-code.cjs';
