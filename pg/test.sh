#!/usr/bin/env bash
# The PostgreSQL extension on a real server (`make test-pg`; the `pg` stage of `make test`, beside the
# others): builds and installs it as pg/README.md says (`make -C pg install` into the server pg_config
# names: run as root, as scripts/setup.sh installs packages), starts a throw-away PostgreSQL 15
# (scripts/servers.sh: a fresh data directory on a free 127.0.0.1 port, stopped on every exit path), then
#   1. CREATE EXTENSION without the preload: refused, saying exactly what to add;
#   2. the README's set-up block, as written (as the server's owner, PGDATA the fresh data directory);
#   3. the conformance vectors through the extension's SQL functions (pg/conformance.py; recorded as the
#      runtime `postgres` in $SNOWMINT_CONFORMANCE_DIR when set);
#   4. 64 backends minting at once (next_id and next_ids): 0 duplicates, each backend's IDs increasing;
#   4a. the state file flushed (snowmint.flushed(), strace: msync) within snowmint.flush_interval + 1 s;
#   5. a backend SIGKILLed while it streams IDs (the server resets shared memory): no ID repeats after;
#   6. an immediate stop while a backend mints, then a start with the clock 5 s back: no ID repeats
#      (the state file); the same after a crash (every server process SIGKILLed), the clock 8 s back; and the control: the same restart on a fresh state file repeats IDs (so the
#      check can see a repeat);
#   7. a leased node ID (snowmint.store: the server's own database's sequencer tables, through the
#      coord PostgreSQL store): application processes leasing from that sequencer (pg/tests/lease_holder.c,
#      over the C ABI; the CLI, Python and Node where built) while the database mints get other node IDs, no ID twice across all of them; the
#      lease lost under a backend: its next mint fails with LEASE_LOST, later ones mint under the next lease;
#   7a. 64 backends minting under the leased node ID, the lease lost under them: each fails with
#      LEASE_LOST only, then mints again under the next lease (its IDs above the lost one's),
#      0 duplicates, each in order; their threads, store connections (none held once joined) and
#      first-mint (join) time printed;
#   8. logical time past max_ahead: the wait policy's wait ends at statement_timeout, policy fail gives
#      TOO_FAR_AHEAD (SM005); 9. the server restarted without the preload: next_id says what to add.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
# shellcheck source=../scripts/lib.sh
source "$ROOT/scripts/lib.sh"
need_cargo
need_pg_dev
# shellcheck source=../scripts/servers.sh
source "$ROOT/scripts/servers.sh"
cd "$ROOT"
T0=$(date +%s)
W="$(mktemp -d "${TMPDIR:-/tmp}/snowmint-pg.XXXXXX")"
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT
fail() { echo "pg/test.sh: FAIL: $*" >&2; exit 1; }
# The README's shell block after the marker <!-- NAME -->.
readme_block() { awk -v m="<!-- $1 -->" '$0 == m {f=1; next} f && /^```sh/ {g=1; next} g && /^```/ {exit} g' "$HERE/README.md"; }

echo "== make -C pg install (pg/README.md, as written)"
readme_block pg-install >"$W/install.sh"
[ -s "$W/install.sh" ] || fail "no install block in pg/README.md"
bash -euo pipefail "$W/install.sh" >"$W/install.log" 2>&1 || { cat "$W/install.log"; fail "make -C pg install"; }
[ -f "$(pg_config --pkglibdir)/snowmint.so" ] || fail "snowmint.so not installed in $(pg_config --pkglibdir)"

pg_start
PORT="$(cat "$SERVERS_DIR/pg-port")"
PGDATA_DIR="$SERVERS_DIR/pg/data"
export PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=postgres PGDATABASE=postgres
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

echo "== 1. CREATE EXTENSION without shared_preload_libraries"
if out="$(q -c 'CREATE EXTENSION snowmint' 2>&1)"; then fail "CREATE EXTENSION succeeded without the preload"; fi
echo "$out"
grep -q "add shared_preload_libraries = 'snowmint' to postgresql.conf" <<<"$out" || fail "the refusal does not say what to add"

echo "== 2. the README's set-up, as written (as the server's owner)"
readme_block pg-setup >"$W/setup.sh"
[ -s "$W/setup.sh" ] || fail "no set-up block in pg/README.md"
chmod 644 "$W/setup.sh"
runuser -u postgres -- env PGDATA="$PGDATA_DIR" PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=postgres \
  PATH="$SNOWMINT_PG_BIN:$PATH" bash -euo pipefail "$W/setup.sh" >"$W/setup.log" 2>&1 \
  || { cat "$W/setup.log"; fail "the README's set-up block"; }
