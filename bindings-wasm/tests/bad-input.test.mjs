// Bad input gets a clear error with the stable code: never a wrapped or rounded value, never a thrown
// string, never a crash of the module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, throwsCode } from './load.mjs';

const { Layout, Generator, decode, compose, minIdAt, encode, parse } = api;
const T0 = 1700000000000;

test('bad clock readings are INVALID_CLOCK', () => {
  const bad = [
    NaN,
    Infinity,
    -Infinity,
    -1,
    -0.5,
    1.5,
    T0 + 0.25,
    2 ** 53,
    2 ** 53 + 2,
    1e300,
    -1n,
    2n ** 64n,
    2n ** 70n,
    '1700000000000',
    null,
    undefined,
    {},
    true,
  ];
  for (const reading of bad) {
    const g = new Generator({ nodeId: 1, clock: () => reading });
    throwsCode(assert, () => g.nextId(), 'INVALID_CLOCK');
    throwsCode(assert, () => g.nextIds(3), 'INVALID_CLOCK');
  }
  // a bigint in range but in ms past year 2554 does not fit ns
  throwsCode(assert, () => new Generator({ nodeId: 1, clock: () => 2n ** 63n }).nextId(), 'INVALID_CLOCK');
  // after a bad reading the generator still works
  let r = NaN;
  const g = new Generator({ nodeId: 1, clock: () => r });
  throwsCode(assert, () => g.nextId(), 'INVALID_CLOCK');
  r = T0;
  assert.equal(typeof g.nextId(), 'bigint');
});

test('an exception thrown by the clock reaches the caller unchanged', () => {
  const boom = new RangeError('boom');
  const g = new Generator({
    nodeId: 1,
    clock: () => {
      throw boom;
    },
  });
  assert.throws(
    () => g.nextId(),
    (e) => e === boom,
  );
});

test('clock before the epoch, and past the lifespan', () => {
  throwsCode(assert, () => new Generator({ nodeId: 1, clock: () => 0 }).nextId(), 'CLOCK_BEFORE_EPOCH');
  const end = Number(Layout.preset('twitter').lifespanEndMs);
  throwsCode(assert, () => new Generator({ nodeId: 1, clock: () => end }).nextId(), 'LAYOUT_EXHAUSTED');
});

test('node IDs: out of range, wrapped or wrong type', () => {
  throwsCode(assert, () => new Generator({ nodeId: 1024 }), 'NODE_ID_OUT_OF_RANGE');
  throwsCode(
    assert,
    () => new Generator({ nodeId: 65531, layout: Layout.hazelcast(5) }),
    'NODE_ID_OUT_OF_RANGE',
  );
  // Whole numbers outside 0..2^64 are out of range; fractions, NaN, Infinity and Numbers that may have
  // been rounded (above 2^53 - 1) are refused as values (tests/host-inputs).
  for (const nodeId of [-1, -1n, 2n ** 64n, 2n ** 64n + 7n]) {
    throwsCode(assert, () => new Generator({ nodeId }), 'NODE_ID_OUT_OF_RANGE');
  }
  for (const nodeId of [1.5, NaN, Infinity, 2 ** 53]) {
    const e = throwsCode(assert, () => new Generator({ nodeId }), 'INVALID_ARGUMENT');
    // A number's error is about the number: the ID service's leases are for strings (lease sources).
    assert.doesNotMatch(String(e?.message ?? e), /ID service/);
    assert.match(String(e?.message ?? e), /nodeId must be /);
  }
  // A string is a node source: its own rule (the test below).
  for (const nodeId of [null, {}, [7], true]) {
    throwsCode(assert, () => new Generator({ nodeId }), 'INVALID_ARGUMENT', TypeError);
  }
  throwsCode(assert, () => new Generator({}), 'INVALID_ARGUMENT', TypeError);
});

