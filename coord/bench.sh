#!/usr/bin/env bash
# Coordination benchmarks (coord/benches/lease.rs), one run: minting under a lease vs a plain node ID
# (ratio printed), claim latency, 64 processes attaching at once to a 128-node sequencer. The store is
# $SNOWMINT_BENCH_STORE (default: a fresh embedded store in a temporary directory).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo bench -p snowmint-coord --bench lease -- "$@"
