// The host-input vectors (tests/host-inputs/host_inputs.json, shared with the native package and
// Python) against the installed tarball: one result per value, the same as every other runtime's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from './load.mjs';

const { hostInputTests } = await import(new URL('../../tests/js/host-inputs.mjs', import.meta.url).href);
hostInputTests(api, { test, assert, flavour: 'wasm' });