grep -E '^ *[0-9]{15,} \|' "$W/setup.log" || { cat "$W/setup.log"; fail "the README's INSERT returned no ID"; }
[ "$(q -c 'SELECT snowmint.node_id()')" = 5 ] || fail "node ID is not 5"
[ -n "$(PGPASSWORD="$SNOWMINT_PG_PASSWORD" q -U snowmint -c 'SELECT snowmint.next_id()')" ] \
  || fail "a role other than the superuser cannot mint"
if PGPASSWORD="$SNOWMINT_PG_PASSWORD" q -U snowmint -c "SELECT snowmint.test_state()" >/dev/null 2>&1; then
  fail "a role other than the superuser may call the test functions"
fi
nulls="$(q -c "SELECT count(*) FROM (VALUES (snowmint.decode(NULL)::text), (snowmint.compose(NULL, 1, 1)::text),
  (snowmint.encode(NULL)), (snowmint.opaque_encode(1, NULL)::text), (snowmint.min_id_at(NULL)::text)) v(x) WHERE x IS NULL")"
[ "$nulls" = 5 ] || fail "a NULL argument did not give NULL ($nulls of 5)"
[ "$(q -c "SELECT (snowmint.decode(snowmint.compose(5, 7, 9))).node || '/' || (snowmint.layout_info()->>'node_bits')")" = 7/10 ] \
  || fail "decode and layout_info with the server's layout"

echo "== 3. conformance vectors (runtime postgres)"
python3 "$HERE/conformance.py" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres

echo "== 4. 64 backends minting at once"
q -c 'CREATE TABLE mint64 (backend int, seq int, id bigint)'
N=20000
start=$(( $(date +%s) + 3 ))
pids=()
for b in $(seq 1 64); do
  if [ "$b" -le 48 ]; then
    ins="INSERT INTO mint64 SELECT $b, g, snowmint.next_id() FROM generate_series(1, $N) g"
  else  # batches of 500 IDs (500 + 0 * k: one call per k, not one call rescanned), each in its order
    ins="INSERT INTO mint64 SELECT $b, (k - 1) * 500 + i, id FROM generate_series(1, $((N / 500))) k,
         LATERAL snowmint.next_ids(500 + 0 * k) WITH ORDINALITY AS t(id, i)"
  fi
  q -c "SELECT pg_sleep(greatest(0, $start - extract(epoch FROM clock_timestamp())))" -c "$ins" >/dev/null &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a minting backend failed"; done
read -r total distinct <<<"$(q -F ' ' -c 'SELECT count(*), count(DISTINCT id) FROM mint64')"
backwards="$(q -c 'SELECT count(*) FROM (SELECT id <= lag(id) OVER (PARTITION BY backend ORDER BY seq) AS b FROM mint64) x WHERE b')"
overlapping="$(q -c 'WITH r AS (SELECT backend, min(id) lo, max(id) hi FROM mint64 GROUP BY backend)
  SELECT count(*) FROM r a WHERE EXISTS (SELECT 1 FROM r o WHERE o.backend <> a.backend AND o.lo <= a.hi AND a.lo <= o.hi)')"
echo "64 backends: $total IDs, $((total - distinct)) duplicates, $backwards out of order within a backend; $overlapping of 64 backends' ID ranges overlap another's (minted at the same time)"
[ "$total" -eq $((64 * N)) ] && [ "$distinct" -eq "$total" ] && [ "$backwards" -eq 0 ] || fail "64 backends"
[ "$overlapping" -ge 32 ] || fail "the backends did not mint at the same time ($overlapping overlapping)"
q -c 'DROP TABLE mint64'

echo "== 4a. the state file written to the storage device every snowmint.flush_interval (1 s here, the default)"
# The background worker (the state flusher) flushes the file (msync MS_SYNC) every interval and records
# the state word it read before (snowmint.flushed()): after a backend mints, the durable mark reaches
# that backend's state word within the interval (+1 s for this loaded machine).
read -r f0 s0 t0 <<<"$(q -F ' ' -c 'SELECT count(*) FROM snowmint.next_ids(10000)' \
  -c 'SELECT (snowmint.flushed()).flushes, (snowmint.stats()).state, (extract(epoch FROM clock_timestamp()) * 1000)::bigint' | tail -1)"
reached=""
for _ in $(seq 40); do
  read -r fs fn <<<"$(q -F ' ' -c 'SELECT coalesce(state, 0), flushes FROM snowmint.flushed()')"
  if [ "$fs" -ge "$s0" ]; then reached=$(( $(date +%s%3N) - t0 )); break; fi
  sleep 0.1
