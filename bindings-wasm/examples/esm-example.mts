// A TypeScript ES-module user of snowmint-wasm (the package's "import" condition): type-checked with
// example.ts by `tsc --noEmit` in test.sh.
import snowmint, { Generator, Layout, decode, parse, encode } from 'snowmint-wasm';

const gen = new Generator({ nodeId: 9, layout: Layout.preset('discord') });
const id: bigint = gen.nextId();
// A Number for every layout whose node field fits 53 bits (every preset); a bigint past that.
const node: number | bigint = decode(id, 'discord').nodeId;
const same: bigint = parse(encode(id, 'hex'), 'hex');
const codes: readonly string[] = snowmint.ERROR_CODES;

// @ts-expect-error decode takes an ID (bigint or string), not a Date
decode(new Date());
// @ts-expect-error Layout.tickNs is a read-only bigint
gen.layout.tickNs = 5n;

export const used = [id, node, same, codes];
