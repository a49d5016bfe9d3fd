// The shared ID-service client suite (tests/js/client.mjs, also run on snowmint-wasm) against the
// installed package and a live HTTP service on a free 127.0.0.1 port; then OfflineGenerator's checks of
// lease answers (tests/js/offline.mjs).
import test from 'node:test'
import assert from 'node:assert/strict'
import { pathToFileURL } from 'node:url'
import * as api from 'snowmint'

const runner = process.env.SNOWMINT_CONFORMANCE
if (!runner) throw new Error('set SNOWMINT_CONFORMANCE (test.sh does)')
const { clientTests } = await import(new URL('client.mjs', pathToFileURL(runner)).href)
clientTests(api, { test, assert, flavour: 'native', moduleUrl: 'snowmint' })
// OfflineGenerator's checks of lease answers, on this package's Generator (browser APIs stood in for).
const { offlineTests } = await import(new URL('offline.mjs', pathToFileURL(runner)).href)
await offlineTests(api, { test, assert, flavour: 'native' })
// The seeded fault simulation of Client and OfflineGenerator (tests/js/client-sim.mjs), and its
// sensitivity runs: each client check put back as before its fix must make the simulation fail.
const { clientSimTests } = await import(new URL('client-sim.mjs', pathToFileURL(runner)).href)
clientSimTests(api, { test, assert, flavour: 'native', sensitivity: true })
