#!/usr/bin/env bash
# The README's first command. Builds what the demo runs, saying what and about how long before each build
# (quiet builds, their output in target/demo-build.log), then two halves:
#  1. scripts/demo.py: the same scripted IDs minted in Rust, C, Python, Node and WASM (in Node), side by
#     side with their decoding; fails loudly if any runtime differs; then live IDs from each runtime.
#  2. scripts/demo_fleet.py: a fleet on the embedded store (no server): two processes per runtime (the
#     Rust CLI, C, Python, Node) leasing distinct node IDs and minting at once, one killed with SIGKILL
#     and started again; a table and the duplicate count (0).
# Installs only what it uses (scripts/setup.sh --demo: no browser, no etcd, no PostgreSQL). The estimates
# are for a fresh 2-core machine; a second run finds everything current and takes seconds.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
mkdir -p "$TARGET"
LOG="$TARGET/demo-build.log"
: > "$LOG"
T0=$SECONDS
say() { printf '[demo %4ss] %s\n' "$((SECONDS - T0))" "$*"; }
# step WHAT ESTIMATE COMMAND…: says what it builds and about how long, runs it quietly, says how long it took.
step() {
  local what="$1" estimate="$2" t=$SECONDS; shift 2
  say "$what ($estimate) …"
  if ! "$@" >>"$LOG" 2>&1; then
    tail -n 40 "$LOG" >&2
    say "FAILED: $what (the whole log: $LOG)"
    exit 1
  fi
  say "  done in $((SECONDS - t)) s"
}
# steps_beside WHAT ESTIMATE "NAME:COMMAND"…: like step, the commands running at once (each its own log,
# appended to $LOG when all have ended); says how long each took.
steps_beside() {
  local what="$1" estimate="$2" t=$SECONDS job name pids=() names=() rc failed=""; shift 2
  say "$what ($estimate) …"
  for job in "$@"; do
    name="${job%%:*}"
    ( t0=$SECONDS; rc=0; eval "${job#*:}" >"$LOG.$name" 2>&1 || rc=$?
      echo "$rc $((SECONDS - t0))" >"$LOG.$name.end"; exit "$rc" ) &
    pids+=("$!"); names+=("$name")
  done
  for i in "${!pids[@]}"; do
    rc=0; wait "${pids[$i]}" || rc=$?
    name="${names[$i]}"; cat "$LOG.$name" >>"$LOG"
    [ "$rc" -eq 0 ] || { failed+=" $name"; tail -n 40 "$LOG.$name" >&2; }
    say "  $name done in $(cut -d' ' -f2 "$LOG.$name.end") s$([ "$rc" -eq 0 ] || echo ': FAILED')"
    rm -f "$LOG.$name" "$LOG.$name.end"
  done
  if [ -n "$failed" ]; then say "FAILED:$failed (the whole log: $LOG)"; exit 1; fi
  say "  all done in $((SECONDS - t)) s"
}
# libsnowmint and the C programs: the scripted-case replayer and the fleet worker (scripts/fleet/worker.c).
build_c() {
  bash bindings-c/build.sh && make -s -C bindings-c demo && mkdir -p "$TARGET/demo-fleet" &&
    cc -std=c11 -Wall -Wextra -Werror -pedantic -O2 -I bindings-c/include scripts/fleet/worker.c \
      -o "$TARGET/demo-fleet/worker" "$TARGET/release/libsnowmint.a" -lutil -lrt -lpthread -lm -ldl -lc
}
step "installing the Debian packages the demo uses when missing (compilers, cJSON, Python venv, Node.js)" \
  "a minute or two when missing, else instant" bash scripts/setup.sh --demo
say "building every runtime once, in release (about 5 minutes on a fresh 2-core machine; seconds when current)"
# The WASM package (its bindings generator compiled once, about a minute on a fresh machine, then the wasm32
# build in its own target folder) is built beside the native builds below, so the two cores stay busy
# through their long single-threaded steps (each artifact's link-time-optimised compile and link).
WASM_LOG="$TARGET/demo-wasm-build.log"
setsid bash bindings-wasm/build.sh >"$WASM_LOG" 2>&1 &
WASM_PID=$!   # its own process group (setsid), ended with the demo if the demo stops first
trap 'kill -- -"$WASM_PID" 2>/dev/null || true' EXIT
wasm_build() {
  local rc=0
  wait "$WASM_PID" || rc=$?
  cat "$WASM_LOG"
  return "$rc"
}
# One dependency graph in target/release for every native artifact (workspace-hack/: one feature set; each
# dependency in bitcode for link-time optimisation): the CLI and the replayer in one cargo run, so their
# last, single-threaded steps share the two cores; libsnowmint, the wheel and the Node addon then compile
# only their own crates on it (bindings-c/Makefile builds the C libraries without the rlib, which would
# make cargo build the whole graph a second time).
step "building the Rust CLI and the replayer (release: the coordination layer, the ID service and their dependencies)" \
  "about 2½ minutes the first time, the WASM package building beside it" \
  cargo build --release -p snowmint-cli -p snowmint-replay
# The three bindings at once: each compiles only its own crates on the graph above, in one long
# single-threaded step (its link-time-optimised compile); cargo builds one thing at a time in a target
# folder, so the wheel and the Node addon build in copies of it (scripts/lib.sh, cargo_dir_beside).
export SNOWMINT_BUILD_BESIDE=1
steps_beside "building libsnowmint and the C programs, the Python wheel for $(python3 -V) (maturin) and the Node addon (napi-rs) side by side (release: each its own crates on the graph above)" \
  "about 2 minutes" \
  "C:build_c" "Python:bash bindings-python/build.sh --this-python" "Node:bash bindings-node/build.sh"
unset SNOWMINT_BUILD_BESIDE
step "finishing the WASM package (wasm32, wasm-bindgen, wasm-opt; run in Node here), built beside the others" \
  "seconds, or what is left of the bindings generator's build the first time" wasm_build
say "built; the demo:"
echo
python3 scripts/demo.py "$@"
echo
python3 scripts/demo_fleet.py "$TARGET/python/demo-venv/bin/python"
echo
say "done"