done
echo "flush: a backend's state word $s0 durable after ${reached:-(not within 4 s)} ms (flushes ${f0} -> ${fn})"
[ -n "$reached" ] && [ "$reached" -le 2000 ] || fail "the state file was not flushed within snowmint.flush_interval + 1 s"
fpid="$(pgrep -f '^postgres: snowmint state flusher' | head -1)" || true
if [ -n "$fpid" ] && command -v strace >/dev/null; then  # the flush itself: msync(MS_SYNC) on the file
  msyncs=$(timeout 2.5 strace -qq -e trace=msync -p "$fpid" 2>&1 | grep -c 'MS_SYNC') || true
  echo "strace: the state flusher (pid $fpid) called msync(MS_SYNC) $msyncs times in 2.5 s"
  [ "$msyncs" -ge 1 ] || fail "the state flusher did not call msync in 2.5 s"
fi

# stream FILE APPNAME COUNT: a backend streams COUNT IDs to FILE (100 IDs, then a 1 ms sleep), in the
# background; its psql's PID in STREAM_PID. stream_end: waits (10 s at most) until that psql has exited.
stream() {
  # generate_series in the select list streams (in FROM it would be materialized before the first row).
  PGAPPNAME="$2" psql -X -q -At -c "COPY (SELECT snowmint.next_id() FROM (SELECT generate_series(1, $3) g) s
    WHERE g % 100 <> 0 OR pg_sleep(0.001) IS NOT NULL) TO STDOUT" >"$1" 2>"$1.err" &
  STREAM_PID=$!
}
stream_end() {
  servers_wait 10 bash -c "! kill -0 $STREAM_PID" || kill -KILL "$STREAM_PID" 2>/dev/null
  wait "$STREAM_PID" 2>/dev/null || true
}
# complete_lines FILE: its complete lines (a stream cut by a kill may end mid-line).
complete_lines() { if [ -n "$(tail -c1 "$1")" ]; then sed '$d' "$1"; else cat "$1"; fi; }
# check_after NAME BEFORE AFTER: no ID twice across both, every ID after above every ID before.
check_after() {
  local before after dups max_before min_after
  complete_lines "$2" >"$W/b.ids"; complete_lines "$3" >"$W/a.ids"
  before=$(wc -l <"$W/b.ids"); after=$(wc -l <"$W/a.ids")
  dups=$(sort "$W/b.ids" "$W/a.ids" | uniq -d | wc -l)
  max_before=$(sort -n "$W/b.ids" | tail -1); min_after=$(sort -n "$W/a.ids" | sed -n 1p)
  echo "$1: $before IDs before, $after after, $dups duplicates; max before $max_before, min after $min_after"
  [ "$before" -gt 1000 ] && [ "$after" -gt 1000 ] || fail "$1: too few IDs"
  [ "$dups" -eq 0 ] && [ "$min_after" -gt "$max_before" ] || fail "$1: an ID repeated"
}
wait_ids() {  # wait_ids FILE N: until FILE holds N lines (10 s at most)
  for _ in $(seq 100); do [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0; sleep 0.1; done
  fail "no IDs streamed into $1"
}

echo "== 5. a backend SIGKILLed while it mints (the server resets shared memory)"
stream "$W/kill-before" smkill 100000000
wait_ids "$W/kill-before" 20000
bpid="$(q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'smkill'")"
[ -n "$bpid" ] || fail "the streaming backend is not in pg_stat_activity"
kill -KILL "$bpid"
stream_end
servers_wait 30 q -c 'SELECT 1' || fail "the server did not come back after the backend's SIGKILL"
grep -q 'terminated by signal 9' "$SERVERS_DIR/pg/server.log" "$W/setup.log" 2>/dev/null \
  && echo "server log: the postmaster reset shared memory after the SIGKILL"
q -c "COPY (SELECT snowmint.next_id() FROM generate_series(1, 100000)) TO STDOUT" >"$W/kill-after"
check_after "SIGKILL" "$W/kill-before" "$W/kill-after"

