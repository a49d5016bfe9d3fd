#!/usr/bin/env bash
# The PostgreSQL extension beside the ID schemes people use inside PostgreSQL, with pgbench, in one run
# on a throw-away server (`make -C pg bench`; `make bench` runs it too):
#   INSERT … DEFAULT at 1 and 8 clients into a table whose key is snowmint.next_id(), bigserial,
#   gen_random_uuid() (a uuid key) or a PL/pgSQL Instagram-style function (nextval % 1024 and the clock);
#   one SELECT of 1,000,000 calls: snowmint.next_id() vs nextval() (and the other two).
# Prints a Markdown table with the ratios (pg/README.md shows one). PG_BENCH_SECONDS (default 3): the
# length of each pgbench run; PG_BENCH_ROUNDS (default 5): the INSERT runs take turns (each scheme once,
# then again), and the median of the rounds is kept (the machine's other jobs move single runs by ±20 %).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
# shellcheck source=../scripts/lib.sh
source "$ROOT/scripts/lib.sh"
need_cargo
need_pg_dev
# shellcheck source=../scripts/servers.sh
source "$ROOT/scripts/servers.sh"
SECS="${PG_BENCH_SECONDS:-3}"
ROUNDS="${PG_BENCH_ROUNDS:-5}"
W="$(mktemp -d "${TMPDIR:-/tmp}/snowmint-pg-bench.XXXXXX")"
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT

make -s -C "$HERE" install >"$W/install.log" 2>&1 || { cat "$W/install.log"; exit 1; }
pg_start >/dev/null
PGDATA_DIR="$SERVERS_DIR/pg/data"
printf '%s\n' "shared_preload_libraries = 'snowmint'" "snowmint.node_id = 5" "synchronous_commit = off" \
  >>"$PGDATA_DIR/postgresql.conf"
runuser -u postgres -- "$SNOWMINT_PG_BIN/pg_ctl" -D "$PGDATA_DIR" -l "$SERVERS_DIR/pg/server.log" -w -t 30 restart >/dev/null
export PGHOST=127.0.0.1 PGPORT="$(cat "$SERVERS_DIR/pg-port")" PGUSER=postgres PGDATABASE=postgres
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
q <<'EOF'
CREATE EXTENSION snowmint;
CREATE SEQUENCE insta_seq;
-- Instagram's published function (2012): 41 bits of milliseconds, 13 of shard, 10 of nextval % 1024.
CREATE FUNCTION insta_next_id(OUT result bigint) AS $$
DECLARE
  our_epoch bigint := 1314220021721;
  seq_id bigint;
  now_millis bigint;
  shard_id int := 5;
BEGIN
  SELECT nextval('insta_seq') % 1024 INTO seq_id;
  SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
  result := (now_millis - our_epoch) << 23;
  result := result | (shard_id << 10);
  result := result | (seq_id);
END;
$$ LANGUAGE plpgsql;
CREATE TABLE t_snowmint (id bigint PRIMARY KEY DEFAULT snowmint.next_id(), v int);
CREATE TABLE t_bigserial (id bigserial PRIMARY KEY, v int);
CREATE TABLE t_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
CREATE TABLE t_plpgsql (id bigint PRIMARY KEY DEFAULT insta_next_id(), v int);
CREATE SEQUENCE plain_seq;
EOF
schemes=(snowmint bigserial uuid plpgsql)
declare -A name=([snowmint]='snowmint.next_id()' [bigserial]='bigserial' [uuid]='gen_random_uuid()' [plpgsql]='PL/pgSQL (Instagram)')
declare -A call=([snowmint]='snowmint.next_id()' [bigserial]="nextval('plain_seq')" [uuid]='gen_random_uuid()' [plpgsql]='insta_next_id()')
declare -A runs tps
# tps_of FILE CLIENTS: pgbench's transactions per second (without the connection time).
run_insert() {
  local s="$1" c="$2" out
  echo "INSERT INTO t_$s (v) VALUES (1);" >"$W/$s.sql"
  out="$(pgbench -n -M prepared -c "$c" -j "$c" -T "$SECS" -f "$W/$s.sql" 2>&1)" || { echo "$out"; exit 1; }
  sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out" | cut -d. -f1
}
for s in "${schemes[@]}"; do   # warm-up, not counted (the first runs on a new server are slower)
  echo "INSERT INTO t_$s (v) VALUES (1);" >"$W/$s.sql"
  pgbench -n -M prepared -c 8 -j 8 -T 1 -f "$W/$s.sql" >/dev/null 2>&1
