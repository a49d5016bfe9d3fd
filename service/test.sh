#!/usr/bin/env bash
# The ID service (SPEC §6a, crate snowmint-service, `snowmint serve`): lints, the protocol on a real
# 127.0.0.1 socket (service/tests/http.rs: concurrent batch fetchers, every bad request, /metrics through a
# strict Prometheus parser, client leases), and `snowmint serve` as a process (service/tests/process.rs:
# graceful shutdown; on a real etcd, client leases surviving SIGTERM and SIGKILL and two instances on one
# store; on the embedded store, etcd and PostgreSQL, no client leased an instance's node ID), then the
# README's example as written. etcd and PostgreSQL run as real servers (scripts/servers.sh), stopped on
# every exit path. About 1-2 minutes on 2 cores once built.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$ROOT"
bash scripts/setup-rust.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v curl >/dev/null 2>&1 || apt_install curl
source scripts/servers.sh
etcd_start 1
pg_start
export SNOWMINT_REQUIRE_SERVERS=1
set -x
cargo clippy -p snowmint-service --all-targets -- -D warnings
# One build of the CLI (the process tests run target/debug/snowmint), then the tests.
cargo build -p snowmint-cli
cargo test -p snowmint-service
RUSTDOCFLAGS="-D warnings" cargo doc -p snowmint-service --no-deps
# The README's service example, as written.
awk '/<!-- service-example/{f=1;next} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' README.md > "$work/example.sh"
test -s "$work/example.sh"
TMPDIR="$work" PATH="$ROOT/target/debug:$PATH" bash -euo pipefail "$work/example.sh"