pg_ctl_() { runuser -u postgres -- "$SNOWMINT_PG_BIN/pg_ctl" -D "$PGDATA_DIR" "$@"; }
# restart_back CONF_LINES: an immediate stop while a backend has streamed IDs for 6 s, then a start
# with CONF_LINES added (the clock set back); the IDs of 2 s after the start go to $W/after.
# A line "snowmint.test_clock_offset_ms = START": the clock set back to 8 s before the first ID of the
# 6 s, and the IDs after the start streamed until their time passes 1 s after that first ID (15 s at
# most), so that they fall among the IDs before however long the start takes (up to 13 s). Otherwise the
# IDs of the 2 s after the start.
# STOP (first argument): `immediate` (pg_ctl stop -m immediate) or `crash` (the postmaster and every
# backend SIGKILLed: scripts/servers.sh's pg_kill).
restart_back() {
  local t_first last how="$1"
  shift
  rm -f "$W/before" "$W/after"
  stream "$W/before" smrestart 100000000
  wait_ids "$W/before" 1000
  t_first=$(date +%s%3N)
  sleep 6
  if [ "$how" = crash ]; then pg_kill; else pg_ctl_ -m immediate -w -t 30 stop >/dev/null; fi
  stream_end
  printf '%s\n' "$@" | sed "s/= START\$/= $(( t_first - 8000 - $(date +%s%3N) ))/" >>"$PGDATA_DIR/postgresql.conf"
  pg_ctl_ -l "$SERVERS_DIR/pg/server.log" -w -t 30 start >/dev/null || { tail -20 "$SERVERS_DIR/pg/server.log"; fail "start"; }
  touch "$SERVERS_DIR/pg-running"   # scripts/servers.sh stops it on exit
  stream "$W/after" smafter 100000000
  if printf '%s\n' "$@" | grep -q '= START$'; then
    for _ in $(seq 75); do
      sleep 0.2
      last="$(complete_lines "$W/after" | tail -1)"
      # twitter: Unix ms = (ID >> 22) + its epoch
      [ -n "$last" ] && [ $(( (last >> 22) + 1288834974657 )) -ge $(( t_first + 1000 )) ] && break
    done
  else
    sleep 2
  fi
  q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'smafter'" >/dev/null
  stream_end
}

echo "== 6. an immediate stop while minting, then a start with the clock 5 s back"
restart_back immediate "snowmint.test_clock_offset_ms = -5000"
check_after "immediate restart, clock 5 s back" "$W/before" "$W/after"
echo "== 6a. a crash (the postmaster and every backend SIGKILLed) while minting, then a start with the clock 8 s back"
restart_back crash "snowmint.test_clock_offset_ms = -8000"
check_after "crash, clock 8 s back" "$W/before" "$W/after"
# The last mint on snowmint.state (node ID 5) until step 8, which sets the clock back from it.
fixed_last=$(date +%s%3N)

echo "== 6b. control: the same without the high-water mark (a fresh state file after the restart) must repeat IDs"
printf '%s\n' "snowmint.test_clock_offset_ms = 0" "snowmint.state_file = 'control-a.state'" >>"$PGDATA_DIR/postgresql.conf"
pg_ctl_ -l "$SERVERS_DIR/pg/server.log" -m fast -w -t 30 restart >/dev/null || fail "restart"
restart_back immediate "snowmint.test_clock_offset_ms = START" "snowmint.state_file = 'control-b.state'"
dups=$(sort <(complete_lines "$W/before") <(complete_lines "$W/after") | uniq -d | wc -l)
span() { q -c "SELECT min(t)::time || '..' || max(t)::time FROM (SELECT (snowmint.decode(id::bigint)).time t FROM
  unnest(ARRAY[$(complete_lines "$1" | sed -n '1p;$p' | paste -sd,)]) id) x"; }
echo "control: IDs before the restart minted at $(span "$W/before"), after it at $(span "$W/after") (the clock set back)"
echo "control without the state file: $dups IDs after the restart repeat IDs of the 6 s before"
[ "$dups" -gt 0 ] || fail "the control repeated nothing: the restart checks could not see a repeat"

echo "== 7. a leased node ID (snowmint.store: the sequencer tables of the server's own database)"
cc -O2 -I"$ROOT/bindings-c/include" "$HERE/tests/lease_holder.c" "${CARGO_TARGET_DIR:-$ROOT/target}/release/libsnowmint.a" \
  -lutil -lrt -lpthread -lm -ldl -o "$W/lease_holder"
# The store's user: the role `snowmint` (a password; scripts/servers.sh made it), given CREATE on the
# database and on the extension's schema, where the store makes its tables the first time (pg/README.md).
q -c 'GRANT CREATE ON DATABASE postgres TO snowmint' -c 'GRANT CREATE ON SCHEMA snowmint TO snowmint'
STORE="postgres://snowmint:$SNOWMINT_PG_PASSWORD@127.0.0.1:$PORT/postgres"
printf '%s\n' "snowmint.test_clock_offset_ms = 0" "snowmint.node_id = -1" "snowmint.store = '$STORE?ttl=2s'" \
  "snowmint.state_file = 'lease.state'" >>"$PGDATA_DIR/postgresql.conf"
