// Opaque through the installed package: the shared JS tests (tests/js/opaque.mjs, also run on Node).
import test from 'node:test';
import assert from 'node:assert/strict';
import { api, apiCjs } from './load.mjs';
import { opaqueTests } from '../../tests/js/opaque.mjs';

opaqueTests(api, { test, assert });

test('Opaque: the CommonJS and ESM entries give the same class and tokens', () => {
  assert.equal(api.Opaque, apiCjs.Opaque);
  const key = new Uint8Array(16).fill(7);
  assert.equal(
    new api.Opaque({ key, layout: 'js53' }).encode(5n),
    new apiCjs.Opaque({ key, layout: 'js53' }).encode(5n),
  );
});
