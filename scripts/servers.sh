# Real coordination servers for tests and benchmarks (sourced, not run): etcd (Debian `etcd-server`,
# installed if missing) and PostgreSQL 15 (on the image), each a background process on free 127.0.0.1
# ports with a throw-away data directory, stopped on every exit path.
#
#   source scripts/servers.sh
#   servers_init                 # temp dir + EXIT/INT/TERM trap (done once, by the start functions too;
#                                # an EXIT trap the caller set before still runs, after the stop)
#   etcd_start [MEMBERS]         # a cluster of MEMBERS (default 1) members; exports
#                                #   SNOWMINT_TEST_ETCD_ENDPOINTS  127.0.0.1:P1[,127.0.0.1:P2...]
#                                #   SNOWMINT_TEST_ETCD_URL        etcd://ENDPOINTS/snowmint-test
#   etcd_stop|etcd_kill|etcd_pause|etcd_resume|etcd_restart [MEMBER...]   (default: every member; 1-based)
#   pg_start                     # exports
#                                #   SNOWMINT_TEST_POSTGRES_URL          the `snowmint` role (password) on db `snowmint`
#                                #   SNOWMINT_TEST_POSTGRES_ADMIN_URL    the superuser on db `postgres`
#                                #   SNOWMINT_TEST_POSTGRES_FOREIGN_URL  `snowmint` on db `snowmint_foreign`, whose
#                                #                                       schema `snowmint` another role owns
#   pg_stop|pg_kill|pg_pause|pg_resume|pg_restart
#   tls_certs                    # a test CA (and a second, untrusted one) and certificates made with the
#                                # openssl CLI in $SERVERS_DIR/tls; exports SNOWMINT_TEST_TLS_DIR:
#                                #   ca.pem, other-ca.pem, server.{pem,key} (127.0.0.1, localhost),
#                                #   client.{pem,key} (CN root), expired.{pem,key} (a client certificate
#                                #   valid only in January 2020, signed by the CA with `openssl ca`)
#   etcd_tls_start               # one etcd member serving only HTTPS with --client-cert-auth; exports
#                                #   SNOWMINT_TEST_ETCD_TLS_URL  etcd+https://…?cacert=&cert=&key=
#   etcd_auth_start              # one etcd member with authentication on (user root, tokens living
#                                #   1 s: --auth-token-ttl 1), on HTTP and HTTPS; exports
#                                #   SNOWMINT_TEST_ETCD_AUTH_URL etcd://root:PASSWORD@…
#                                #   SNOWMINT_TEST_ETCD_AUTH_TLS_URL etcd+https://root:PASSWORD@…?cacert=
#   pg_tls_start                 # a second PostgreSQL with ssl = on and only `hostssl … scram-sha-256`
#                                #   in pg_hba.conf; exports SNOWMINT_TEST_POSTGRES_TLS_URL
#                                #   (sslmode=verify-full&sslrootcert=ca.pem)
#   tls_servers                  # all three, and SNOWMINT_TEST_TLS_FAILURES: a file of failure cases (a
#                                #   wrong CA, no or an expired client certificate, a wrong password) with
#                                #   the code and message each runtime must give
#   servers_stop                 # everything (the trap calls it)
#   binding_servers              # a binding's test stage: etcd_start and pg_start, unless the caller set
#                                # SNOWMINT_TEST_ETCD_URL (its own servers), and tls_servers unless it
#                                # set SNOWMINT_TEST_ETCD_TLS_URL; SNOWMINT_REQUIRE_SERVERS=1
#
# Every wait is bounded; a server that does not come up prints its log and fails the caller.
# Only processes started here are ever signalled, by the PIDs recorded here.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SNOWMINT_PG_BIN="${SNOWMINT_PG_BIN:-/usr/lib/postgresql/15/bin}"
SNOWMINT_PG_PASSWORD="snowmint-test"
SNOWMINT_ETCD_PASSWORD="snowmint-root-secret"   # etcd_auth_start's user root