done
for round in $(seq "$ROUNDS"); do
  for c in 1 8; do
    for s in "${schemes[@]}"; do
      t="$(run_insert "$s" "$c")"
      runs[$s,$c]+="$t "
      echo "round $round: INSERT … DEFAULT, $c client(s), ${name[$s]}: $t rows/s" >&2
    done
  done
done
for k in "${!runs[@]}"; do
  tps[$k]="$(tr ' ' '\n' <<<"${runs[$k]}" | grep . | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')"
done
declare -A ms
for s in "${schemes[@]}"; do
  echo "SELECT count(${call[$s]}) FROM generate_series(1, 1000000);" >"$W/call-$s.sql"
  out="$(pgbench -n -t 3 -f "$W/call-$s.sql" 2>&1)" || { echo "$out"; exit 1; }
  ms[$s]="$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' <<<"$out" | cut -d. -f1)"
  echo "1,000,000 calls of ${call[$s]} in one SELECT: ${ms[$s]} ms" >&2
done
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
# The machine's costs beside the figures (a clock read and a compare-and-swap differ between machines of
# one kind by 5×): the best of 5 runs of 10^6 each, in C.
cat >"$W/costs.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) {
    enum { N = 1000000 };
    double clock_best = 1e9, cas_best = 1e9;
    uint64_t word = 0;
    for (int r = 0; r < 5; r++) {
        struct timespec ts; double t0 = now_ns();
        for (int i = 0; i < N; i++) clock_gettime(CLOCK_REALTIME, &ts);
        double c = (now_ns() - t0) / N; if (c < clock_best) clock_best = c;
        word = 0; t0 = now_ns();
        for (uint64_t i = 0; i < N; i++) { uint64_t e = i; __atomic_compare_exchange_n(&word, &e, i + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
        c = (now_ns() - t0) / N; if (c < cas_best) cas_best = c;
    }
    printf("this machine: clock_gettime(CLOCK_REALTIME) %.1f ns, compare-and-swap %.1f ns (word %llu)\n", clock_best, cas_best, (unsigned long long) word);
    return 0;
}
EOF
costs="$(cc -O2 -o "$W/costs" "$W/costs.c" && "$W/costs")" || costs="this machine: the clock and CAS costs could not be measured (no C compiler)"
echo
echo "PostgreSQL $("$SNOWMINT_PG_BIN/postgres" --version | awk '{print $3}'), $(nproc) cores, pgbench -M prepared, ${SECS} s per run (median of $ROUNDS), synchronous_commit = off"
echo "$costs"
echo
echo "| workload | snowmint.next_id() | bigserial | gen_random_uuid() | PL/pgSQL (Instagram) | snowmint ÷ bigserial | snowmint ÷ PL/pgSQL |"
echo "|---|---|---|---|---|---|---|"
for c in 1 8; do
  echo "| INSERT … DEFAULT, $c client$([ "$c" -gt 1 ] && echo s), rows/s | ${tps[snowmint,$c]} | ${tps[bigserial,$c]} | ${tps[uuid,$c]} | ${tps[plpgsql,$c]} | $(ratio "${tps[snowmint,$c]}" "${tps[bigserial,$c]}")× | $(ratio "${tps[snowmint,$c]}" "${tps[plpgsql,$c]}")× |"
done
echo "| one SELECT of 1,000,000 calls, ms (bigserial: nextval) | ${ms[snowmint]} | ${ms[bigserial]} | ${ms[uuid]} | ${ms[plpgsql]} | $(ratio "${ms[bigserial]}" "${ms[snowmint]}")× faster | $(ratio "${ms[plpgsql]}" "${ms[snowmint]}")× faster |"
