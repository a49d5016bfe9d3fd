// The public API of snowmint-wasm (installed from its npm tarball), through the Node ES module and
// CommonJS entries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, apiCjs, throwsCode } from './load.mjs';

const { Layout, Generator, decode, compose, minIdAt, encode, parse, ERROR_CODES } = api;

test('exports the shared API, the same objects through import and require', () => {
  for (const name of [
    'Layout',
    'Generator',
    'decode',
    'compose',
    'minIdAt',
    'encode',
    'parse',
    'ERROR_CODES',
  ]) {
    assert.ok(api[name] !== undefined, name);
    assert.equal(apiCjs[name], api[name], name);
  }
  assert.ok(Object.isFrozen(ERROR_CODES));
});

test('Layout presets and their getters', () => {
  const t = Layout.preset('twitter');
  assert.equal(t.name, 'twitter');
  assert.deepEqual([t.timestampBits, t.nodeBits, t.sequenceBits, t.totalBits], [41, 10, 12, 63]);
  assert.equal(t.order, 'timestamp_node_sequence');
  assert.equal(t.tickNs, 1000000n);
  assert.equal(t.epochMs, 1288834974657n);
  assert.equal(t.nodeCount, 1024);
  assert.equal(t.idsPerTick, 4096);
  assert.equal(t.maxNodeId, 1023n);
  assert.equal(t.maxTick, 2n ** 41n - 1n);
  assert.equal(t.lifespanEndIso, '2080-07-10T17:30:30.209Z');
  assert.equal(t.lifespanEndMs, BigInt(Date.parse('2080-07-10T17:30:30.209Z')));
  assert.equal(t.clockUnit, 'ms');
  assert.equal(Layout.preset('decimal').clockUnit, 'ns');
  assert.equal(Layout.preset('sonyflake').order, 'timestamp_sequence_node');
  const h = Layout.hazelcast(5n);
  assert.equal(h.name, 'hazelcast');
  assert.equal(h.maxNodeId, 65535n - 5n);
  const s = Layout.snowcast(1704067200000, 1000);
  assert.equal(s.nodeCount, 1024);
  assert.equal(s.sequenceBits, 13);
  const c = new Layout({
    timestampBits: 40,
    nodeBits: 8,
    sequenceBits: 10,
    order: 'timestamp_sequence_node',
    tickNs: 1000000n,
    epochMs: 1704067200000,
  });
  assert.equal(c.name, null);
  assert.equal(c.totalBits, 58);
});

test('a Layout stays usable after being passed to a Generator or decode', () => {
  const l = Layout.preset('discord');
  const g = new Generator({ nodeId: 3, layout: l, clock: () => 1700000000000 });
  assert.equal(g.layout.name, 'discord');
  decode(g.nextId(), l);
  assert.equal(l.name, 'discord');
  assert.equal(decode(g.nextId(), l).nodeId, 3);
});

test('Generator mints increasing bigints with the default Date.now() clock', () => {
  const g = new Generator({ nodeId: 7 });
  assert.equal(g.nodeId, 7);
  assert.equal(g.layout.name, 'twitter');
  const a = g.nextId();
  const b = g.nextId();
  assert.equal(typeof a, 'bigint');
  assert.ok(b > a);
  const d = decode(a);
  assert.equal(d.nodeId, 7);
  assert.ok(Math.abs(d.timestampMs - Date.now()) < 5000);
  assert.ok(d.date instanceof Date);
  const s = g.nextIdString();
  assert.match(s, /^\d+$/);
  assert.ok(BigInt(s) > b);
  const batch = g.nextIds(1000);
  assert.ok(batch instanceof BigUint64Array);
  assert.equal(batch.length, 1000);
  assert.ok(batch[0] > BigInt(s));
  for (let i = 1; i < batch.length; i++) assert.ok(batch[i] > batch[i - 1]);
  assert.equal(g.nextIds(0).length, 0);
});

test('an injected clock gives exact IDs (core doc example)', () => {
  const g = new Generator({ nodeId: 7, layout: 'twitter', clock: () => 1700000000000 });
  assert.equal(g.nextId(), 1724551110456274944n);
  assert.equal(g.nextId(), 1724551110456274945n);
  const big = new Generator({ nodeId: 7n, clock: () => 1700000000000n });
  assert.equal(big.nextId(), 1724551110456274944n);
});

test('nextIdNumber only for layouts of at most 53 bits', () => {
  const g = new Generator({ nodeId: 2, layout: 'js53' });
  const n = g.nextIdNumber();
  assert.equal(typeof n, 'number');
  assert.ok(Number.isSafeInteger(n));
  assert.equal(decode(BigInt(n), 'js53').nodeId, 2);
  const err = throwsCode(assert, () => new Generator({ nodeId: 2 }).nextIdNumber(), 'INVALID_ARGUMENT');
  assert.match(err.message, /53/);
});

test('random start keeps IDs unique and increasing; a seed makes it reproducible', () => {
  const mk = () => new Generator({ nodeId: 1, randomSeed: 123n, clock: () => 1700000000000 });
  const a = mk().nextIds(10);
  const b = mk().nextIds(10);
  assert.deepEqual([...a], [...b]);
  const r = new Generator({ nodeId: 1, randomStart: true });
  const ids = r.nextIds(5000);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
});

test('nextId() fast path survives memory growth and falls back for waits and errors', () => {
  const g = new Generator({ nodeId: 5 });
  const a = g.nextId();
  const big = g.nextIds(3_000_000); // grows the module's memory: the ID slot's view is renewed
  const b = g.nextId();
  assert.ok(b > big[big.length - 1] && big[0] > a);
  assert.equal(decode(b).nodeId, 5);
  // past max_ahead under 'fail': the fast path declines, the full path throws the coded error
  const f = new Generator({ nodeId: 5, maxAheadMs: 0 });
  let err;
  for (let i = 0; i < 100000 && !err; i++) {
    try {
      f.nextId();
    } catch (e) {
      err = e;
    }
  }
  if (err) {
    assert.equal(err.code, 'TOO_FAR_AHEAD');
    assert.equal(typeof err.retryAfterMs, 'number');
  }
});
