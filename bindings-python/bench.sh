#!/usr/bin/env bash
# Benchmarks the installed wheel side by side with snowflake-id, uuid-utils, uuid.uuid4 and a no-op call
# (all in one process, one run); prints tables with ratios; then the state-file bench
# (bench_state_file.py). Takes about a minute.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$TARGET/python"
PY="${PYTHON:-python3}"

WHEEL="$("$HERE/build.sh" | tail -n1)"
VENV="$WORK/bench-venv"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
if [ "$(cat "$VENV/.wheel" 2>/dev/null || true)" != "$(sha256sum "$WHEEL")" ]; then
    echo "[python bench] installing $(basename "$WHEEL") and the peers into $VENV" >&2
    "$VENV/bin/pip" install -q --force-reinstall --no-deps "$WHEEL" >&2
    "$VENV/bin/pip" install -q "snowflake-id>=1,<2" "uuid-utils>=0.9" >&2
    sha256sum "$WHEEL" > "$VENV/.wheel"
fi
cd "$WORK"
"$VENV/bin/python" "$HERE/bench.py" "$@"
# Range sequences (SPEC §4): next_id from a held range beside Generator.next_id and a no-op call.
"$VENV/bin/python" "$HERE/bench_range.py"
# The state file (SPEC §4a): single ID on a file vs in process, 2 processes on one file vs 2 threads.
SF="$(mktemp)"; trap 'rm -f "$SF"' EXIT
"$VENV/bin/python" "$HERE/bench_state_file.py" | tee "$SF"
python3 "$ROOT/scripts/bench_statefile.py" python "$SF" ${SNOWMINT_BENCH_JSON:+"$SNOWMINT_BENCH_JSON"}
# Opaque IDs: their rows join the summary in their own "opaque" group.
ROWS="$(mktemp)"; trap 'rm -f "$SF" "$ROWS"' EXIT
SNOWMINT_BENCH_OPAQUE_JSON="$ROWS" "$VENV/bin/python" "$HERE/bench_opaque.py"
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then "$PY" "$ROOT/scripts/bench_merge.py" "$SNOWMINT_BENCH_JSON" "$ROWS"; fi
# The ID-service client (SPEC §6a): next_id from a prefetched batch, in its own "client" group.
CROWS="$(mktemp)"; trap 'rm -f "$SF" "$ROWS" "$CROWS"' EXIT
SNOWMINT_BENCH_CLIENT_JSON="$CROWS" "$VENV/bin/python" "$HERE/bench_client.py"
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then "$PY" "$ROOT/scripts/bench_merge.py" "$SNOWMINT_BENCH_JSON" "$CROWS"; fi
