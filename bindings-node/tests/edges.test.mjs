// The shared edge tests (tests/js/edges.mjs, also run by the WASM package) on the installed package.
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const { runEdges } = await import(pathToFileURL(runner.replace(/conformance\.mjs$/, 'edges.mjs')).href)
runEdges(api, { test, assert })
