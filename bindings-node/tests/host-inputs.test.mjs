// The host-input vectors (tests/host-inputs/host_inputs.json, shared with snowmint-wasm and Python)
// against the installed package: one result per value, the same as every other runtime's.
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const { hostInputTests } = await import(new URL('host-inputs.mjs', pathToFileURL(runner)).href)
hostInputTests(api, { test, assert, flavour: 'native' })
