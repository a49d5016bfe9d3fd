#!/usr/bin/env bash
# Every test of every runtime, stage by stage; a timing summary at the end. Exits non-zero if any stage
# failed (all stages run regardless, so one run shows every failure). The stages, their order, which run
# beside which, what each waits for and what each takes from another are data: scripts/stages.sh.
#   scripts/test-all.sh              `make test`: the stages IN test (what CI runs)
#   scripts/test-all.sh --long       `make test-long`: the stages IN long, the evidence too slow for `make
#                                    test` (the MSRV builds, the full Miri sweep, long fuzzing, the whole
#                                    Python suite on the other CPython versions, the chaos run for 9
#                                    minutes instead of 1.5, the README's recipes killed mid-load 3 runs in
#                                    a row instead of 1, the liveness curve under faults); `make test` then
#                                    `make test-long` is the full evidence
#   scripts/test-all.sh NAME…        the named stages only, one after another (`make test-NAME`); NAME:COMMAND
#                                    runs COMMAND as a stage NAME the table does not have
#   scripts/test-all.sh --plan [--long] [NAME…]   prints the schedule (which stage starts when, beside
#                                    what, after what, taking what from which stage) and runs nothing
# Each stage's line in the summary gives its wall time and the CPU time (user + system) of its
# processes: on 2 cores a stage can use up to twice its wall time.
# Before a stage starts, its NEEDS are checked: a need made by a stage of this run must have been made
# by it in this run (its file written since that stage started), else the stage fails at once, naming
# the stage that makes it; a need made by a stage not in this run (`make test-chaos`) is taken from an
# earlier run, and the run says so, with its file's time, or fails the stage if there is none.
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
# (rust, c, postgres, python, node, wasm-node, wasm-browser) ran and passed every case of tests/vectors/.
export SNOWMINT_CONFORMANCE_DIR="$ROOT/target/conformance"
# CPython versions of the wheel suite besides test.sh's own 3.11 (the cp310-abi3 wheel): in `make test`
# its version-sensitive part with the cp39-abi3 wheel on 3.9 and on the newest CPython; the whole suite
# on all four in `make test-long`.
PYTHON_VERSIONS_TEST="3.9 3.13"
PYTHON_VERSIONS_LONG="3.9 3.10 3.12 3.13"
# The arguments: the suite (test, or long with --long), --plan, and the stages named (in turn, in the
# foreground: as `make test-NAME` always ran them).
suite=test; plan=""; named=()
while [ $# -gt 0 ]; do
  case "$1" in
    --long) suite=long ;;
    --plan) plan=1 ;;
    -*) echo "test-all: unknown option $1 (--long, --plan, or stage names)" >&2; exit 2 ;;
    *) named+=("$1") ;;
  esac
  shift
