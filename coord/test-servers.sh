#!/usr/bin/env bash
# The coordination stores against real servers: starts etcd (a 3-member cluster, so every test also
# crosses failover paths) and PostgreSQL 15 on free 127.0.0.1 ports with throw-away data (installing
# etcd-server if missing), runs coord/tests/servers*.rs against them, and stops them on every exit path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/servers.sh"
cd "$ROOT"
etcd_start 3
pg_start
export SNOWMINT_REQUIRE_SERVERS=1
set -x
cargo test -p snowmint-coord --test servers -- "$@"
cargo test -p snowmint-coord --test servers_outage -- --test-threads=1 "$@"
