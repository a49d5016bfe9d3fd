// A TypeScript user of snowmint-wasm (CommonJS project): type-checked with `tsc --noEmit` by test.sh
// against the index.d.ts of the installed tarball.
import { Generator, Layout, decode, compose, minIdAt, encode, parse, ERROR_CODES } from 'snowmint-wasm';
import type { Decoded, GeneratorOptions, SnowmintError } from 'snowmint-wasm';

const options: GeneratorOptions = { nodeId: 7, layout: 'twitter', policy: 'fail', maxAheadMs: 15_000 };
const gen = new Generator(options);
const id: bigint = gen.nextId();
const text: string = gen.nextIdString();
const batch: BigUint64Array = gen.nextIds(4096);
const js53: number = new Generator({ nodeId: 1, layout: Layout.preset('js53') }).nextIdNumber();

let now = 1_750_000_000_000;
new Generator({ nodeId: 2n, clock: () => now++, randomSeed: 42n, policy: 'strict' });

const d: Decoded = decode(id);
// A Number unless the layout runs past 2^53 - 1 ms (a bigint then), like nodeId and sequence.
const ms: number = Number(d.timestampMs);
const again: bigint = compose({ timestampTicks: d.timestampTicks, nodeId: d.nodeId, sequence: d.sequence });
const floor: bigint = minIdAt(new Date('2025-01-01T00:00:00Z'), 'discord');
const back: bigint = parse(encode(id, 'base32'), 'any');
const unit: 'ms' | 'ns' = gen.layout.clockUnit;

try {
  new Generator({ nodeId: 5000 });
} catch (e) {
  const err = e as SnowmintError;
  if (!ERROR_CODES.includes(err.code)) throw err;
}

// Wrong types are compile errors (each line below must be an error, or tsc fails).
// @ts-expect-error nodeId is required
new Generator({});
// @ts-expect-error nodeId is a number or a bigint, not a string
new Generator({ nodeId: '7' });
// @ts-expect-error nextId returns a bigint, not a number
const wrong: number = gen.nextId();
// @ts-expect-error unknown encoding
encode(id, 'base64');
// @ts-expect-error policy is 'wait' | 'fail' | 'strict'
new Generator({ nodeId: 7, policy: 'sometimes' });

export const used = [text, batch, js53, ms, again, floor, back, unit, wrong];