pg_ctl_ -l "$SERVERS_DIR/pg/server.log" -m fast -w -t 30 restart >/dev/null || fail "restart with snowmint.store"
servers_wait 30 q -c 'SELECT snowmint.node_id()' || { q -c 'SELECT snowmint.node_id()' || true
  grep snowmint "$SERVERS_DIR/pg/server.log" | tail -5; fail "no leased node ID within 30 s"; }
dbnode="$(q -c 'SELECT snowmint.node_id()')"
held="$(q -c "SELECT count(*) FROM snowmint.nodes WHERE sequencer = 'default' AND node_id = $dbnode AND expires_at > now()")"
echo "the database holds node ID $dbnode (its row in snowmint.nodes: $held)"
[ "$held" = 1 ] || fail "the database's node ID is not held in the sequencer's table"
# Three application processes lease from the same sequencer while a backend mints: other node IDs,
# no ID twice across all of them.
stream "$W/db-ids" smlease 100000000
wait_ids "$W/db-ids" 1000
hpids=()
for h in 1 2 3; do
  (sleep 3 | "$W/lease_holder" "$STORE" 200000 >"$W/holder-$h") &
  hpids+=($!)
done
# The other runtimes too, where `make demo` built them (before `make test`): the CLI (Rust), the Python
# wheel in its demo venv, the Node addon. Each writes "node N", then its IDs.
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
CLI="${SNOWMINT_PG_TEST_CLI:-$TARGET/release/snowmint}"
PY="${SNOWMINT_PG_TEST_PYTHON:-$TARGET/python/demo-venv/bin/python}"
NODE_MODULE="${SNOWMINT_PG_TEST_NODE_MODULE:-$ROOT/bindings-node}"
others=()
if [ -x "$CLI" ]; then
  ("$CLI" mint -n 200000 --node "$STORE" >"$W/cli.ids" && { echo "node $(q -c "SELECT node FROM snowmint.decode($(head -1 "$W/cli.ids"))")"
   cat "$W/cli.ids"; } >"$W/holder-rust-cli") &
  hpids+=($!); others+=(rust-cli)
fi
if [ -x "$PY" ] && "$PY" -c 'import snowmint' 2>/dev/null; then
  "$PY" -c 'import sys, snowmint
g = snowmint.Generator(node_id=sys.argv[1])
print("node", g.node_id)
print("\n".join(map(str, g.next_ids(200000))))' "$STORE" >"$W/holder-python" &
  hpids+=($!); others+=(python)
fi
if compgen -G "$NODE_MODULE/*.node" >/dev/null && command -v node >/dev/null; then
  node -e '(async () => {
  const { Generator } = require(process.argv[1]);
  const g = await Generator.open({ nodeId: process.argv[2] });
  console.log("node " + g.nodeId);
  console.log(Array.from(g.nextIds(200000), String).join("\n"));
  g.close();
})().catch((e) => { console.log("error " + e.code + ": " + e.message); process.exit(1); });' "$NODE_MODULE" "$STORE" >"$W/holder-node" &
  hpids+=($!); others+=(node)
