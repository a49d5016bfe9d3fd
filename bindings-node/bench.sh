#!/usr/bin/env bash
# Benchmark (≤ 2 minutes): snowmint's Node binding side by side with @sapphire/snowflake, flake-idgen,
# crypto.randomUUID() and uuid v7 in one process; prints ns/ID, ratios and duplicates over 200k IDs;
# then the state-file bench (bench-state-file.mjs).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
bash "$HERE/build.sh"
PEERS="$ROOT/target/node-bench"
mkdir -p "$PEERS"
if [ ! -f "$PEERS/package.json" ]; then
  printf '{ "name": "snowmint-bench-peers", "version": "1.0.0", "private": true }\n' > "$PEERS/package.json"
fi
if [ ! -d "$PEERS/node_modules/@sapphire/snowflake" ] || [ ! -d "$PEERS/node_modules/flake-idgen" ] || [ ! -d "$PEERS/node_modules/uuid" ]; then
  (cd "$PEERS" && npm install --no-audit --no-fund --loglevel=error @sapphire/snowflake@3 flake-idgen@1 uuid@latest)
fi
echo "peers: $(cd "$PEERS" && node -e 'for (const p of ["@sapphire/snowflake", "flake-idgen", "uuid"]) process.stdout.write(p + "@" + require("./node_modules/" + p + "/package.json").version + " ")')"
SNOWMINT_BENCH_PEERS="$PEERS" node "$HERE/bench.mjs"
# The state file (SPEC §4a): single ID on a file vs in process, 2 processes on one file vs 2 threads.
SF="$(mktemp)"; trap 'rm -f "$SF"' EXIT
node "$HERE/bench-state-file.mjs" | tee "$SF"
# Range sequences (SPEC §4): nextId from a held range beside Generator#nextId.
node "$HERE/bench_range.mjs"
python3 "$ROOT/scripts/bench_statefile.py" node "$SF" ${SNOWMINT_BENCH_JSON:+"$SNOWMINT_BENCH_JSON"}
# Opaque IDs: their rows join the summary in their own "opaque" group.
ROWS="$(mktemp)"; trap 'rm -f "$SF" "$ROWS"' EXIT
SNOWMINT_BENCH_OPAQUE_JSON="$ROWS" node "$HERE/bench_opaque.mjs"
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then python3 "$HERE/../scripts/bench_merge.py" "$SNOWMINT_BENCH_JSON" "$ROWS"; fi
# The ID-service client (SPEC §6a): tryNextId / await nextId from a prefetched batch, group "client".
CROWS="$(mktemp)"; trap 'rm -f "$SF" "$ROWS" "$CROWS"' EXIT
SNOWMINT_BENCH_CLIENT_JSON="$CROWS" node "$HERE/bench_client.mjs"
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then python3 "$HERE/../scripts/bench_merge.py" "$SNOWMINT_BENCH_JSON" "$CROWS"; fi
