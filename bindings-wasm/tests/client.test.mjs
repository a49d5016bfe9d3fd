// The shared ID-service client suite (tests/js/client.mjs, also run on the native package) against the
// installed tarball in Node and a live HTTP service on a free 127.0.0.1 port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { api } from './load.mjs';

const { clientTests } = await import(new URL('../../tests/js/client.mjs', import.meta.url).href);
clientTests(api, {
  test,
  assert,
  flavour: 'wasm',
  moduleUrl: pathToFileURL(path.join(process.env.SNOWMINT_WASM_PROJECT, 'api.mjs')).href,
});
// OfflineGenerator's checks of lease answers, on this package's Generator (browser APIs stood in for).
const { offlineTests } = await import(new URL('../../tests/js/offline.mjs', import.meta.url).href);
await offlineTests(api, { test, assert, flavour: 'wasm' });
// The seeded fault simulation of Client and OfflineGenerator (tests/js/client-sim.mjs; its sensitivity
// runs, over the JS sources, are the native package's).
const { clientSimTests } = await import(new URL('../../tests/js/client-sim.mjs', import.meta.url).href);
clientSimTests(api, { test, assert, flavour: 'wasm' });
