#!/usr/bin/env bash
# Claim latency on 127.0.0.1 (embedded, etcd, PostgreSQL side by side) and 64 processes attaching at once
# to a 128-node sequencer on each: starts a 1-member etcd and PostgreSQL 15 (scripts/servers.sh), runs
# coord/benches/servers.rs (release build), then coord/benches/range.rs (range sequences: next_id vs
# PostgreSQL nextval(), ratio printed; the slowest call of a sustained 10^7-ID run), stops the servers on
# every exit path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/servers.sh"
cd "$ROOT"
cargo build -q -p snowmint-coord --benches --release
etcd_start "${SNOWMINT_BENCH_ETCD_MEMBERS:-1}"
pg_start
cargo bench -q -p snowmint-coord --bench servers
# Range sequences: next_id from a held range vs PostgreSQL nextval() (ratio), a sustained 10^7-ID run.
cargo bench -q -p snowmint-coord --bench range
