// nextId()'s fast path (js/fast-path.js, "The fast path of `nextId()`" in src/lib.rs): IDs taken ahead
// for the current millisecond and handed out from a window in the module's memory. Whatever a program
// does between calls — other methods, other generators, free(), the module's memory growing — it must
// see exactly what minting one by one gives: increasing IDs, exact counters, exact high-water marks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from './load.mjs';

const { Generator } = api;

/** A twitter ID's logical position (tick × 4096 + sequence): the high-water mark after it is one more. */
const position = (id) => ((id >> 22n) << 12n) | (id & 0xfffn);

/** nextId(), checked not to carry a millisecond older than the clock read before the call. */
function fresh(g) {
  const before = Date.now();
  const id = g.nextId();
  const ms = Number(id >> 22n) + 1288834974657;
  assert.ok(ms >= before, `ID of ${ms} ms minted at ${before} ms`);
  return id;
}

/** A small deterministic choice of steps (xorshift). */
function rng(seed) {
  let s = seed | 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/** A generator and what was handed out from it. */
function tracked(nodeId, options = {}) {
  return { g: new Generator({ nodeId, layout: 'twitter', ...options }), last: 0n, count: 0 };
}

function take(t, ids) {
  for (const id of ids) {
    assert.ok(id > t.last, `${id} after ${t.last}`);
    t.last = id;
    t.count++;
  }
}

/** One random step on `t`: mostly nextId(), sometimes anything else, checked against the record. */
function step(t, pick) {
  const r = pick(100);
  if (r < 85) take(t, [fresh(t.g)]);
  else if (r < 88) take(t, [BigInt(t.g.nextIdString())]);
  else if (r < 91) take(t, t.g.nextIds(1 + pick(20)));
  else if (r < 95) assert.equal(t.g.stats().minted, t.count, 'stats().minted');
  else if (r < 98) assert.equal(t.g.highWaterMark(), t.count ? position(t.last) + 1n : 0n, 'highWaterMark()');
  else t.g.restore(t.g.highWaterMark()); // the same mark: changes nothing
}

test('with any method between nextId() calls: increasing IDs, exact stats() and highWaterMark()', () => {
  const pick = rng(7);
  const t = tracked(5);
  for (let i = 0; i < 200_000; i++) step(t, pick);
  assert.equal(t.g.stats().minted, t.count);
  assert.equal(t.g.highWaterMark(), position(t.last) + 1n);
  t.g.free();
});

test('two generators taking turns: each exact, and neither hands out the other’s IDs', () => {
  const pick = rng(11);
  const a = tracked(1);
  const b = tracked(2);
  const nodes = new Set();
  for (let i = 0; i < 100_000; i++) {
    const t = pick(2) === 0 ? a : b;
    const before = t.count;
    step(t, pick);
    if (t.count > before) nodes.add(`${t === a ? 1 : 2}:${(t.last >> 12n) & 0x3ffn}`);
  }
  assert.deepEqual([...nodes].sort(), ['1:1', '2:2']);
  for (const t of [a, b]) {
    assert.equal(t.g.stats().minted, t.count);
    assert.equal(t.g.highWaterMark(), position(t.last) + 1n);
    t.g.free();
  }
});

test('a freed generator throws, even while another one mints from the window', () => {
  const a = new Generator({ nodeId: 1 });
  const b = new Generator({ nodeId: 2 });
  for (let i = 0; i < 1000; i++) a.nextId(); // a owns the window now (most likely mid-way)
  a.free();
  assert.throws(() => a.nextId());
  let last = 0n;
  for (let i = 0; i < 1000; i++) {
    const id = b.nextId();
    assert.ok(id > last);
    last = id;
  }
  assert.throws(() => a.nextId());
  b.free();
  assert.throws(() => b.nextId());
});

test('the module’s memory growing under the window: nextId() goes on from the same state', () => {
  const t = tracked(9);
  for (let i = 0; i < 5000; i++) take(t, [t.g.nextId()]);
  // 3 million IDs at once (24 MB): the module's memory grows, detaching every view of it.
  const big = t.g.nextIds(3_000_000);
  assert.ok(big[0] > t.last);
  t.last = big[big.length - 1];
  t.count += big.length;
  for (let i = 0; i < 5000; i++) take(t, [t.g.nextId()]);
  assert.equal(t.g.stats().minted, t.count);
  assert.equal(t.g.highWaterMark(), position(t.last) + 1n);
  t.g.free();
});

test('an injected clock takes the full path, beside a generator on the fast path', () => {
  let now = Date.now();
  const c = tracked(3, { clock: () => now });
  const f = tracked(4);
  for (let i = 0; i < 20_000; i++) {
    take(f, [f.g.nextId()]);
    take(c, [c.g.nextId()]);
    if (i % 1000 === 0) now += 1;
  }
  // The injected clock's IDs carry its readings, not Date.now()'s.
  assert.equal(api.decode(c.last).timestampMs, now);
  for (const t of [c, f]) assert.equal(t.g.stats().minted, t.count);
});

test('restore() to a later mark while the window holds IDs: the next ID is past the mark', () => {
  const t = tracked(6);
  for (let i = 0; i < 100; i++) take(t, [t.g.nextId()]);
  const mark = t.g.highWaterMark() + 10_000n;
  t.g.restore(mark);
  const id = t.g.nextId();
  assert.ok(position(id) >= mark, `${position(id)} < ${mark}`);
  t.g.free();
});
