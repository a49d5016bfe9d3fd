#!/usr/bin/env bash
# Every test of every runtime, stage by stage; a timing summary at the end. Exits non-zero if any stage
# failed (all stages run regardless, so one run shows every failure).
#   scripts/test-all.sh            `make test`: the stages below (what CI runs)
#   scripts/test-all.sh --long     `make test-long`: the evidence too slow for `make test` (LONG_STAGES:
#                                  the MSRV builds, the full Miri sweep, long fuzzing, the whole
#                                  Python suite on the other CPython versions, the chaos run for 9
#                                  minutes instead of 1.5, the README's recipes killed mid-load
#                                  3 runs in a row instead of 1, the liveness curve under faults);
#                                  `make test` then `make test-long` is the full evidence
#   scripts/test-all.sh NAME:SCRIPT…   the given stages only (`make test-core` and friends)
# Each stage's line in the summary gives its wall time and the CPU time (user + system) of its
# processes: on 2 cores a stage can use up to twice its wall time.
# A stage whose name ends in `&` runs beside the stages after it (its output kept in
# target/stage-logs/NAME.log and printed whole once a later stage has waited for it, or at the end): Miri
# interprets on one core while the server stages mostly wait on leases, TTLs and servers, so the two overlap
# well, and the fuzzing (its sanitizer build in fuzz/target, then 5 s per target) beside them too, taking
# the CPU the cross builds below would otherwise have; the service stage (its own servers; mostly waiting on
# connections, deadlines and a browser: about a fifth of a core) beside the C stage's builds; the Node stage
# (mostly waiting on servers, child processes and timers: about half a core) and the cross stage's builds
# and emulated runs beside the Python stage (about one core: the three together about two); the chaos run
# (real processes paused, killed and resumed on a schedule: mostly waiting) beside the WASM stage's builds
# and browser; and from the start, the portable artifacts' four cross builds (`dist-build`, at nice 19: only
# the CPU the other stages leave idle), which the `dist` stage then packs and checks.
# `@NAME` after a stage's name: it starts once the background stage NAME has ended (the chaos run
# takes the Node stage's installed package; the dist stage, the cross builds); `@all`: once every
# background stage has (the conformance check reads what every runtime's runner recorded).
# Every stage shares one target directory (target/; the toolchains pinned by a stage keep their own
# subfolder: target/msrv, target/loom, target/miri-sysroot, fuzz/target; the cross builds of the
# portable artifacts theirs, target/dist/cargo, so they never hold cargo's lock on target/release while
# another stage's release build waits) and the release artifacts
# `make demo` built (the CLI, libsnowmint, the wheels, the Node addon, the WASM package): cargo and the
# bindings' build.sh find them current.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
# Every conformance runner records the cases it ran here; the last stage checks that all seven runtimes
# (rust, c, python, node, wasm-node, wasm-browser, postgres) ran and passed every case of tests/vectors/.
export SNOWMINT_CONFORMANCE_DIR="$ROOT/target/conformance"
stages=(
  "setup:scripts/setup.sh"
  "dist-build&:scripts/dist.sh --modules"
  "core:scripts/test-core.sh"
  "miri&:scripts/test-miri.sh"
  "fuzz&:scripts/test-fuzz.sh"
  "coord:coord/test.sh"
  "service&:service/test.sh"
  "c:bindings-c/test.sh"
  "pg&:pg/test.sh"
  "cross&:scripts/cross.sh"
  "node&:bindings-node/test.sh"
  "python:bindings-python/test.sh"
  "chaos&@node:scripts/chaos.sh"
  "wasm:bindings-wasm/test.sh"
  "dist@dist-build:scripts/test-dist.sh"
  "conformance@all:scripts/check-conformance.py"
)
# CPython versions of the wheel suite besides test.sh's own 3.11 (the cp310-abi3 wheel): in `make test`
# its version-sensitive part with the cp39-abi3 wheel on 3.9 and on the newest CPython; the whole suite
# on all four in `make test-long`.
PYTHON_VERSIONS_TEST="3.9 3.13"
PYTHON_VERSIONS_LONG="3.9 3.10 3.12 3.13"
LONG_STAGES=(
  "setup:scripts/setup.sh"
  "msrv:scripts/test-msrv.sh"
  "miri-full:scripts/test-miri.sh --full"
  "fuzz-long:scripts/test-fuzz.sh --long"
  "python-versions:bindings-python/test-versions.sh"
  "chaos-long:scripts/chaos.sh --long"
  "recipes-python:bindings-python/test.sh --recipes-long"
  "recipes-node:bindings-node/test.sh --recipes-long"
  "liveness-curve:scripts/liveness-curve.sh"
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
# The temporary files of every stage (the tests' stores, state files, keys and browser profiles: each
# test language's temp-dir call reads TMPDIR) go under one folder of this run, removed when the run
# ends, however its tests ended: a run leaves nothing behind in /tmp. (The servers' own folders are
# /tmp/snowmint-servers.*, which scripts/servers.sh removes on every exit path.)
RUN_TMP="$(mktemp -d "${TMPDIR:-/tmp}/snowmint-run.XXXXXX")" && chmod 755 "$RUN_TMP"
export TMPDIR="$RUN_TMP"
trap 'rm -rf "$RUN_TMP"' EXIT
# disk_free: the free space, in GiB, of the filesystem that holds target/ (a run of `make test` writes
# about 11 GiB there and under TMPDIR; a full disk fails every stage after it, so the summary shows it).
disk_free() { df -BG --output=avail "$ROOT/target" | tail -n1 | tr -dc 0-9; }
disk_start="$(disk_free)"; disk_least="$disk_start"
echo "test-all: ${disk_start} GiB free on the disk of $ROOT/target at the start; temporary files under $RUN_TMP"
background=()   # "NAME PID T0" of the stages running beside the others
# cpu_seconds VAR: sets VAR to the CPU seconds (user + system) of this shell's finished children so far,
# from bash's `times`, run in this shell (in a pipe or $(…) it would run in a subshell, which has none).
cpu_seconds() {
  local f="$LOGS/.times.$BASHPID"
  times >"$f"
  printf -v "$1" '%s' "$(tail -n1 "$f" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%d", s }')"
  rm -f "$f"
}
record() {      # record NAME STATUS_CODE T0 [END [NOTE [CPU]]]
  local status=ok cpu=""
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else status=FAILED; failed=$((failed + 1)); fi
  [ -n "${6:-}" ] && cpu="$(printf '%6ss CPU' "$6")"
  summary+=("$(printf '%-16s %-7s %5ss%s%s' "$1" "$status" "$(( ${4:-$(date +%s)} - $3 ))" "$cpu" "${5:-}")")
  local free; free="$(disk_free)"; [ "${free:-0}" -lt "$disk_least" ] && disk_least="${free:-0}"
}
# wait_background NAME: waits for the background stage NAME (bounded: every stage bounds its own runs;
# this waits at most an hour), prints its output and records it.
wait_background() {
  local b name t0 rc cpu end rest=()
  for b in "${background[@]}"; do
    read -r name t0 <<<"$b"
    if [ "$name" != "$1" ]; then rest+=("$b"); continue; fi
    for _ in $(seq 3600); do [ -f "$LOGS/$name.end" ] && break; sleep 1; done
    read -r rc cpu end <"$LOGS/$name.end" 2>/dev/null || { rc=124; cpu=""; end=""; }
    echo; echo "==================== stage $name (ran beside the others; its output) ===================="
    cat "$LOGS/$name.log"
    record "$name" "$rc" "$t0" "$end" "  (beside the others)" "$cpu"
  done
  background=("${rest[@]}")
}
wait_all_background() {
  local b
  for b in "${background[@]}"; do wait_background "${b%% *}"; done
}
for s in "${stages[@]}"; do
  name="${s%%:*}"; read -ra argv <<<"${s#*:}"
  case "${argv[0]}" in *.py) run=(python3 "${argv[@]}") ;; *) run=(bash "${argv[@]}") ;; esac
  if [ "${name#*@}" != "$name" ]; then
    after="${name#*@}"; name="${name%@*}"
    if [ "$after" = all ]; then wait_all_background; else wait_background "$after"; fi
  fi
  t0=$(date +%s)
  if [ "${name%&}" != "$name" ]; then
    name="${name%&}"
    echo; echo "==================== stage $name (${argv[*]}): started beside the next stages, log $LOGS/$name.log"
    rm -f "$LOGS/$name.end"
    # Started twice removed (not a child of this shell, which never reaps it), so that its CPU time is
    # not counted in the foreground stage during which it ends; it writes its own: "EXIT CPU END".
    ( ( "${run[@]}"; rc=$?; cpu_seconds cpu; echo "$rc $cpu $(date +%s)" >"$LOGS/$name.end.tmp"
        mv "$LOGS/$name.end.tmp" "$LOGS/$name.end" ) >"$LOGS/$name.log" 2>&1 & )
    background+=("$name $t0")
    continue
  fi
  echo; echo "==================== stage $name (${argv[*]}) ===================="
  cpu_seconds c0
  "${run[@]}"; rc=$?
  cpu_seconds c1
  record "$name" "$rc" "$t0" "" "" "$((c1 - c0))"
done
wait_all_background
echo; echo "==================== summary ===================="
printf '%s\n' "${summary[@]}"
echo "total            $(( $(date +%s) - start_all ))s   (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
disk_end="$(disk_free)"
[ "${disk_end:-0}" -lt "$disk_least" ] && disk_least="${disk_end:-0}"
echo "disk             ${disk_start} GiB free at the start, ${disk_end} GiB at the end, ${disk_least} GiB the least at a stage's end"
[ "$failed" -gt 0 ] && [ "$disk_least" -lt 2 ] \
  && echo "test-all: the disk is (nearly) full: a stage that failed may have failed for that alone (ENOSPC)"
echo "stages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
