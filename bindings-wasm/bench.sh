#!/usr/bin/env bash
# Benchmark (well under 2 minutes): nextId() of snowmint-wasm side by side, in one Node process, with the
# native Node binding (bindings-node, when its addon loads), nodejs-snowflake and @sapphire/snowflake,
# then nextId() timed inside headless Chromium on the playground page. Prints tables with ratios.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
"$HERE/build.sh" --browser --peers >&2
# The native peer: build it if its own build script is there and it does not load yet (bounded).
if ! node -e "require('$ROOT/bindings-node/index.js')" >/dev/null 2>&1 && [ -f "$ROOT/bindings-node/build.sh" ]; then
  echo "[bench-wasm] building the native Node binding for comparison" >&2
  timeout 60 bash "$ROOT/bindings-node/build.sh" >&2 || echo "[bench-wasm] native binding did not build: measured without it" >&2
fi
echo "peers: $(cd "$ROOT/target/wasm-work/tools" && node -e "for (const p of ['nodejs-snowflake','@sapphire/snowflake']) process.stdout.write(p + '@' + require('./node_modules/' + p + '/package.json').version + ' ')")"
node "$HERE/bench/bench.mjs"
echo
node "$HERE/bench/chromium.mjs"
# Opaque IDs (the package's second module, in Node): rows in their own "opaque" group.
ROWS="$(mktemp)"; trap 'rm -f "$ROWS"' EXIT
SNOWMINT_BENCH_OPAQUE_JSON="$ROWS" node "$HERE/bench/opaque.mjs"
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then python3 "$ROOT/scripts/bench_merge.py" "$SNOWMINT_BENCH_JSON" "$ROWS"; fi
# The ID-service client (SPEC §6a, the same js/client.js as the native package's), group "client".
CROWS="$(mktemp)"; trap 'rm -f "$ROWS" "$CROWS"' EXIT
SNOWMINT_BENCH_CLIENT_JSON="$CROWS" node "$ROOT/bindings-node/bench_client.mjs" "$HERE/js/node.mjs"
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then python3 "$ROOT/scripts/bench_merge.py" "$SNOWMINT_BENCH_JSON" "$CROWS"; fi
