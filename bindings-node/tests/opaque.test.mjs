// Opaque through the installed package: the shared JS tests (tests/js/opaque.mjs, also run on WASM).
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const { opaqueTests } = await import(new URL('opaque.mjs', pathToFileURL(runner)).href)
opaqueTests(api, { test, assert })