test('generator options: wrong types, unknown keys, bad values', () => {
  for (const opts of [undefined, null, 7, 'twitter', [1]]) {
    throwsCode(assert, () => new Generator(opts), 'INVALID_ARGUMENT', TypeError);
  }
  throwsCode(assert, () => new Generator({ nodeId: 1, nodeID: 2 }), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => new Generator({ nodeId: 1, clock: 5 }), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => new Generator({ nodeId: 1, policy: 'sometimes' }), 'INVALID_ARGUMENT');
  throwsCode(assert, () => new Generator({ nodeId: 1, policy: 1 }), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => new Generator({ nodeId: 1, maxAheadMs: -5 }), 'INVALID_ARGUMENT');
  throwsCode(assert, () => new Generator({ nodeId: 1, maxAheadMs: 2n ** 64n }), 'INVALID_ARGUMENT');
  throwsCode(assert, () => new Generator({ nodeId: 1, maxAheadMs: 2n ** 60n }), 'INVALID_ARGUMENT');
  throwsCode(assert, () => new Generator({ nodeId: 1, randomSeed: -1n }), 'INVALID_ARGUMENT');
  throwsCode(assert, () => new Generator({ nodeId: 1, randomStart: 'yes' }), 'INVALID_ARGUMENT', TypeError);
  throwsCode(
    assert,
    () => new Generator({ nodeId: 1, randomStart: false, randomSeed: 5n }),
    'INVALID_ARGUMENT',
  );
  throwsCode(assert, () => new Generator({ nodeId: 1, layout: 'nope' }), 'INVALID_LAYOUT');
  throwsCode(assert, () => new Generator({ nodeId: 1, layout: 5 }), 'INVALID_ARGUMENT', TypeError);
  throwsCode(
    assert,
    () => new Generator({ nodeId: 1, layout: { name: 'twitter' } }),
    'INVALID_ARGUMENT',
    TypeError,
  );
});

test('ids out of u64 range, or too wide for the layout', () => {
  // Out of 0..2^64: INVALID_ID, as in every runtime. Not a usable Number (fraction, past 2^53): argument.
  for (const id of [-1n, 2n ** 64n, -(2n ** 63n), -1]) {
    throwsCode(assert, () => decode(id), 'INVALID_ID');
    throwsCode(assert, () => encode(id), 'INVALID_ID');
  }
  for (const id of [1.5, 2 ** 53]) {
    throwsCode(assert, () => decode(id), 'INVALID_ARGUMENT');
    throwsCode(assert, () => encode(id), 'INVALID_ARGUMENT');
  }
  throwsCode(assert, () => decode(2n ** 63n, 'twitter'), 'INVALID_ID');
  throwsCode(assert, () => decode({}), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => encode('5'), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => encode(5n, 'base64'), 'INVALID_ARGUMENT');
});

test('parse errors name the position', () => {
  const e = throwsCode(assert, () => parse('3hs6qtU4A0c', 'base58'), 'PARSE');
  assert.equal(e.position, 9);
  assert.match(e.message, /position 9/);
  throwsCode(assert, () => parse(''), 'PARSE');
  throwsCode(assert, () => parse('18446744073709551616'), 'PARSE');
  throwsCode(assert, () => parse('what?'), 'PARSE');
  throwsCode(assert, () => decode('not an id'), 'PARSE');
  throwsCode(assert, () => parse(12), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => parse('12', 'octal'), 'INVALID_ARGUMENT');
});

test('compose and minIdAt check every field', () => {
  throwsCode(
    assert,
    () => compose({ timestampTicks: 2n ** 41n, nodeId: 0, sequence: 0 }),
    'LAYOUT_EXHAUSTED',
  );
  throwsCode(assert, () => compose({ timestampTicks: 0, nodeId: 1024, sequence: 0 }), 'NODE_ID_OUT_OF_RANGE');
  throwsCode(assert, () => compose({ timestampTicks: 0, nodeId: 0, sequence: 4096 }), 'INVALID_ARGUMENT');
  throwsCode(assert, () => compose({ timestampTicks: -1n, nodeId: 0, sequence: 0 }), 'INVALID_ARGUMENT');
  throwsCode(assert, () => compose({ timestampTicks: 0, nodeId: 0 }), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => minIdAt(0), 'CLOCK_BEFORE_EPOCH');
  throwsCode(assert, () => minIdAt(NaN), 'INVALID_ARGUMENT');
  throwsCode(assert, () => minIdAt(new Date(NaN)), 'INVALID_ARGUMENT');
  throwsCode(assert, () => minIdAt(-1n), 'INVALID_ARGUMENT');
  throwsCode(assert, () => minIdAt('2020-01-01'), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => minIdAt(2n ** 64n - 1n), 'INVALID_CLOCK');
});

