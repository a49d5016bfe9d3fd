#!/usr/bin/env bash
# Every test of every runtime, stage by stage; a timing summary at the end. Exits non-zero if any stage
# failed (all stages run regardless, so one run shows every failure).
#   scripts/test-all.sh            `make test`: the stages below (what CI runs)
#   scripts/test-all.sh --long     `make test-long`: the evidence too slow for `make test` (LONG_STAGES:
#                                  the MSRV builds, the full Miri sweep, long fuzzing, the remaining
#                                  CPython versions, the chaos run for 9 minutes instead of 1.5);
#                                  `make test` then `make test-long` is the full evidence
#   scripts/test-all.sh NAME:SCRIPT…   the given stages only (`make test-core` and friends)
# A stage whose name ends in `&` runs beside the stages after it (its output kept in
# target/stage-logs/NAME.log and printed whole when it ends, before the summary): Miri interprets on one
# core while the server stages mostly wait on leases, TTLs and servers, so the two overlap well; the
# chaos run (real processes paused, killed and resumed on a schedule: mostly waiting) beside the WASM
# stage's builds and browser.
# Every stage shares one target directory (target/; the toolchains pinned by a stage keep their own
# subfolder: target/msrv, target/loom, target/miri-sysroot, fuzz/target) and the release artifacts
# `make demo` built (the CLI, libsnowmint, the wheels, the Node addon, the WASM package): cargo and the
# bindings' build.sh find them current.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
# Every conformance runner records the cases it ran here; the last stage checks that all six runtimes
# (rust, c, python, node, wasm-node, wasm-browser) ran and passed every case of tests/vectors/.
export SNOWMINT_CONFORMANCE_DIR="$ROOT/target/conformance"
stages=(
  "setup:scripts/setup.sh"
  "core:scripts/test-core.sh"
  "miri&:scripts/test-miri.sh"
  "coord:coord/test.sh"
  "service:service/test.sh"
  "fuzz:scripts/test-fuzz.sh"
  "c:bindings-c/test.sh"
  "python:bindings-python/test.sh"
  "node:bindings-node/test.sh"
  "chaos&:scripts/chaos.sh"
  "wasm:bindings-wasm/test.sh"
  "conformance:scripts/check-conformance.py"
)
# CPython versions of the wheel suite besides test.sh's own 3.11 (the cp310-abi3 wheel): in `make test`
# the cp39-abi3 wheel on 3.9 and the newest CPython; 3.10 and 3.12 in `make test-long`.
PYTHON_VERSIONS_TEST="3.9 3.13"
PYTHON_VERSIONS_LONG="3.10 3.12"
LONG_STAGES=(
  "setup:scripts/setup.sh"
  "msrv:scripts/test-msrv.sh"
  "miri-full:scripts/test-miri.sh --full"
  "fuzz-long:scripts/test-fuzz.sh --long"
  "python-versions:bindings-python/test-versions.sh"
  "chaos-long:scripts/chaos.sh --long"
)
if [ "${1:-}" = "--long" ]; then
  shift
  stages=("${LONG_STAGES[@]}")
  export SNOWMINT_PYTHON_VERSIONS="${SNOWMINT_PYTHON_VERSIONS:-$PYTHON_VERSIONS_LONG}"
  unset SNOWMINT_CONFORMANCE_DIR   # the long stages run no conformance runner
else
  export SNOWMINT_PYTHON_VERSIONS="${SNOWMINT_PYTHON_VERSIONS:-$PYTHON_VERSIONS_TEST}"
  rm -rf "$SNOWMINT_CONFORMANCE_DIR" && mkdir -p "$SNOWMINT_CONFORMANCE_DIR"
fi
[ $# -gt 0 ] && stages=("$@")
summary=(); failed=0; passed=0; start_all=$(date +%s)
LOGS="$ROOT/target/stage-logs"; mkdir -p "$LOGS"
background=()   # "NAME PID T0" of the stages running beside the others
record() {      # record NAME STATUS_CODE T0 [END [NOTE]]
  local status=ok
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else status=FAILED; failed=$((failed + 1)); fi
  summary+=("$(printf '%-16s %-7s %5ss%s' "$1" "$status" "$(( ${4:-$(date +%s)} - $3 ))" "${5:-}")")
}
for s in "${stages[@]}"; do
  name="${s%%:*}"; read -ra argv <<<"${s#*:}"
  case "${argv[0]}" in *.py) run=(python3 "${argv[@]}") ;; *) run=(bash "${argv[@]}") ;; esac
  t0=$(date +%s)
  if [ "${name%&}" != "$name" ]; then
    name="${name%&}"
    echo; echo "==================== stage $name (${argv[*]}): started beside the next stages, log $LOGS/$name.log"
    rm -f "$LOGS/$name.end"
    ( "${run[@]}"; rc=$?; date +%s >"$LOGS/$name.end"; exit "$rc" ) >"$LOGS/$name.log" 2>&1 &
    background+=("$name $! $t0")
    continue
  fi
  echo; echo "==================== stage $name (${argv[*]}) ===================="
  "${run[@]}"; record "$name" $? "$t0"
done
for b in "${background[@]}"; do
  read -r name pid t0 <<<"$b"
  wait "$pid"; rc=$?
  echo; echo "==================== stage $name (ran beside the others; its output) ===================="
  cat "$LOGS/$name.log"
  record "$name" "$rc" "$t0" "$(cat "$LOGS/$name.end" 2>/dev/null || date +%s)" "  (beside the others)"
done
echo; echo "==================== summary ===================="
printf '%s\n' "${summary[@]}"
echo "total            $(( $(date +%s) - start_all ))s   (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "stages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
