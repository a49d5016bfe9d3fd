// Every case of every tests/vectors/*.json file through the installed package (shared runner).
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const vectorsDir = process.env.SNOWMINT_VECTORS
const runner = process.env.SNOWMINT_CONFORMANCE
if (!vectorsDir || !runner) throw new Error('set SNOWMINT_VECTORS and SNOWMINT_CONFORMANCE (test.sh does)')
const { runConformance } = await import(pathToFileURL(runner).href)
await runConformance(api, { test, assert, vectorsDir, runtime: 'node' })