done
stages_load || exit 2
run_order=()    # the stages of this run, in order
declare -A adhoc=()   # NAME:COMMAND stages: their command
if [ ${#named[@]} -eq 0 ]; then
  for n in "${STAGE_ORDER[@]}"; do
    case ",${STAGE_IN[$n]}," in *",$suite,"*) run_order+=("$n") ;; esac
  done
else
  for n in "${named[@]}"; do
    if [ "${n#*:}" != "$n" ]; then
      adhoc[${n%%:*}]="${n#*:}"; run_order+=("${n%%:*}")
    elif [ -n "${STAGE_POS[$n]:-}" ]; then
      run_order+=("$n")
    else
      echo "test-all: no stage '$n' in scripts/stages.sh; its stages: ${STAGE_ORDER[*]}" >&2; exit 2
    fi
  done
fi
# beside STAGE: true if it runs beside the stages after it in this run (never when stages are named).
beside() { [ ${#named[@]} -eq 0 ] && [ "${STAGE_BESIDE[$1]:-}" = yes ]; }
declare -A in_run=() started=() status=()
for n in "${run_order[@]}"; do in_run[$n]=1; done
if [ "$suite" = long ]; then
  export SNOWMINT_PYTHON_VERSIONS="${SNOWMINT_PYTHON_VERSIONS:-$PYTHON_VERSIONS_LONG}"
  unset SNOWMINT_CONFORMANCE_DIR   # the long stages run no conformance runner
else
  export SNOWMINT_PYTHON_VERSIONS="${SNOWMINT_PYTHON_VERSIONS:-$PYTHON_VERSIONS_TEST}"
  [ -n "$plan" ] || { rm -rf "$SNOWMINT_CONFORMANCE_DIR" && mkdir -p "$SNOWMINT_CONFORMANCE_DIR"; }
fi
if [ -n "$plan" ]; then
  echo "test-all --plan: the schedule of this run (suite $suite; scripts/stages.sh), nothing run"
else
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
fi
summary=(); failed=0; passed=0; start_all=$(date +%s)
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
    if [ -n "$plan" ]; then echo "wait $name"; continue; fi
    for _ in $(seq 3600); do [ -f "$LOGS/$name.end" ] && break; sleep 1; done
    read -r rc cpu end <"$LOGS/$name.end" 2>/dev/null || { rc=124; cpu=""; end=""; }
    echo; echo "==================== stage $name (ran beside the others; its output) ===================="
    cat "$LOGS/$name.log"
    status[$name]=$rc
    record "$name" "$rc" "$t0" "$end" "  (beside the others)" "$cpu"
  done
  background=("${rest[@]}")
}
wait_all_background() {
  local b
  for b in "${background[@]}"; do wait_background "${b%% *}"; done
}
# needs_ready STAGE: checks what STAGE takes from other stages (its NEEDS) before it starts, saying where
# each comes from; returns 1 if one is missing (the message names the stage that makes it). With --plan,
# what the check would find now.
needs_ready() {
  local a by file made msg rc=0
  for a in ${STAGE_NEEDS[$1]:-}; do
    by="${ARTIFACT_BY[$a]}"; file="$(artifact_path "$a")"; made=""
    [ -n "$file" ] && made="$(stat -c %Y "$file")"
    if [ -n "${in_run[$by]:-}" ] && [ -n "$plan" ]; then
      msg="takes $a from stage $by, before it in this run"
    elif [ -n "${in_run[$by]:-}" ] && [ -n "$made" ] && [ "$made" -ge "${started[$by]:-9999999999}" ]; then
      msg="takes $a from stage $by of this run"
      [ "${status[$by]:-0}" -eq 0 ] || msg+=" (which failed after making it)"
    elif [ -n "${in_run[$by]:-}" ]; then
      msg="$(need_missing "$1" "$a"), which ran in this run and did not make it (its output is above)"; rc=1
    elif [ -n "$made" ]; then
      msg="takes $a from an earlier run of stage $by (not in this run): ${file#"$ROOT"/}, made $(date -d "@$made" '+%F %T')"
    else
      msg="$(need_missing "$1" "$a"), which is not in this run, and no earlier run made it: run make test-$by first, or both: scripts/test-all.sh $by $1"
      rc=1
    fi
    case "$msg" in stage*) ;; *) msg="stage $1 $msg" ;; esac
    if [ -n "$plan" ]; then echo "  $msg"; else echo "test-all: $msg"; fi
  done
  return "$rc"
}
for name in "${run_order[@]}"; do
  if [ -n "${adhoc[$name]:-}" ]; then cmd="${adhoc[$name]}"; else cmd="${STAGE_COMMAND[$name]}"; fi
  read -ra argv <<<"$cmd"
  case "${argv[0]}" in *.py) run=(python3 "${argv[@]}") ;; *) run=(bash "${argv[@]}") ;; esac
  # What it starts after: the stages running beside the others that make its needs, then its AFTER.
  for a in ${STAGE_NEEDS[$name]:-}; do wait_background "${ARTIFACT_BY[$a]}"; done
  if [ ${#named[@]} -eq 0 ]; then
    case "${STAGE_AFTER[$name]:-}" in "") ;; all) wait_all_background ;; *) wait_background "${STAGE_AFTER[$name]}" ;; esac
  fi
  if [ -n "$plan" ]; then
    if beside "$name"; then echo "start $name beside: ${argv[*]}"; else echo "start $name: ${argv[*]}"; fi
    needs_ready "$name"
    beside "$name" && background+=("$name 0")
    continue
  fi
  t0=$(date +%s)
  if ! needs="$(needs_ready "$name")"; then
    echo; echo "==================== stage $name (${argv[*]}): not run, what it needs is missing ===================="
    echo "$needs"
    status[$name]=1
    record "$name" 1 "$t0" "" "  (not run: what it needs is missing)"
    continue
  fi
  [ -n "$needs" ] && echo "$needs"
  started[$name]=$t0
  if beside "$name"; then
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
  # Its output to the terminal and to its log (which the failure digest at the end reads).
  "${run[@]}" 2>&1 | tee "$LOGS/$name.log"; rc=${PIPESTATUS[0]}
  cpu_seconds c1
  status[$name]=$rc
  record "$name" "$rc" "$t0" "" "" "$((c1 - c0))"
done
wait_all_background
if [ -n "$plan" ]; then echo "end"; exit 0; fi
echo; echo "==================== summary ===================="
printf '%s\n' "${summary[@]}"
echo "total            $(( $(date +%s) - start_all ))s   (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
disk_end="$(disk_free)"
[ "${disk_end:-0}" -lt "$disk_least" ] && disk_least="${disk_end:-0}"
echo "disk             ${disk_start} GiB free at the start, ${disk_end} GiB at the end, ${disk_least} GiB the least at a stage's end"
[ "$failed" -gt 0 ] && [ "$disk_least" -lt 2 ] \
  && echo "test-all: the disk is (nearly) full: a stage that failed may have failed for that alone (ENOSPC)"
echo "stages: $passed passed, $failed failed"
# The failure digest: for each stage that failed, the lines of its log that name a failure, and its last
# lines, so the end of a long run's output (all a CI page may show) says what failed, not only where.
for name in "${run_order[@]}"; do
  [ "${status[$name]:-0}" -eq 0 ] && continue
  echo; echo "==================== what failed in stage $name (target/stage-logs/$name.log) ===================="
  [ -f "$LOGS/$name.log" ] || { echo "(no log: the stage did not run)"; continue; }
  grep -n -i -E '(fail|error|panicked|not ok|assert|traceback|timed out|duplicate)' "$LOGS/$name.log" \
    | grep -v -E '(^|[^0-9])0 (failed|errors?|duplicates)|failed: 0' | tail -n 40
  echo "-- its last lines:"
  tail -n 15 "$LOGS/$name.log"
done
# After a digest, the stages' times again: the very end is what a CI page shows.
if [ "$failed" -gt 0 ]; then
  echo; echo "==================== summary (again, after the digest) ===================="
  printf '%s\n' "${summary[@]}"
fi
[ "$failed" -eq 0 ]
