// An ES-module TypeScript user (`import` resolves through the package's "import" condition); type-checked
// with example.ts by `tsc --noEmit` in test.sh.
import { Generator, Layout, decode, encode, parse, ERROR_CODES } from 'snowmint'

const gen = new Generator({ nodeId: 7, layout: Layout.preset('discord') })
const id: bigint = gen.nextId()
// A Number for every layout whose node field fits 53 bits (every preset); a bigint past that.
const node: number | bigint = decode(id, 'discord').nodeId
const back: bigint = parse(encode(id, 'hex'), 'hex')
const codes: readonly string[] = ERROR_CODES

// @ts-expect-error nodeId is required
new Generator({})
// @ts-expect-error decode takes an ID, not a Date
decode(new Date())

export const used = [id, node, back, codes]
