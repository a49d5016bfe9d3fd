#!/usr/bin/env bash
# `make bench`: runs every runtime's benchmark in turn (each bench script builds what it needs through
# its part's build.sh, or cargo for the core), collects the machine-readable summary each writes to
# $SNOWMINT_BENCH_JSON under target/bench/, and prints and writes target/bench/report.md: one table, one
# row per runtime, every ratio from this same run. The full output of each bench goes to
# target/bench/<runtime>.log. About 1.5–2 minutes on 2 cores when the builds are up to date.
# Arguments: runtimes to run (rust c python node wasm; default all). Each bench is bounded by
# SNOWMINT_BENCH_TIMEOUT seconds (default 900: on a fresh machine that includes building the WASM bindings generator,
# about 4 minutes). Exits non-zero if any bench failed (the report still shows the others).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
OUT="$ROOT/target/bench"
mkdir -p "$OUT"
LIMIT="${SNOWMINT_BENCH_TIMEOUT:-900}"
declare -A SCRIPT=(
  [rust]=benches/bench.sh
  [c]=bindings-c/bench.sh
  [python]=bindings-python/bench.sh
  [node]=bindings-node/bench.sh
  [wasm]=bindings-wasm/bench.sh
)
runtimes=(rust c python node wasm)
[ $# -gt 0 ] && runtimes=("$@")
for rt in "${runtimes[@]}"; do
  [ -n "${SCRIPT[$rt]:-}" ] || { echo "bench-all.sh: unknown runtime '$rt' (rust c python node wasm)" >&2; exit 2; }
done
command -v python3 >/dev/null || apt_install python3

summary=(); failed=0; start_all=$(date +%s)
for rt in "${runtimes[@]}"; do
  script="${SCRIPT[$rt]}"
  json="$OUT/$rt.json"; log="$OUT/$rt.log"; status_file="$OUT/$rt.status"
  rm -f "$json" "$status_file"
  echo; echo "==================== bench $rt ($script) ===================="
  t0=$(date +%s)
  # Output to the terminal and to the log; the bench's own exit status (not tee's) decides.
  SNOWMINT_BENCH_JSON="$json" timeout --kill-after=10 "$LIMIT" bash "$script" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - t0 ))
  if [ "$rc" -eq 0 ] && [ -s "$json" ]; then
    status=ok
  else
    failed=$((failed + 1))
    if [ "$rc" -eq 124 ]; then status="FAILED (timed out after ${LIMIT}s)";
    elif [ "$rc" -ne 0 ]; then status="FAILED (exit $rc)";
    else status="FAILED (no $json written)"; fi
    rm -f "$json"
  fi
  printf '%s\n%s\n' "$status" "$secs" > "$status_file"
  summary+=("$(printf '%-8s %-34s %5ss' "$rt" "$status" "$secs")")
done

echo; echo "==================== bench summary ===================="
printf '%s\n' "${summary[@]}"
echo "total    $(( $(date +%s) - start_all ))s"
echo
python3 "$ROOT/scripts/bench_report.py" "$OUT" "${runtimes[@]}" || failed=$((failed + 1))
[ "$failed" -eq 0 ]
