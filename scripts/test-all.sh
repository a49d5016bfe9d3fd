#!/usr/bin/env bash
# Every test of every runtime, stage by stage; a timing summary at the end. Exits non-zero if any stage
# failed (all stages run regardless, so one run shows every failure).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
# Every conformance runner records the cases it ran here; the last stage checks that all six runtimes
# (rust, c, python, node, wasm-node, wasm-browser) ran and passed every case of tests/vectors/.
export SNOWMINT_CONFORMANCE_DIR="$ROOT/target/conformance"
rm -rf "$SNOWMINT_CONFORMANCE_DIR" && mkdir -p "$SNOWMINT_CONFORMANCE_DIR"
stages=(
  "setup:scripts/setup.sh"
  "core:scripts/test-core.sh"
  "msrv:scripts/test-msrv.sh"
  "miri:scripts/test-miri.sh"
  "fuzz:scripts/test-fuzz.sh"
  "coord:coord/test.sh"
  "c:bindings-c/test.sh"
  "python:bindings-python/test.sh"
  "node:bindings-node/test.sh"
  "wasm:bindings-wasm/test.sh"
  "conformance:scripts/check-conformance.py"
)
[ $# -gt 0 ] && stages=("$@")
summary=(); failed=0; passed=0; start_all=$(date +%s)
for s in "${stages[@]}"; do
  name="${s%%:*}"; script="${s#*:}"
  echo; echo "==================== stage $name ($script) ===================="
  t0=$(date +%s)
  case "$script" in *.py) run=(python3 "$script") ;; *) run=(bash "$script") ;; esac
  if "${run[@]}"; then status=ok; passed=$((passed + 1)); else status=FAILED; failed=$((failed + 1)); fi
  summary+=("$(printf '%-12s %-7s %5ss' "$name" "$status" "$(( $(date +%s) - t0 ))")")
done
echo; echo "==================== summary ===================="
printf '%s\n' "${summary[@]}"
echo "total        $(( $(date +%s) - start_all ))s"
echo "stages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
