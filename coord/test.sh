#!/usr/bin/env bash
# Coordination: lints, unit and in-process tests of snowmint-coord (in-memory and embedded stores,
# injected clocks), docs, then the multi-process lease and sequencer tests (cli/tests/leases.rs) against
# every store URL in SNOWMINT_TEST_STORES (space-separated). The embedded store always runs, in a
# throw-away directory; etcd and PostgreSQL run as real servers (scripts/servers.sh), and the server
# stores' own tests (coord/tests/servers*.rs: store contract, pause past the TTL, SIGKILL, the store
# stopped or paused while a holder mints, etcd failover, a foreign schema) run against them, as do the
# range sequences' (coord/tests/range_servers.rs: two datacenters, a SIGKILLed global cluster, a stopped local store, a
# SIGKILLed process, a CAS race; coord/tests/lost_answers.rs: through a TCP proxy, the answer to a
# range move, a row write or a claim lost after it was applied, a reservation write delayed until after a
# higher one, and a range process opened with the global store unreachable; coord/tests/liveness.rs: a
# generator on each store, through a proxy that holds back 15 % of the answers past the answer timeout,
# mints within 30 s and during half of a minute; coord/tests/tls_servers.rs:
# etcd over HTTPS with client certificates, etcd with authentication and 1 s tokens, PostgreSQL with
# hostssl + SCRAM only, and their failures: a wrong CA, no or an expired client certificate, a wrong
# password; coord/tests/shared_lease.rs: one lease per host, processes sharing it through a state file,
# the one that claimed it SIGKILLed, a lost lease). Holders of every runtime under etcd and PostgreSQL
# faults at once: the chaos stage
# (scripts/chaos.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$ROOT"
bash scripts/setup-rust.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/embedded"
STORES="file://$work/embedded"
# The server stores, real servers on free 127.0.0.1 ports (scripts/servers.sh: etcd-server installed if
# missing, a 3-member etcd cluster so every test also crosses failover paths, PostgreSQL 15), stopped on
# every exit path. The server tests of snowmint-coord (tests/servers*.rs) must not skip here.
source scripts/servers.sh
etcd_start 3
pg_start
# TLS and authentication (coord/tests/tls_servers.rs): etcd serving only HTTPS with client certificates,
# etcd with authentication and 1 s tokens, PostgreSQL with hostssl + SCRAM only; a test CA made here.
tls_servers
export SNOWMINT_REQUIRE_SERVERS=1
STORES+=" $SNOWMINT_TEST_ETCD_URL $SNOWMINT_TEST_POSTGRES_URL"
set -x
cargo clippy -p snowmint-coord --all-targets --all-features -- -D warnings
cargo clippy -p snowmint-sim --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p snowmint-coord --no-deps
# Every test binary built first, on both cores; then two lanes at once: the simulation and the shuttle
# model (CPU on one core, no server) beside the server tests (which mostly wait: TTLs, paused holders,
# stopped servers). Cargo releases its lock before it runs tests, so the lanes never wait on each other.
cargo test -p snowmint-coord --no-run
cargo test -p snowmint-sim --test simulation --no-run
cargo test -p snowmint-coord --features shuttle,planted-defects --test shuttle --no-run
cargo test -p snowmint-cli --test leases --test range --test hints --test history --test orphan_claim --no-run
cargo build -p snowmint-cli
set +x
# The deterministic simulation (the snowmint-sim crate, sim/: leases, the state file, range sequences, under faults: re-sent,
# duplicated and delayed writes too; the sequencer re-created with another epoch or layout; the
# embedded store's directory deleted or replaced under running holders, and its history lost (moved,
# restored from a backup, a symbolic link re-pointed, the host registry not shared); leases and ranges again over
# the real etcd client on a simulated network and cluster, and over the real PostgreSQL store through
# its statement seam to a simulated database; range processes opened with the global store partitioned
# away; instances of the ID service and clients under their leases; fleets of hosts taking node IDs from
# the ip node source; the processes of hosts sharing one lease per host through a state file, started at
# once (real time, threads: a few seconds); the bindings' per-object ID windows; every renewal checked
# against its claim's expiry) and its proof: each planted defect must be
# caught within the seed bound (a table prints the seeds each took), or the stage fails. `-- --long`
# is the README's 10^9-ID run (release).
# The in-process concurrency under shuttle's randomized schedulers (random and PCT; coord/tests/shuttle.rs):
# keeper rounds, minting threads, batches past the reservation, release, a take-over, detach/attach, a range
# sequence's hot path, refill and close; then each of its planted defects must be caught within 2,000
# schedules (it prints the schedules each took and what the model saw).
# Its own process group, so that any exit of this script stops it (with the servers).
setsid bash -c 'set -ex
  cargo test -p snowmint-sim --test simulation
  cargo test -p snowmint-coord --features shuttle,planted-defects --test shuttle -- --test-threads=1 --show-output' \
  > "$work/cpu-lane.log" 2>&1 &
