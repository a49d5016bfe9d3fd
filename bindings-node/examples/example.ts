// Type-checked against the generated index.d.ts (`tsc --noEmit` in test.sh): the README's API in TypeScript.
import { Generator, Layout, Sequencer, decode, compose, minIdAt, encode, parse, ERROR_CODES } from 'snowmint'

const gen = new Generator({ nodeId: 7, layout: 'twitter' })
const id: bigint = gen.nextId()
const text: string = gen.nextIdString()
const batch: BigUint64Array = gen.nextIds(4096)
// A Number for every layout whose node field fits 53 bits (every preset); a bigint past that.
const nodeId: number | bigint = gen.nodeId
const layout: Layout = gen.layout

const js53 = new Generator({ nodeId: 1, layout: Layout.preset('js53'), policy: 'wait', maxAheadMs: 1000 })
const small: number = js53.nextIdNumber()

let now = 1_750_000_000_000
const scripted = new Generator({ nodeId: 2n, clock: () => now++, randomSeed: 42n, policy: 'strict' })
scripted.nextId()
new Generator({ nodeId: 3, clock: () => BigInt(Date.now()), randomStart: true })

const d = decode(id)
// nodeId, sequence and timestampMs are Numbers unless the layout's field passes 2^53 - 1 (then bigints).
type Int = number | bigint
const fields: { ms: Int; date: Date; iso: string; node: Int; seq: Int; ticks: bigint } = {
  ms: d.timestampMs,
  date: d.date,
  iso: d.iso,
  node: d.nodeId,
  seq: d.sequence,
  ticks: d.timestampTicks,
}
decode(text, 'twitter')
decode(batch[0], layout)

const again: bigint = compose({ timestampTicks: d.timestampTicks, nodeId: d.nodeId, sequence: d.sequence })
const after: bigint = minIdAt(new Date('2025-01-01T00:00:00Z'), 'discord')
minIdAt(1_750_000_000_000)
const b58: string = encode(id, 'base58')
const back: bigint = parse(b58, 'any')
parse(encode(id))

const custom = new Layout({
  timestampBits: 41,
  nodeBits: 10,
  sequenceBits: 12,
  order: 'timestamp_node_sequence',
  tickNs: 1_000_000n,
  epochMs: 1_700_000_000_000,
  useSignBit: false,
})
const capacity: number = custom.nodeCount * custom.idsPerTick
const lifespan: string = custom.lifespanEndIso
const unit: 'ms' | 'ns' = custom.clockUnit
const name: string | null = custom.name
Layout.snowcast(1_700_000_000_000n, 1024)
Layout.hazelcast(5)

try {
  new Generator({ nodeId: 5000 })
} catch (e) {
  const err = e as Error & { code?: string; retryAfterMs?: number }
  if (err.code !== undefined && ERROR_CODES.includes(err.code)) throw err
}

// Wrong types are compile errors too.
// @ts-expect-error nodeId is a number, a bigint or a node source string
new Generator({ nodeId: true })
// @ts-expect-error policy is 'wait' | 'fail' | 'strict'
new Generator({ nodeId: 7, policy: 'sometimes' })
// @ts-expect-error nextId returns a bigint, not a number
const wrong: number = gen.nextId()
// @ts-expect-error unknown encoding
encode(id, 'base64')

export const used = [
  id,
  text,
  batch.length,
  nodeId,
  small,
  fields,
  again,
  after,
  back,
  capacity,
  lifespan,
  unit,
  name,
  wrong,
]

// Node sources, leases and sequencers (never called here: the types are what is checked).
export async function leases(): Promise<void> {
  const g: Generator = await Generator.open({ nodeId: 'file:///tmp/ids?sequencer=orders', layout: 'twitter' })
  const lease = g.lease
  if (lease !== null) {
    const token: bigint = lease.fencingToken
    const expires: Date = lease.expiresAt
    const node: number | bigint = lease.nodeId
    void [token, expires, node]
  }
  const state: 'attached' | 'detached' | 'destroyed' = g.state
  void state
  await g.detach()
  await g.attach()
  await g.close()
  const seq: Sequencer = await Sequencer.create('orders', {
    store: 'etcd://127.0.0.1:2379/app',
    nodeCount: 16,
  })
  const names: string[] = await Sequencer.list({ store: 'etcd://127.0.0.1:2379/app' })
  const worker: Generator = await seq.attach()
  worker.nextId()
  await seq.destroy()
  void names
  // @ts-expect-error Generator.open returns a Promise
  const notAwaited: Generator = Generator.open({ nodeId: 'env' })
  void notAwaited
}
