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
# libsnowmint and the C programs: the scripted-case replayer and the fleet worker (scripts/fleet/worker.c).
build_c() {
  bash bindings-c/build.sh && make -s -C bindings-c demo && mkdir -p "$TARGET/demo-fleet" &&
    cc -std=c11 -Wall -Wextra -Werror -pedantic -O2 -I bindings-c/include scripts/fleet/worker.c \
      -o "$TARGET/demo-fleet/worker" "$TARGET/release/libsnowmint.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
}
step "installing the Debian packages the demo uses when missing (compilers, cJSON, Python venv, Node.js)" \
  "a minute or two when missing, else instant" bash scripts/setup.sh --demo
say "building every runtime once, in release (about 8 minutes on a fresh 2-core machine; seconds when current)"
# wasm-bindgen-cli (compiled once, about 2 minutes on a fresh machine) and the WASM tools are installed
# beside the builds below, so the two cores stay busy through their link steps; the WASM step waits for it.
TOOLS_LOG="$TARGET/demo-wasm-tools.log"
setsid bash bindings-wasm/build.sh --tools-only >"$TOOLS_LOG" 2>&1 &
TOOLS_PID=$!   # its own process group (setsid), ended with the demo if the demo stops first
trap 'kill -- -"$TOOLS_PID" 2>/dev/null || true' EXIT
wasm_tools() {
  if ! wait "$TOOLS_PID"; then cat "$TOOLS_LOG"; return 1; fi
  cat "$TOOLS_LOG"
  bash bindings-wasm/build.sh
}
step "building the Rust CLI and the replayer (release: the coordination layer, the ID service and their dependencies)" \
  "about 3 minutes the first time, wasm-bindgen-cli compiling beside it" cargo build --release -p snowmint-cli -p snowmint-replay
step "building libsnowmint for C (release; its dependencies are the CLI's, already built) and the C programs" \
  "about a minute" build_c
step "building the Python wheel for $(python3 -V) (maturin, release)" "about 80 s" \
  bash bindings-python/build.sh --this-python
step "building the Node addon (napi-rs, release: its own target folder, so the graph once more)" "about 95 s" bash bindings-node/build.sh
step "building the WASM package (wasm32, wasm-bindgen, wasm-opt; run in Node here)" \
  "about 1 minute, and the rest of wasm-bindgen-cli's build the first time" wasm_tools
say "built; the demo:"
echo
python3 scripts/demo.py "$@"
echo
python3 scripts/demo_fleet.py "$TARGET/python/demo-venv/bin/python"
echo
say "done"
