#!/usr/bin/env bash
# The README's first command. Builds what the demo runs, saying what and about how long before each build
# (quiet builds, each step's output in target/demo-logs/STEP.log; a step that fails prints its last lines), then two halves:
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
LOGS="$TARGET/demo-logs"     # one log per build step: LOGS/NAME.log
rm -rf "$LOGS" && mkdir -p "$LOGS"
T0=$SECONDS
say() { printf '[demo %4ss] %s\n' "$((SECONDS - T0))" "$*"; }
# failed NAME: the last lines of step NAME's log and the log's path, on stderr.
failed() {
  local log="$LOGS/$1.log"
  { echo "---- the last 40 lines of $log ----"; tail -n 40 "$log"; echo "---- end of $log ----"; } >&2
  say "FAILED: $1 (its whole log: $log)"
}
# Background steps, each in its own process group (setsid: ended with the demo if the demo stops first):
#   start NAME COMMAND…   starts it, its output in LOGS/NAME.log
#   finish NAME           waits for it; says how long it took, or prints its log's last lines and fails
declare -A PID=() STARTED=()
trap 'for p in "${PID[@]}"; do kill -- -"$p" 2>/dev/null || true; done' EXIT
start() {
  local name="$1"; shift
  STARTED[$name]=$(date +%s)
  rm -f "$LOGS/$name.end"
  # The step writes the time it ended (LOGS/NAME.end): it may end long before the demo waits for it.
  setsid bash -c '"$@"; rc=$?; date +%s >"$0"; exit "$rc"' "$LOGS/$name.end" "$@" >"$LOGS/$name.log" 2>&1 &
  PID[$name]=$!
}
finish() {
  local rc=0 end
  wait "${PID[$1]}" || rc=$?
  unset "PID[$1]"
  if [ "$rc" -ne 0 ]; then failed "$1"; return 1; fi
  end="$(cat "$LOGS/$1.end" 2>/dev/null || date +%s)"
  say "  $1 done in $((end - STARTED[$1])) s"
}
# step NAME WHAT ESTIMATE COMMAND…: says what it builds and about how long, runs it quietly, says how long
# it took (or fails as `finish` does).
step() {
  local name="$1" what="$2" estimate="$3"; shift 3
  say "$what ($estimate) …"
  start "$name" "$@"
  finish "$name" || exit 1
}
# libsnowmint and the C programs: the scripted-case replayer and the fleet worker (scripts/fleet/worker.c).
build_c() {
  bash bindings-c/build.sh && make -s -C bindings-c demo && mkdir -p "$TARGET/demo-fleet" &&
    cc -std=c11 -Wall -Wextra -Werror -pedantic -O2 -I bindings-c/include scripts/fleet/worker.c \
      -o "$TARGET/demo-fleet/worker" "$TARGET/release/libsnowmint.a" -lutil -lrt -lpthread -lm -ldl -lc
}
export -f build_c
export TARGET
step setup "installing the Debian packages the demo uses when missing (compilers, cJSON, Python venv, Node.js)" \
  "a minute or two when missing, else instant" bash scripts/setup.sh --demo
say "building every runtime once, in release (about 4½ minutes on a fresh 2-core machine; seconds when current)"
# What runs when, and why no build reads a folder another build is writing (ARCHITECTURE.md, "Builds"):
#  1. Beside the CLI's cargo run (target/release), in the background: the bindings' tools (npm's @napi-rs/cli
#     in bindings-node/node_modules, maturin in target/python/tools-venv: downloads, no cargo) and the WASM
#     package (its own target folders, target/wasm-bindgen-tool and target/wasm-build).
#  2. When the CLI's run has ended, and before any other build starts: the copies of target/release the wheel
#     and the Node addon build in (scripts/lib.sh, beside_prepare).
#  3. libsnowmint in target/release, the wheel and the Node addon in their copies, at once: each compiles
#     only its own crates on the graph of step 1, in one long single-threaded step (its link-time-optimised
#     compile), so the three share the two cores.
start tools bash -c 'bash bindings-node/build.sh --tools-only && bash bindings-python/build.sh --tools-only'
start WASM bash bindings-wasm/build.sh
# One dependency graph in target/release for every native artifact (workspace-hack/: one feature set; each
# dependency in bitcode for link-time optimisation): the CLI and the replayer in one cargo run, so their
# last, single-threaded steps share the two cores (bindings-c/Makefile builds the C libraries without the
# rlib, which would make cargo build the whole graph a second time).
step CLI "building the Rust CLI and the replayer (release: the coordination layer, the ID service and their dependencies)" \
  "about 2½ minutes the first time, the WASM package and the bindings' tools installing beside it" \
  cargo build --release -p snowmint-cli -p snowmint-replay
say "installing the bindings' tools (npm, maturin), begun beside the CLI's build …"
finish tools || exit 1
beside_prepare wheel node
say "building libsnowmint and the C programs, the Python wheel for $(python3 -V) (maturin) and the Node addon (napi-rs) side by side (release: each its own crates on the graph above) (about 1½ minutes) …"
t=$(date +%s)
start C bash -c build_c
start Python bash bindings-python/build.sh --this-python
start Node bash bindings-node/build.sh
rc=0
for name in C Python Node; do finish "$name" || rc=1; done
beside_done
[ "$rc" -eq 0 ] || exit 1
say "  all three done in $(( $(date +%s) - t )) s"
say "finishing the WASM package (wasm32, wasm-bindgen, wasm-opt; run in Node here), built beside the others (seconds, or what is left of the bindings generator's build the first time) …"
finish WASM || exit 1
say "built; the demo:"
echo
python3 scripts/demo.py "$@"
echo
python3 scripts/demo_fleet.py "$TARGET/python/demo-venv/bin/python"
echo
say "done"