test('batch sizes', () => {
  const g = new Generator({ nodeId: 1, clock: () => T0 });
  for (const n of [-1, 1.5, NaN, -1n]) throwsCode(assert, () => g.nextIds(n), 'INVALID_ARGUMENT');
  throwsCode(assert, () => g.nextIds('3'), 'INVALID_ARGUMENT', TypeError);
  throwsCode(assert, () => g.nextIds(2 ** 40), 'INVALID_ARGUMENT');
  throwsCode(assert, () => g.nextIds(2 ** 29 - 1), 'INVALID_ARGUMENT'); // more than wasm32 memory
  assert.equal(g.nextIds(2).length, 2);
  // more than the max_ahead window can ever hold
  throwsCode(
    assert,
    () => new Generator({ nodeId: 1, clock: () => T0, maxAheadMs: 0 }).nextIds(4097),
    'INVALID_ARGUMENT',
  );
});

test('policies: fail carries retryAfterMs, wait gives up on a frozen clock, strict refuses a backwards step', () => {
  const fail = new Generator({ nodeId: 1, clock: () => T0, maxAheadMs: 0 });
  assert.equal(fail.nextIds(4096).length, 4096);
  const e = throwsCode(assert, () => fail.nextId(), 'TOO_FAR_AHEAD');
  assert.equal(e.retryAfterMs, 1);
  assert.equal(typeof e.retryAfterMs, 'number');

  const wait = new Generator({ nodeId: 1, clock: () => T0, maxAheadMs: 0, policy: 'wait' });
  wait.nextIds(4096);
  const t = Date.now();
  throwsCode(assert, () => wait.nextId(), 'TOO_FAR_AHEAD');
  assert.ok(Date.now() - t < 1000, 'bounded busy-wait');

  let now = T0;
  const moving = new Generator({ nodeId: 1, clock: () => now++, maxAheadMs: 0, policy: 'wait' });
  moving.nextIds(4096);
  assert.equal(typeof moving.nextId(), 'bigint');

  let clock = T0;
  const strict = new Generator({ nodeId: 1, clock: () => clock, policy: 'strict' });
  strict.nextId();
  clock = T0 - 5;
  throwsCode(assert, () => strict.nextId(), 'CLOCK_MOVED_BACKWARDS');
});

test('a clock that re-enters its own generator does not corrupt it', () => {
  let g;
  let inner = null;
  g = new Generator({
    nodeId: 1,
    clock: () => {
      if (inner === null) {
        inner = 0n;
        inner = g.nextId();
      }
      return T0;
    },
  });
  const outer = g.nextId();
  assert.notEqual(outer, inner);
  assert.ok(g.nextId() > outer);
});

test('the one node source a browser has is a decimal node ID: another string (a lease source, env, k8s, ip) is INVALID_ARGUMENT naming the ID service', () => {
  for (const source of [
    'etcd://127.0.0.1:2379/app?sequencer=orders',
    'file:///var/lib/ids',
    'postgres://u@h/db',
    'env',
    'k8s',
    'ip',
    '7.0',
    '+7',
    '',
  ]) {
    const e = throwsCode(assert, () => new Generator({ nodeId: source }), 'INVALID_ARGUMENT');
    assert.match(String(e?.message ?? e), /browsers get node leases from the ID service/);
  }
  assert.equal(new Generator({ nodeId: 7 }).nodeId, 7);
  assert.equal(new Generator({ nodeId: ' 007 ' }).nodeId, 7);
});
