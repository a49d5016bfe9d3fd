// RangeSequence.nextId() from a held range (SPEC §4), side by side in one run with Generator#nextId and
// an empty function call; best of 5 rounds of 10^6 calls, ns per call.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Generator, RangeSequence } from 'snowmint'

const N = 1_000_000
function best(f) {
  let out = Infinity
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint()
    for (let i = 0; i < N; i++) f()
    out = Math.min(out, Number(process.hrtime.bigint() - t) / N)
  }
  return out
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snowmint-range-bench-'))
try {
  const seq = await RangeSequence.open({
    name: 'bench',
    dc: 'a',
    globalStore: `file://${dir}`,
    dcRange: 100_000_000,
    processRange: 20_000_000,
  })
  const gen = new Generator({ nodeId: 1 })
  const noop = best(() => {})
  const r = best(() => seq.nextId())
  const g = best(() => gen.nextId())
  console.log('range sequence (Node), ns per call, best of 5 x 10^6')
  console.log(`  RangeSequence#nextId  ${r.toFixed(1).padStart(8)}   (target <= 60)`)
  console.log(
    `  Generator#nextId      ${g.toFixed(1).padStart(8)}   (ratio range/generator ${(r / g).toFixed(2)}x)`,
  )
  console.log(`  empty call            ${noop.toFixed(1).padStart(8)}`)
  console.log(`  values handed out: ${seq.stats().values}, waits: ${seq.stats().late}`)
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
