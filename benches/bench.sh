#!/usr/bin/env bash
# Runs snowmint's criterion benchmark (benches/benches/generate.rs) and prints its ratio table:
# clock read, CAS, single ID (plain, shared; SystemClock and the default FastClock), two threads, batches of 4096,
# sustained 2 s capacity, and peers (snowflaked, rs-snowflake, uuid v7, ulid), all in one run; then the
# state-file bench (benches/benches/state_file.rs).
# The run takes about 90 s after the build; extra arguments go to criterion (e.g. a filter regex).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v cargo >/dev/null 2>&1; then
    echo "bench.sh: cargo is not installed (install Rust with rustup)" >&2
    exit 1
fi
cargo bench -p snowmint-benches --bench generate -- "$@"
# The state file (SPEC §4a): single ID on a file vs in process, 2 processes on one file vs 2 threads.
OUTF="$(mktemp)"; trap 'rm -f "$OUTF"' EXIT
cargo bench -p snowmint-benches --bench state_file | tee "$OUTF"
python3 scripts/bench_statefile.py rust "$OUTF" ${SNOWMINT_BENCH_JSON:+"$SNOWMINT_BENCH_JSON"}
# Opaque IDs (benches/benches/opaque.rs): its rows join the summary in their own "opaque" group.
ROWS="$(mktemp)"; trap 'rm -f "$OUTF" "$ROWS"' EXIT
SNOWMINT_BENCH_OPAQUE_JSON="$ROWS" cargo bench -p snowmint-benches --bench opaque
if [ -n "${SNOWMINT_BENCH_JSON:-}" ]; then python3 scripts/bench_merge.py "$SNOWMINT_BENCH_JSON" "$ROWS"; fi