servers_init() {
  [ -n "${SERVERS_DIR:-}" ] && return 0
  SERVERS_DIR="$(mktemp -d /tmp/snowmint-servers.XXXXXX)"
  chmod 755 "$SERVERS_DIR"
  export SERVERS_DIR
  # Keep the caller's EXIT trap (e.g. removing its own temp dir): run it after stopping the servers.
  local previous; previous="$(trap -p EXIT)"
  SERVERS_PREVIOUS_EXIT=""
  if [ -n "$previous" ]; then eval "set -- $previous"; SERVERS_PREVIOUS_EXIT="$3"; fi
  trap 'servers_stop; eval "$SERVERS_PREVIOUS_EXIT"' EXIT
  trap 'servers_stop; exit 130' INT
  trap 'servers_stop; exit 143' TERM
}

# A free TCP port on 127.0.0.1 (bound by the OS, then released; the server takes it a moment later).
servers_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits until "$@" succeeds, at most $1 seconds (tries every 0.1 s). Usage: servers_wait SECONDS CMD...
servers_wait() {
  local limit="$1"; shift
  local deadline=$(( $(date +%s%N) + limit * 1000000000 ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s%N)" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

# ---------------------------------------------------------------------------------------------- etcd
_etcd_count() { cat "$SERVERS_DIR/etcd-members" 2>/dev/null || echo 0; }

etcd_install() {
  command -v etcd >/dev/null 2>&1 || apt_install etcd-server
  command -v curl >/dev/null 2>&1 || apt_install curl   # readiness checks
}

_etcd_member_start() {
  local i="$1" dir="$SERVERS_DIR/etcd-$1"
  local cport; cport="$(cat "$dir/client-port")"
  local pport; pport="$(cat "$dir/peer-port")"
  etcd --name "m$i" --data-dir "$dir/data" \
    --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
    --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "$(cat "$SERVERS_DIR/etcd-cluster")" --initial-cluster-state new \
    --initial-cluster-token "snowmint-test-$$" --heartbeat-interval 50 --election-timeout 500 \
    --logger zap --log-outputs "$dir/etcd.log" >>"$dir/etcd.out" 2>&1 &
  echo $! >"$dir/pid"
}

_etcd_healthy() { curl -fsS --max-time 1 "http://$1/health" | grep -q '"health":"true"'; }

# Healthy, or fails at once when the member's process is gone (e.g. its port was taken meanwhile).
_etcd_ready_or_dead() {
  local ep="$1" pid="$2"
  _etcd_healthy "$ep" && return 0
  kill -0 "$pid" 2>/dev/null || { echo "servers.sh: etcd at $ep exited" >&2; return 2; }
  return 1
}

_etcd_wait_ready() {
  local i ep pid deadline rc
  for i in "$@"; do
    ep="127.0.0.1:$(cat "$SERVERS_DIR/etcd-$i/client-port")"
    pid="$(cat "$SERVERS_DIR/etcd-$i/pid")"
    deadline=$(( $(date +%s) + 30 ))
    while true; do
      rc=0; _etcd_ready_or_dead "$ep" "$pid" 2>/dev/null || rc=$?
      [ "$rc" -eq 1 ] && [ "$(date +%s)" -lt "$deadline" ] && { sleep 0.1; continue; }
      break
    done
    if [ "$rc" -ne 0 ]; then
      echo "servers.sh: etcd member $i ($ep) not healthy within 30 s, or exited; its log:" >&2
      tail -n 30 "$SERVERS_DIR/etcd-$i/etcd.log" "$SERVERS_DIR/etcd-$i/etcd.out" >&2 2>/dev/null
      return 1
    fi
  done
}

_etcd_members() { if [ $# -gt 0 ]; then echo "$@"; else seq 1 "$(_etcd_count)"; fi; }

binding_servers() {
  if [ -z "${SNOWMINT_TEST_ETCD_URL:-}" ]; then
    etcd_start
    pg_start
  fi
  [ -n "${SNOWMINT_TEST_ETCD_TLS_URL:-}" ] || tls_servers
  export SNOWMINT_REQUIRE_SERVERS=1
}

etcd_start() {
  local members="${1:-1}" i cluster="" endpoints=""
  servers_init
  etcd_install
  [ "$(_etcd_count)" -gt 0 ] && etcd_stop && rm -rf "$SERVERS_DIR"/etcd-*
  echo "$members" >"$SERVERS_DIR/etcd-members"
  for i in $(seq 1 "$members"); do
    mkdir -p "$SERVERS_DIR/etcd-$i"
    servers_free_port >"$SERVERS_DIR/etcd-$i/client-port"
    servers_free_port >"$SERVERS_DIR/etcd-$i/peer-port"
    cluster+="${cluster:+,}m$i=http://127.0.0.1:$(cat "$SERVERS_DIR/etcd-$i/peer-port")"
    endpoints+="${endpoints:+,}127.0.0.1:$(cat "$SERVERS_DIR/etcd-$i/client-port")"
  done
  echo "$cluster" >"$SERVERS_DIR/etcd-cluster"
  for i in $(seq 1 "$members"); do _etcd_member_start "$i"; done
  _etcd_wait_ready $(seq 1 "$members") || return 1
  export SNOWMINT_TEST_ETCD_ENDPOINTS="$endpoints"
  export SNOWMINT_TEST_ETCD_URL="etcd://$endpoints/snowmint-test"
  echo "servers.sh: etcd $(etcd --version | head -1 | awk '{print $3}') x$members at $endpoints (data in $SERVERS_DIR)"
}

_etcd_signal() {
  local sig="$1" i pid; shift
  for i in $(_etcd_members "$@"); do
    pid="$(cat "$SERVERS_DIR/etcd-$i/pid" 2>/dev/null)" || continue
    [ -n "$pid" ] && kill "-$sig" "$pid" 2>/dev/null
  done
  return 0
}

_etcd_reap() {
  local i pid
  for i in $(_etcd_members "$@"); do
    pid="$(cat "$SERVERS_DIR/etcd-$i/pid" 2>/dev/null)" || continue
    # Bounded: 10 s for a graceful stop, then SIGKILL.
    servers_wait 10 bash -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
    rm -f "$SERVERS_DIR/etcd-$i/pid"
  done
  return 0
}

etcd_stop()   { _etcd_signal CONT "$@"; _etcd_signal TERM "$@"; _etcd_reap "$@"; }
etcd_kill()   { _etcd_signal KILL "$@"; _etcd_reap "$@"; }
etcd_pause()  { _etcd_signal STOP "$@"; }
etcd_resume() { _etcd_signal CONT "$@"; }
# Starts stopped members again on their ports and data (a member still running is left alone).
etcd_restart() {
  local i started=()
  for i in $(_etcd_members "$@"); do
    [ -f "$SERVERS_DIR/etcd-$i/pid" ] && continue
    _etcd_member_start "$i"; started+=("$i")
  done
  [ ${#started[@]} -eq 0 ] || _etcd_wait_ready "${started[@]}"
}

# ----------------------------------------------------------------------------------------- PostgreSQL
_pg_running() { [ -n "${SERVERS_DIR:-}" ] && [ -f "$SERVERS_DIR/pg-running" ]; }
_pg_port() { cat "$SERVERS_DIR/pg-port"; }

_pg() { runuser -u postgres -- "$@"; }
_pg_psql() { _pg "$SNOWMINT_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SERVERS_DIR/pg-sock" -p "$(_pg_port)" "$@"; }

pg_start() {
  servers_init
  [ -x "$SNOWMINT_PG_BIN/initdb" ] || apt_install postgresql-15
  command -v pgrep >/dev/null 2>&1 || apt_install procps
  _pg_running && pg_stop && rm -rf "$SERVERS_DIR/pg" "$SERVERS_DIR/pg-sock"
  local port; port="$(servers_free_port)"; echo "$port" >"$SERVERS_DIR/pg-port"
  mkdir -p "$SERVERS_DIR/pg" "$SERVERS_DIR/pg-sock"
  chown postgres: "$SERVERS_DIR/pg" "$SERVERS_DIR/pg-sock"
  if ! _pg "$SNOWMINT_PG_BIN/initdb" -D "$SERVERS_DIR/pg/data" -U postgres -A trust --no-sync \
      >"$SERVERS_DIR/pg/initdb.log" 2>&1; then
    echo "servers.sh: initdb failed:" >&2; cat "$SERVERS_DIR/pg/initdb.log" >&2; return 1
  fi
  # The superuser without a password (tests use it to set up foreign schemas); every other role with one.
  cat >"$SERVERS_DIR/pg/data/pg_hba.conf" <<EOF
local all all trust
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
EOF
  cat >>"$SERVERS_DIR/pg/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$SERVERS_DIR/pg-sock'
max_connections = 300
shared_buffers = 32MB
fsync = on
logging_collector = off
EOF
  _pg_start_server || return 1
  _pg_psql -d postgres <<EOF
CREATE ROLE snowmint LOGIN PASSWORD '$SNOWMINT_PG_PASSWORD';
CREATE DATABASE snowmint OWNER snowmint;
CREATE ROLE stranger LOGIN PASSWORD '$SNOWMINT_PG_PASSWORD';
CREATE DATABASE snowmint_foreign OWNER stranger;
\connect snowmint_foreign
CREATE SCHEMA snowmint AUTHORIZATION stranger;
EOF
  local base="127.0.0.1:$port"
  export SNOWMINT_TEST_POSTGRES_URL="postgres://snowmint:$SNOWMINT_PG_PASSWORD@$base/snowmint"
  export SNOWMINT_TEST_POSTGRES_ADMIN_URL="postgres://postgres@$base/postgres"
  export SNOWMINT_TEST_POSTGRES_FOREIGN_URL="postgres://snowmint:$SNOWMINT_PG_PASSWORD@$base/snowmint_foreign"
  echo "servers.sh: PostgreSQL $("$SNOWMINT_PG_BIN/postgres" --version | awk '{print $3}') at $base (data in $SERVERS_DIR/pg)"
}

_pg_start_server() {
  if ! _pg "$SNOWMINT_PG_BIN/pg_ctl" -D "$SERVERS_DIR/pg/data" -l "$SERVERS_DIR/pg/server.log" -w -t 30 start \
      >/dev/null; then
    echo "servers.sh: PostgreSQL did not start within 30 s; its log:" >&2
    tail -n 30 "$SERVERS_DIR/pg/server.log" >&2; return 1
  fi
  touch "$SERVERS_DIR/pg-running"
  servers_wait 30 "$SNOWMINT_PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$(_pg_port)" || return 1
}

_pg_pids() {
  local pm; pm="$(head -1 "$SERVERS_DIR/pg/data/postmaster.pid" 2>/dev/null)" || return 0
  [ -n "$pm" ] || return 0
  echo "$pm"; pgrep -P "$pm" || true
}

pg_stop() {
  _pg_running || return 0
  pg_resume
  _pg "$SNOWMINT_PG_BIN/pg_ctl" -D "$SERVERS_DIR/pg/data" -m fast -w -t 20 stop >/dev/null 2>&1 \
    || { local p; for p in $(_pg_pids); do kill -KILL "$p" 2>/dev/null; done; }
  rm -f "$SERVERS_DIR/pg-running"
}
# Crash: SIGKILL the postmaster and its backends (recovery runs on the next start).
pg_kill() {
  _pg_running || return 0
  local p pids; pids="$(_pg_pids)"
  for p in $pids; do kill -KILL "$p" 2>/dev/null; done
  for p in $pids; do servers_wait 10 bash -c "! kill -0 $p" || true; done
  rm -f "$SERVERS_DIR/pg-running"
}
pg_pause()  { local p; for p in $(_pg_pids); do kill -STOP "$p" 2>/dev/null; done; return 0; }
pg_resume() { local p; for p in $(_pg_pids); do kill -CONT "$p" 2>/dev/null; done; return 0; }
pg_restart() { _pg_running || _pg_start_server; }

# ------------------------------------------------------------------------------------ TLS and auth
# A key and a certificate NAME signed by the test CA, for SUBJECT with the extensions EXT
# (expired: `openssl ca` with -startdate/-enddate, since `x509 -days` cannot go negative in openssl 3).
_tls_issue() {
  local name="$1" subject="$2" ext="$3" expired="${4:-}" dir="$SERVERS_DIR/tls"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subject" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null || return 1
  printf '%s\n' "$ext" >"$dir/$name.ext"
  if [ -n "$expired" ]; then
    openssl ca -batch -config "$dir/ca.cnf" -notext -in "$dir/$name.csr" -out "$dir/$name.pem" \
      -startdate 20200101000000Z -enddate 20200131000000Z -extfile "$dir/$name.ext" 2>/dev/null || return 1
  else
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
      -days 2 -sha256 -extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null || return 1
  fi
}

tls_certs() {
  servers_init
  local dir="$SERVERS_DIR/tls" ca
  export SNOWMINT_TEST_TLS_DIR="$dir"
  [ -f "$dir/expired.pem" ] && return 0
  mkdir -p "$dir/newcerts"; : >"$dir/index.txt"; echo 01 >"$dir/serial"
  for ca in ca other-ca; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=snowmint test $ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout "$dir/$ca.key" -out "$dir/$ca.pem" 2>/dev/null || { echo "servers.sh: openssl failed" >&2; return 1; }
  done
  printf '%s\n' "[ca]" "default_ca = test" "[test]" "dir = $dir" "database = $dir/index.txt" \
    "new_certs_dir = $dir/newcerts" "serial = $dir/serial" "certificate = $dir/ca.pem" \
    "private_key = $dir/ca.key" "default_md = sha256" "policy = any" "[any]" "commonName = supplied" \
    >"$dir/ca.cnf"
  local client="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
  _tls_issue server "/CN=127.0.0.1" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=IP:127.0.0.1,DNS:localhost" &&
  _tls_issue client "/CN=root" "$client" &&
  _tls_issue expired "/CN=root" "$client" expired || { echo "servers.sh: openssl failed" >&2; return 1; }
  chmod 644 "$dir"/*.pem "$dir"/*.key
}

# One etcd member NAME (its own dir, ports and pid under $SERVERS_DIR/etcd-NAME): SCHEME of its client
# URL, then etcd's extra arguments. Stopped by servers_stop.
_etcd_solo_start() {
  local name="$1" scheme="$2"; shift 2
  local dir="$SERVERS_DIR/etcd-$name" cport pport listen
  etcd_install
  mkdir -p "$dir"; cport="$(servers_free_port)"; pport="$(servers_free_port)"
  echo "$cport" >"$dir/client-port"
  listen="$scheme://127.0.0.1:$cport"
  if [ "$scheme" = "http+https" ]; then   # plain HTTP on client-port, HTTPS on tls-port
    scheme=http; listen="http://127.0.0.1:$cport"
    local tport; tport="$(servers_free_port)"; echo "$tport" >"$dir/tls-port"
    listen+=",https://127.0.0.1:$tport"
  fi
  etcd --name "$name" --data-dir "$dir/data" \
    --listen-client-urls "$listen" --advertise-client-urls "$scheme://127.0.0.1:$cport" \
    --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "$name=http://127.0.0.1:$pport" --initial-cluster-state new \
    --heartbeat-interval 50 --election-timeout 500 "$@" \
    --logger zap --log-outputs "$dir/etcd.log" >>"$dir/etcd.out" 2>&1 &
  echo $! >"$dir/pid"
  echo "$dir" >>"$SERVERS_DIR/etcd-solos"
}

# Waits (30 s at most) until curl with these arguments reads a healthy /health.
_etcd_solo_wait() {
  local name="$1" deadline=$(( $(date +%s) + 30 )); shift
  until curl -fsS --max-time 1 "$@" 2>/dev/null | grep -q '"health":"true"'; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "servers.sh: etcd $name not healthy within 30 s; its log:" >&2
      tail -n 30 "$SERVERS_DIR/etcd-$name/etcd.log" >&2; return 1
    fi
    sleep 0.1
  done
}

etcd_tls_start() {
  tls_certs || return 1
  local t="$SNOWMINT_TEST_TLS_DIR" ep
  _etcd_solo_start tls https --cert-file "$t/server.pem" --key-file "$t/server.key" \
    --client-cert-auth --trusted-ca-file "$t/ca.pem"
  ep="127.0.0.1:$(cat "$SERVERS_DIR/etcd-tls/client-port")"
  _etcd_solo_wait tls --cacert "$t/ca.pem" --cert "$t/client.pem" --key "$t/client.key" "https://$ep/health" || return 1
  export SNOWMINT_TEST_ETCD_TLS_URL="etcd+https://$ep/snowmint-test?cacert=$t/ca.pem&cert=$t/client.pem&key=$t/client.key"
  echo "servers.sh: etcd over HTTPS with client certificates at $ep"
}

etcd_auth_start() {
  tls_certs || return 1
  local ep path body t="$SNOWMINT_TEST_TLS_DIR" tls_ep
  # Plain HTTP and HTTPS (the server's certificate only) on one member: etcd:// and etcd+https:// with
  # a user and password.
  _etcd_solo_start auth http+https --cert-file "$t/server.pem" --key-file "$t/server.key" \
    --auth-token simple --auth-token-ttl 1
  ep="127.0.0.1:$(cat "$SERVERS_DIR/etcd-auth/client-port")"
  tls_ep="127.0.0.1:$(cat "$SERVERS_DIR/etcd-auth/tls-port")"
  _etcd_solo_wait auth "http://$ep/health" || return 1
  _etcd_solo_wait auth --cacert "$t/ca.pem" "https://$tls_ep/health" || return 1
  for path in user/add role/add user/grant enable; do
    case "$path" in
      user/add) body="{\"name\":\"root\",\"password\":\"$SNOWMINT_ETCD_PASSWORD\"}" ;;
      role/add) body='{"name":"root"}' ;;
      user/grant) body='{"user":"root","role":"root"}' ;;
      enable) body='{}' ;;
    esac
    curl -fsS --max-time 5 -X POST "http://$ep/v3/auth/$path" -d "$body" >/dev/null \
      || { echo "servers.sh: etcd auth set-up failed at $path" >&2; return 1; }
  done
  export SNOWMINT_TEST_ETCD_AUTH_URL="etcd://root:$SNOWMINT_ETCD_PASSWORD@$ep/snowmint-test"
  export SNOWMINT_TEST_ETCD_AUTH_TLS_URL="etcd+https://root:$SNOWMINT_ETCD_PASSWORD@$tls_ep/snowmint-test?cacert=$t/ca.pem"
  echo "servers.sh: etcd with authentication (root; tokens live 1 s) at $ep, over HTTPS at $tls_ep"
}

_pg_tls_ctl() { _pg "$SNOWMINT_PG_BIN/pg_ctl" -D "$SERVERS_DIR/pg-tls/data" "$@"; }

pg_tls_start() {
  tls_certs || return 1
  [ -x "$SNOWMINT_PG_BIN/initdb" ] || apt_install postgresql-15
  local dir="$SERVERS_DIR/pg-tls" t="$SNOWMINT_TEST_TLS_DIR" port; port="$(servers_free_port)"
  mkdir -p "$dir/sock"; chown -R postgres: "$dir"
  _pg "$SNOWMINT_PG_BIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1 \
    || { echo "servers.sh: initdb failed:" >&2; cat "$dir/initdb.log" >&2; return 1; }
  install -o postgres -m 600 "$t/server.key" "$dir/data/server.key"
  install -o postgres -m 644 "$t/server.pem" "$dir/data/server.crt"
  printf '%s\n' "local all all trust" "hostssl all all 127.0.0.1/32 scram-sha-256" >"$dir/data/pg_hba.conf"
  printf '%s\n' "listen_addresses = '127.0.0.1'" "port = $port" "unix_socket_directories = '$dir/sock'" \
    "ssl = on" "password_encryption = 'scram-sha-256'" "logging_collector = off" >>"$dir/data/postgresql.conf"
  if ! _pg_tls_ctl -l "$dir/server.log" -w -t 30 start >/dev/null; then
    echo "servers.sh: PostgreSQL (TLS) did not start within 30 s; its log:" >&2
    tail -n 30 "$dir/server.log" >&2; return 1
  fi
  touch "$dir/running"
  printf '%s\n' "CREATE ROLE snowmint LOGIN PASSWORD '$SNOWMINT_PG_PASSWORD';" "CREATE DATABASE snowmint OWNER snowmint;" \
    | _pg "$SNOWMINT_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock" -p "$port" -d postgres || return 1
  export SNOWMINT_TEST_POSTGRES_TLS_URL="postgres://snowmint:$SNOWMINT_PG_PASSWORD@127.0.0.1:$port/snowmint?sslmode=verify-full&sslrootcert=$t/ca.pem"
  echo "servers.sh: PostgreSQL with TLS and SCRAM only at 127.0.0.1:$port"
}

# The three servers of the TLS and authentication tests, and the failure cases every runtime checks
# (SNOWMINT_TEST_TLS_FAILURES: a tab-separated file, one case a line: name, node source, error code, a
# text the message must hold, a text it must not hold — the password).
tls_servers() {
  etcd_tls_start && etcd_auth_start && pg_tls_start || return 1
  local t="$SNOWMINT_TEST_TLS_DIR" e="$SNOWMINT_TEST_ETCD_TLS_URL" p="$SNOWMINT_TEST_POSTGRES_TLS_URL"
  local wrong="wrong-$SNOWMINT_ETCD_PASSWORD"
  {
    printf '%s\t%s\t%s\t%s\t%s\n' \
      etcd-wrong-ca "${e/$t\/ca.pem/$t/other-ca.pem}" STORE_UNAVAILABLE UnknownIssuer "$SNOWMINT_ETCD_PASSWORD" \
      etcd-no-client-certificate "${e%%&cert=*}" STORE_UNAVAILABLE "TLS: received fatal alert" "$SNOWMINT_ETCD_PASSWORD" \
      etcd-expired-client-certificate "$(printf '%s' "$e" | sed "s|$t/client\.|$t/expired.|g")" STORE_UNAVAILABLE \
        "TLS: received fatal alert" "$SNOWMINT_ETCD_PASSWORD" \
      etcd-wrong-password "${SNOWMINT_TEST_ETCD_AUTH_URL/:$SNOWMINT_ETCD_PASSWORD@/:$wrong@}" STORE_UNAVAILABLE \
        "invalid user ID or password" "$wrong" \
      etcd-https-wrong-password "${SNOWMINT_TEST_ETCD_AUTH_TLS_URL/:$SNOWMINT_ETCD_PASSWORD@/:$wrong@}" \
        STORE_UNAVAILABLE "invalid user ID or password" "$wrong" \
      postgres-wrong-ca "${p/$t\/ca.pem/$t/other-ca.pem}" STORE_UNAVAILABLE UnknownIssuer "$SNOWMINT_PG_PASSWORD" \
      postgres-wrong-password "${p/:$SNOWMINT_PG_PASSWORD@/:$wrong@}" STORE_UNAVAILABLE \
        "password authentication failed" "$wrong"
  } >"$t/failures.tsv"
  export SNOWMINT_TEST_TLS_FAILURES="$t/failures.tsv"
}

# ------------------------------------------------------------------------------------------- both
servers_stop() {
  [ -n "${SERVERS_DIR:-}" ] || return 0
  set +e  # the exit path: every step runs, whatever failed before
  { set +x; } 2>/dev/null  # a caller's trace (set -x) would bury the failure above under its polling
  [ "$(_etcd_count)" -gt 0 ] && etcd_stop
  pg_stop
  local solo pid
  for solo in $(cat "$SERVERS_DIR/etcd-solos" 2>/dev/null); do
    pid="$(cat "$solo/pid" 2>/dev/null)" || continue
    kill -TERM "$pid" 2>/dev/null
    servers_wait 10 bash -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ -f "$SERVERS_DIR/pg-tls/running" ]; then
    _pg_tls_ctl -m fast -w -t 20 stop >/dev/null 2>&1
    rm -f "$SERVERS_DIR/pg-tls/running"
  fi
  if [ -z "${SNOWMINT_KEEP_SERVERS_DIR:-}" ]; then rm -rf "$SERVERS_DIR"; fi
  SERVERS_DIR=""
  return 0
}

# Run as a program (`bash scripts/servers.sh etcd_pause 1`), a test process drives the servers its parent
# script started: every state lives in files under the exported SERVERS_DIR.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if [ -z "${SERVERS_DIR:-}" ] || [ ! -d "$SERVERS_DIR" ]; then
    echo "servers.sh: SERVERS_DIR is not set: source this file and start the servers first" >&2; exit 2
  fi
  case "${1:-}" in
    etcd_stop|etcd_kill|etcd_pause|etcd_resume|etcd_restart|pg_stop|pg_kill|pg_pause|pg_resume|pg_restart) "$@" ;;
    *) echo "servers.sh: unknown command '${1:-}'" >&2; exit 2 ;;
  esac
fi