cpu_lane=$!
# The embedded store whose directory's history is lost (SPEC §3.2): a symbolic link re-pointed, two
# /dev/shm (containers, by unshare: root), the registry deleted, removed or moved after an exit, SIGSTOP
# then SIGKILL, a backup restored; real processes, the sonyflake layout, no ID twice. STORE_NOT_FOUND, and
# mint's wait for the tick of its last ID. No server: it runs beside the server tests (its processes
# mostly wait on the clock; about a minute), in a lane of its own.
setsid bash -c 'set -ex; cargo test -p snowmint-cli --test history' > "$work/history-lane.log" 2>&1 &
history_lane=$!
SERVERS_PREVIOUS_EXIT="kill -- -$cpu_lane -$history_lane 2>/dev/null || true; $SERVERS_PREVIOUS_EXIT"
set -x
SNOWMINT_TEST_STORES="$STORES" cargo test -p snowmint-coord
SNOWMINT_TEST_STORES="$STORES" cargo test -p snowmint-cli --test leases
SNOWMINT_TEST_STORES="$STORES" cargo test -p snowmint-cli --test hints  # the hints, pasted, on every store
# A process of a host SIGKILLed mid-claim (its claim held inside PostgreSQL by a table lock): the host's
# next process waits for the claim's TTL, not NODE_IDS_EXHAUSTED.
cargo test -p snowmint-cli --test orphan_claim
# Range sequences from the CLI (two datacenters, every store; coord/tests/range_servers.rs covers the
# server outages with real processes).
SNOWMINT_TEST_STORES="$STORES" cargo test -p snowmint-cli --test range
# The README's embedded example, as written.
awk '/<!-- coord-example/{f=1;next} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' README.md > "$work/example.sh"
test -s "$work/example.sh"
TMPDIR="$work" PATH="$ROOT/target/debug:$PATH" bash -euo pipefail "$work/example.sh"
# The README's one-lease-per-host CLI recipe, as written (its state file in this run's directory): three
# runs at once on a sequencer of ONE node ID share it (without the state file, runs that overlap would
# find it held: NODE_IDS_EXHAUSTED); no ID twice, one node ID.
awk '/^```sh title=cli-host-lease/{f=1;next} f&&/^```/{exit} f' README.md \
  | sed "s|/dev/shm/orders.lease|$work/orders.lease|" > "$work/host-lease.sh"
test -s "$work/host-lease.sh"
target/debug/snowmint sequencer create host --store "file://$work/host-store" --nodes 1
pids=()
for i in 1 2 3; do
  SNOWMINT_NODE_SOURCE="file://$work/host-store?sequencer=host" PATH="$ROOT/target/debug:$PATH" \
    bash -euo pipefail "$work/host-lease.sh" > "$work/host-lease-$i.out" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
test "$(cat "$work"/host-lease-*.out | wc -l)" -eq 9
test -z "$(cat "$work"/host-lease-*.out | sort | uniq -d)"
# The README's etcd and PostgreSQL examples, as written, against this run's servers.
for kind in etcd postgres; do
  awk -v k="<!-- coord-server-example: $kind " 'index($0,k)==1{f=1;next} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' \
    README.md > "$work/example-$kind.sh"
  test -s "$work/example-$kind.sh"
  case $kind in etcd) url="$SNOWMINT_TEST_ETCD_URL" ;; postgres) url="$SNOWMINT_TEST_POSTGRES_URL" ;; esac
  STORE="$url" PATH="$ROOT/target/debug:$PATH" bash -euo pipefail "$work/example-$kind.sh"
done
# The README's two-datacenter range example, as written: the global row on this run's etcd, datacenter eu
# on its PostgreSQL, us on the embedded store; the values it prints are checked.
awk '/<!-- range-example/{f=1;next} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' README.md > "$work/example-range.sh"
test -s "$work/example-range.sh"
mkdir -p "$work/range-us"   # an embedded store exists once created (a missing one is STORE_NOT_FOUND)
GLOBAL="${SNOWMINT_TEST_ETCD_URL}-range-readme" LOCAL_EU="$SNOWMINT_TEST_POSTGRES_URL" LOCAL_US="file://$work/range-us" \
  PATH="$ROOT/target/debug:$PATH" bash -euo pipefail "$work/example-range.sh" > "$work/example-range.out"
cat "$work/example-range.out"
test "$(head -7 "$work/example-range.out" | tr '\n' ' ')" = "1 2 3 1000001 1000002 4 5 "
grep -q 'last value given to a process  5' "$work/example-range.out"
grep -q 'reserved       \[6, 1000001)' "$work/example-range.out"
set +x
history_rc=0; wait "$history_lane" || history_rc=$?
echo "==== the lost-history lane (ran beside the server tests; exit $history_rc)"
cat "$work/history-lane.log"
# The simulation and shuttle lane's outcome, and its output.
cpu_rc=0; wait "$cpu_lane" || cpu_rc=$?
echo "==== the simulation and shuttle lane (ran beside the server tests; exit $cpu_rc)"
cat "$work/cpu-lane.log"
[ "$cpu_rc" -eq 0 ] && [ "$history_rc" -eq 0 ]
