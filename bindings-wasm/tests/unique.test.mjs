// 10^6 IDs from one generator: no duplicate, strictly increasing (one by one and in batches).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from './load.mjs';

const { Generator } = api;

test('10^6 IDs with nextId(): strictly increasing, so no duplicate', () => {
  const g = new Generator({ nodeId: 7 });
  const ids = new BigUint64Array(1_000_000);
  for (let i = 0; i < ids.length; i++) ids[i] = g.nextId();
  let bad = 0;
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) bad++;
  assert.equal(bad, 0);
  assert.equal(new Set(ids).size, ids.length);
});

test('10^6 IDs with nextIds(1000) under a random start: unique', () => {
  const g = new Generator({ nodeId: 7, layout: 'discord', randomStart: true });
  const seen = new Set();
  let prev = -1n;
  for (let i = 0; i < 1000; i++) {
    for (const id of g.nextIds(1000)) {
      assert.ok(id > prev);
      prev = id;
      seen.add(id);
    }
  }
  assert.equal(seen.size, 1_000_000);
});
