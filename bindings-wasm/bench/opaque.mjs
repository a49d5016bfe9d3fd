// Opaque IDs from the WASM package in Node: the shared bench (tests/js/bench-opaque.mjs). Writes its
// rows to $SNOWMINT_BENCH_OPAQUE_JSON when set (bench.sh merges them into the summary).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { benchOpaque } from '../../tests/js/bench-opaque.mjs';

const api = createRequire(import.meta.url)('../js/node.cjs');
const rows = benchOpaque(api, 'snowmint-wasm');
if (process.env.SNOWMINT_BENCH_OPAQUE_JSON)
  writeFileSync(process.env.SNOWMINT_BENCH_OPAQUE_JSON, JSON.stringify(rows));
