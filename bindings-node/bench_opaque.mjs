// Opaque IDs from Node (the native package): the shared bench (tests/js/bench-opaque.mjs). Writes its
// rows to $SNOWMINT_BENCH_OPAQUE_JSON when set (bench.sh merges them into the summary).
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { benchOpaque } from '../tests/js/bench-opaque.mjs'

const api = createRequire(import.meta.url)('./index.js')
const rows = benchOpaque(api, 'snowmint (napi)')
console.log(`target: encode <= 100 ns per call: ${rows[0].ns_per_id <= 100 ? 'met' : 'MISSED'}`)
if (process.env.SNOWMINT_BENCH_OPAQUE_JSON)
  writeFileSync(process.env.SNOWMINT_BENCH_OPAQUE_JSON, JSON.stringify(rows))