fi
[ ${#others[@]} -eq 3 ] || echo "(not built, so not leasing beside the database: CLI $CLI, Python $PY, Node $NODE_MODULE; ${others[*]:-none} built)"
for p in "${hpids[@]}"; do wait "$p" || { tail -n 3 "$W"/holder-*; fail "an application process could not lease"; }; done
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'smlease'" >/dev/null
stream_end
nodes=""
for f in "$W"/holder-*; do nodes+="$(head -n1 "$f" | awk '{print $2}') ($(basename "$f" | sed 's/^holder-//; s/^[123]$/C/')) "; done
echo "application processes leased node IDs: $nodes(the database: $dbnode)"
for f in "$W"/holder-*; do [ "$(head -n1 "$f" | awk '{print $2}')" != "$dbnode" ] || fail "$f got the database's node ID $dbnode"; done
{ complete_lines "$W/db-ids"; tail -qn +2 "$W"/holder-*; } >"$W/all-ids"
total=$(wc -l <"$W/all-ids"); dups=$(sort "$W/all-ids" | uniq -d | wc -l)
echo "the database and $(ls "$W"/holder-* | wc -l) application processes on one sequencer: $total IDs, $dups duplicates"
[ "$dups" -eq 0 ] && [ "$total" -gt 600000 ] || fail "IDs across the database and the application processes"
# The lease lost under a backend (its claim taken: the row's fencing token moved on): its next mint
# fails with LEASE_LOST (SQLSTATE SM008), never mints under the lost node ID; later mints take the
# lease the worker claims again.
q -v ON_ERROR_STOP=0 -v VERBOSITY=verbose >"$W/lost.out" 2>&1 <<SQL || true
\set VERBOSITY verbose
SELECT 'before ' || snowmint.next_id();
\! psql -X -q -At -c "UPDATE snowmint.nodes SET token = token + 1 WHERE sequencer = 'default' AND node_id = $dbnode"
SELECT pg_sleep(4);
SELECT 'lost ' || snowmint.next_id();
SELECT pg_sleep(3);
SELECT 'again ' || snowmint.next_id() || ' node ' || snowmint.node_id();
SQL
cat "$W/lost.out"
grep -q '^before [0-9]' "$W/lost.out" || fail "no ID before the lease was lost"
grep -q 'SM008: LEASE_LOST' "$W/lost.out" && ! grep -q '^lost [0-9]' "$W/lost.out" \
  || fail "a backend minted after its lease was lost, or failed otherwise"
grep -q '^again [0-9]* node [0-9]' "$W/lost.out" || fail "the backend did not mint again under the next lease"
grep -q "snowmint: the lease of node ID $dbnode was lost" "$SERVERS_DIR/pg/server.log" \
  && echo "server log: the lease keeper saw the loss and claimed again"
! grep -q "$SNOWMINT_PG_PASSWORD" "$SERVERS_DIR/pg/server.log" "$W/lost.out" || fail "the store's password is in the server's log"

echo "== 7a. 64 backends minting in leased mode; the lease lost while they mint"
# Each backend mints an ID every 10 ms for up to 45 s (its first mint joins the lease: timed), recording
# every ID and every error; once all have joined, the lease is taken (its fencing token moved on). Each backend must
# fail with LEASE_LOST (and nothing else), then mint again under the lease the worker claims next (50
# IDs), with 0 duplicates across all, each backend's IDs increasing, and (the same node ID claimed
# again) every ID after above every ID before. Under the lost lease the backends mint on until the keeper
# sees the loss, below the ceiling of the reservation the store holds for it (a next claim of the node
# starts above it, SPEC §3.2), also past the claim's TTL: printed, not asserted. Meanwhile: what each backend costs (its threads, the store's
# connections in pg_stat_activity).
node1="$(q -c 'SELECT snowmint.node_id()')"
q -c 'CREATE TABLE lease64 (backend int, seq int, id bigint, err text, first_ms float8, at timestamptz)'
conns0="$(q -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'snowmint'")"
start=$(( $(date +%s) + 2 ))
pids=()
for b in $(seq 1 64); do
  PGAPPNAME=sm64lease q -c "SELECT pg_sleep(greatest(0, $start - extract(epoch FROM clock_timestamp())))" -c "DO \$\$
DECLARE t0 timestamptz := clock_timestamp(); i int := 0; lost bool := false; after int := 0; v bigint;
BEGIN
  v := snowmint.next_id();
  INSERT INTO lease64 VALUES ($b, 0, v, NULL, extract(epoch FROM clock_timestamp() - t0) * 1000, clock_timestamp());
  WHILE clock_timestamp() < t0 + interval '45 s' AND after < 50 LOOP
    i := i + 1;
    BEGIN
      v := snowmint.next_id();
      INSERT INTO lease64 VALUES ($b, i, v, NULL, NULL, clock_timestamp());
      IF lost THEN after := after + 1; END IF;
    EXCEPTION WHEN OTHERS THEN
      INSERT INTO lease64 VALUES ($b, i, NULL, SQLSTATE || ' ' || SQLERRM, NULL, clock_timestamp());
      lost := true;
    END;
    PERFORM pg_sleep(0.01);
  END LOOP;
END \$\$" >/dev/null &
  pids+=($!)
done
# Until the 64 have joined: each runs the lease's thread (`snowmint-lease-N`), started once its join is
# done (a thread count alone also counts a backend still logging in: its login thread). 60 s at most,
# the joins go one at a time.
sleep $(( start - $(date +%s) + 1 ))
deadline=$(( $(date +%s) + 60 ))
while :; do
  bpids="$(q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'sm64lease'")"
  joined=0
  for p in $bpids; do
    if grep -qs '^snowmint-lease' /proc/"$p"/task/*/comm; then joined=$((joined + 1)); fi
  done
  [ "$joined" -ge 64 ] && break
  [ "$(date +%s)" -lt "$deadline" ] || fail "$joined of 64 backends joined the lease within 60 s"
  sleep 0.2
done
# Then until their joins' connections are closed (each backend closes its own once joined: 0.5 s on a
# quiet machine, seconds on a loaded one; bounded, 20 s).
for _ in $(seq 100); do
  conns="$(q -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'snowmint'")"
  [ "$conns" -le $((conns0 + 4)) ] && break
  sleep 0.2
done
threads="$(for p in $bpids; do awk '/^Threads:/ {print $2}' "/proc/$p/status" 2>/dev/null; done | sort -n | uniq -c | awk '{printf "%s backends with %s threads; ", $1, $2}')"
kpid="$(pgrep -f '^postgres: snowmint lease keeper' | head -1)" || true
echo "leased mode, 64 backends joined: ${threads}the lease keeper: $(awk '/^Threads:/ {print $2}' "/proc/$kpid/status" 2>/dev/null) threads; the store's connections (pg_stat_activity, user snowmint): $conns0 before the backends joined, $conns with them"
# The backends mint from the state file under the ceiling the keeper raises: none holds a store
# connection of its own once joined (each opens one to join, then closes it).
if [ "$conns" -gt $((conns0 + 4)) ]; then
  # Whose they are: each store connection's client process (by its socket) and what the server sees of it.
  q -F ' ' -c "SELECT pid, client_port, backend_start, state, left(query, 80) FROM pg_stat_activity WHERE usename = 'snowmint'" |
    while read -r spid port rest; do
      owner="$(ss -tnpH "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)" || true
      echo "  store connection (server pid $spid, port $port): $rest; its client: pid ${owner:-?} $( { tr '\0' ' ' < "/proc/${owner:-0}/cmdline"; } 2>/dev/null | cut -c1-80)$(echo " $bpids " | tr '\n' ' ' | grep -q " ${owner:-x} " && echo ' (one of the 64 minting backends)')"
    done >&2 || true   # a diagnostic: the failure below is reported whatever it finds
  fail "the joined backends hold store connections ($conns0 before, $conns after)"
fi
bump="$(q -c "UPDATE snowmint.nodes SET token = token + 1 WHERE sequencer = 'default' AND node_id = $node1 RETURNING clock_timestamp()")"
for p in "${pids[@]}"; do wait "$p" || fail "a minting backend failed (leased)"; done
node2="$(q -c 'SELECT snowmint.node_id()')"
read -r total distinct first_med first_max <<<"$(q -F ' ' -c "SELECT count(id), count(DISTINCT id),
  round((percentile_cont(0.5) WITHIN GROUP (ORDER BY first_ms))::numeric, 1), round(max(first_ms)::numeric, 1) FROM lease64")"
backwards="$(q -c 'SELECT count(*) FROM (SELECT id <= lag(id) OVER (PARTITION BY backend ORDER BY seq) AS b FROM lease64 WHERE id IS NOT NULL) x WHERE b')"
read -r lost_backends other_errors <<<"$(q -F ' ' -c "SELECT count(DISTINCT backend) FILTER (WHERE err LIKE 'SM008 LEASE_LOST%'),
  count(*) FILTER (WHERE err IS NOT NULL AND err NOT LIKE 'SM008 LEASE_LOST%') FROM lease64")"
# Per backend: its IDs before its first error (the lost lease) and after it (the next one).
read -r late resumed after_node before_max after_min <<<"$(q -F ' ' -c "WITH e AS (SELECT backend, min(seq) s FROM lease64 WHERE err IS NOT NULL GROUP BY backend),
  b AS (SELECT l.* FROM lease64 l JOIN e USING (backend) WHERE l.seq < e.s), a AS (SELECT l.* FROM lease64 l JOIN e USING (backend) WHERE l.seq > e.s AND l.id IS NOT NULL)
  SELECT (SELECT count(*) FROM b WHERE at > '$bump'::timestamptz + interval '2.5 s'), (SELECT count(DISTINCT backend) FROM a WHERE id IS NOT NULL),
    (SELECT count(*) FROM a WHERE (snowmint.decode(id)).node <> $node2), (SELECT max(id) FROM b), (SELECT min(id) FROM a)")"
other="$(q -c "SELECT err FROM lease64 WHERE err NOT LIKE 'SM008 LEASE_LOST%' LIMIT 3")"
noticed="$(q -c "WITH e AS (SELECT backend, min(at) t FROM lease64 WHERE err IS NOT NULL GROUP BY backend),
  o AS (SELECT l.backend, max(l.at) t FROM lease64 l JOIN e USING (backend) WHERE l.at < e.t AND l.id IS NOT NULL GROUP BY l.backend)
  SELECT 'each backend'' first LEASE_LOST ' || round(extract(epoch FROM min(e.t) - '$bump')::numeric, 2) || '..' ||
    round(extract(epoch FROM max(e.t) - '$bump')::numeric, 2) || ' s after the token moved on, its last ID under the lost lease ' ||
    round(extract(epoch FROM min(o.t) - '$bump')::numeric, 2) || '..' || round(extract(epoch FROM max(o.t) - '$bump')::numeric, 2) || ' s after'
  FROM e JOIN o USING (backend)")"
echo "leased, 64 backends: $total IDs, $((total - distinct)) duplicates, $backwards out of order within a backend; first mint (the join) median ${first_med} ms, max ${first_max} ms"
echo "lease lost (node ID $node1's token moved on) while they minted: $lost_backends of 64 backends failed with LEASE_LOST, $other_errors other errors${other:+ ($other)}; $late IDs minted under the lost lease more than its TTL + 0.5 s after (below the ceiling its reservation in the store fences: a next claim of the node starts above it); $resumed of 64 minted again under node ID $node2 ($after_node under another node ID); max ID before $before_max, min after $after_min; $noticed"
[ "$total" -gt 64 ] && [ "$distinct" -eq "$total" ] && [ "$backwards" -eq 0 ] || fail "leased, 64 backends: duplicates or out of order"
[ "$lost_backends" -eq 64 ] && [ "$other_errors" -eq 0 ] || fail "not every backend failed with LEASE_LOST alone"
[ "$resumed" -eq 64 ] && [ "$after_node" -eq 0 ] || fail "not every backend minted again under the next lease"
[ "$node2" != "$node1" ] || [ "$after_min" -gt "$before_max" ] || fail "IDs after the lost lease (the same node ID) not above those before"
q -c 'DROP TABLE lease64'

# The clock 2 min before the state file's last mint (step 6a), however long steps 6b to 7a took (on a
# loaded host more than 2 min): its high-water mark at least 100 s ahead of the clock, max_ahead 15 s.
echo "== 8. logical time past max_ahead (the clock 2 min before the state file's last mint): the wait is interruptible; policy fail: TOO_FAR_AHEAD"
printf '%s\n' "snowmint.store = ''" "snowmint.node_id = 5" "snowmint.state_file = 'snowmint.state'" \
  "snowmint.test_clock_offset_ms = $(( -120000 - ($(date +%s%3N) - fixed_last) ))" >>"$PGDATA_DIR/postgresql.conf"
pg_ctl_ -l "$SERVERS_DIR/pg/server.log" -m fast -w -t 30 restart >/dev/null || fail "restart"
t=$(date +%s%3N)
out="$(q -c "SET statement_timeout = '1s'" -c 'SELECT snowmint.next_id()' 2>&1)" && fail "next_id did not wait: $out"
echo "wait policy, statement_timeout 1 s: '$out' after $(( $(date +%s%3N) - t )) ms"
grep -q 'canceling statement due to statement timeout' <<<"$out" || fail "the wait did not end with the statement timeout"
[ $(( $(date +%s%3N) - t )) -lt 5000 ] || fail "the wait was not interrupted within 5 s"
printf '%s\n' "snowmint.policy = fail" >>"$PGDATA_DIR/postgresql.conf"
pg_ctl_ -l "$SERVERS_DIR/pg/server.log" -m fast -w -t 30 restart >/dev/null || fail "restart"
out="$(q -v VERBOSITY=verbose -c '\set VERBOSITY verbose' -c 'SELECT snowmint.next_id()' 2>&1)" && fail "next_id did not fail: $out"
echo "$out" | head -2
grep -q 'SM005: TOO_FAR_AHEAD' <<<"$out" && grep -q 'DETAIL:  retry after [0-9]* ms' <<<"$out" || fail "not TOO_FAR_AHEAD (SM005) with its retry time"

echo "== 9. the extension created, then the server started without the preload: next_id says what to add"
printf '%s\n' "shared_preload_libraries = ''" >>"$PGDATA_DIR/postgresql.conf"
pg_ctl_ -l "$SERVERS_DIR/pg/server.log" -m fast -w -t 30 restart >/dev/null || fail "restart"
out="$(q -c 'SELECT snowmint.next_id()' 2>&1)" && fail "next_id minted without the preload"
echo "$out"
grep -q "add shared_preload_libraries = 'snowmint' to postgresql.conf" <<<"$out" || fail "next_id does not say what to add"

echo "pg/test.sh: passed in $(( $(date +%s) - T0 )) s"
