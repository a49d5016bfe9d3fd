// The shared ID-service client suite (tests/js/client.mjs, also run on snowmint-wasm) against the
// installed package and a live HTTP service on a free 127.0.0.1 port.
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const { clientTests } = await import(new URL('client.mjs', pathToFileURL(runner)).href)
clientTests(api, { test, assert, flavour: 'native', moduleUrl: 'snowmint' })
