#!/usr/bin/env bash
# The chaos stage of `make test` (scripts/test-all.sh, after the Python and Node stages): real servers,
# real faults, bounded. Starts a 3-member etcd and PostgreSQL (scripts/servers.sh: free 127.0.0.1 ports,
# throw-away data, stopped on every exit path) and runs scripts/chaos.py against them: lease holders in
# Python, Node and Rust paused past their TTL so node IDs change hands while minting (at least 20
# hand-overs on etcd, asserted), the etcd leader killed and paused, range sequences moving ranges,
# PostgreSQL SIGKILLed and restarted behind a proxy dropping answers after commit, the ID service with
# Python and Node clients and a client lease; every ID checked, the figures printed.
#   scripts/chaos.sh            about 2 minutes (50 s on etcd, 40 s on PostgreSQL)
#   scripts/chaos.sh --long     about 10 minutes (300 s and 240 s)
# Takes what the earlier stages built, rebuilding nothing: its NEEDS in scripts/stages.sh, the Python
# stage's venv with the wheel installed (target/python/test-venv) and the Node stage's installed package
# (target/node-test/project), checked before it starts (scripts/test-all.sh; `stage_needs` when run by
# itself); the CLI (`snowmint serve`, scripts/service-bin.sh: current after the service stage) and the Rust
# holder (coord/examples/fleet_worker.rs: `cargo test -p snowmint-coord` of the coord stage built it).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
need_cargo
export SNOWMINT_CHAOS_PYTHON="$TARGET/python/test-venv/bin/python"
export SNOWMINT_CHAOS_NODE_PKG="$TARGET/node-test/project/node_modules/snowmint"
stage_needs chaos || exit 1
need_node
cargo build -q -p snowmint-coord --example fleet_worker
export SNOWMINT_CHAOS_RUST_WORKER="$TARGET/debug/examples/fleet_worker"
export SNOWMINT_CHAOS_WORK="$TARGET/chaos"
rm -rf "$SNOWMINT_CHAOS_WORK"
export SNOWMINT_SERVE="$(bash scripts/service-bin.sh)"
source scripts/servers.sh
etcd_start 3
pg_start
# Not exec: the servers' trap stops them when the driver is done.
python3 scripts/chaos.py "$@"
