// Speed of `Opaque` from JavaScript, shared by the Node (napi) and WASM benches: encode / decode /
// encodeString per call and encodeMany per ID, beside an empty function call. Fastest of 15 samples.
//
//   import { benchOpaque } from '.../tests/js/bench-opaque.mjs'
//   const rows = benchOpaque(api, 'snowmint')   // [{ name, kind, what, ns_per_id, group: 'opaque' }]

const N = 100_000

function best(fn, per) {
  let min = Infinity
  for (let s = 0; s < 15; s++) {
    const t = process.hrtime.bigint()
    fn()
    min = Math.min(min, Number(process.hrtime.bigint() - t) / per)
  }
  return min
}

export function benchOpaque(api, label) {
  const o = new api.Opaque({ key: new TextEncoder().encode('bench-opaque-key'), layout: 'twitter' })
  const base = 1541815603606036480n
  const ids = BigUint64Array.from({ length: N }, (_, i) => base + BigInt(i))
  const tokens = o.encodeMany(ids)
  let sink = 0n
  const noop = (x) => x
  const loop = (f, xs) => () => {
    for (let i = 0; i < xs.length; i++) sink ^= f(xs[i])
  }
  const rows = [
    [
      `${label} Opaque.encode (twitter, 63 bits)`,
      'snowmint',
      'single',
      best(
        loop((x) => o.encode(x), ids),
        N,
      ),
    ],
    [
      `${label} Opaque.decode`,
      'snowmint',
      'single',
      best(
        loop((x) => o.decode(x), tokens),
        N,
      ),
    ],
    [
      `${label} Opaque.encodeString(id, 'base58')`,
      'snowmint',
      'single',
      best(() => {
        for (let i = 0; i < N; i++) o.encodeString(ids[i], 'base58')
      }, N),
    ],
    [
      `${label} Opaque.encodeMany (10^5), per ID`,
      'snowmint',
      'batch',
      best(() => {
        sink ^= o.encodeMany(ids)[0]
      }, N),
    ],
    ['an empty JS function call on a bigint (reference)', 'floor', 'call', best(loop(noop, ids), N)],
  ]
  if (sink === 42n) console.log('')
  console.log(`\nopaque IDs (${label}): ns per call (fastest of 15 samples of 10^5 calls)`)
  for (const [name, , , ns] of rows) console.log(`${name.padEnd(56)} ${ns.toFixed(1).padStart(8)}`)
  return rows.map(([name, kind, what, ns]) => ({ name, kind, what, ns_per_id: ns, group: 'opaque' }))
}
