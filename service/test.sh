#!/usr/bin/env bash
# The ID service (SPEC §6a, crate snowmint-service, `snowmint serve`): lints, the protocol on a real
# 127.0.0.1 socket (service/tests/http.rs: concurrent batch fetchers, every bad request, /metrics through a
# strict Prometheus parser, client leases), and `snowmint serve` as a process (service/tests/process.rs:
# graceful shutdown; on a real etcd, client leases surviving SIGTERM and SIGKILL and two instances on one
# store; on the embedded store, etcd and PostgreSQL, no client leased an instance's node ID), then the
# README's example as written. etcd and PostgreSQL run as real servers (scripts/servers.sh), stopped on
# every exit path. service/tests/hardening.rs: foreign origins, unlisted hosts, non-JSON bodies, bearer
# tokens, the lease and connection caps, TLS against a CA made with openssl; service/tests/outage.rs:
# etcd and PostgreSQL behind a proxy the test stalls and cuts; service/tests/hostile.rs: one client that
# pipelines and never reads, 512 sockets of it (another address served within 1 s, HTTP and HTTPS, with
# and without tokens), idle keep-alives; service/tests/lease_caps.rs: the lease caps by address, network
# and for every client without a token, counted from the store, a late take released, a lease bound to
# its bearer. service/tests/browser: cross-site requests
# and DNS rebinding from headless Chromium (playwright-core). About 2 minutes on 2 cores once built.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$ROOT"
bash scripts/setup-rust.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v curl >/dev/null 2>&1 || apt_install curl
command -v openssl >/dev/null 2>&1 || apt_install openssl
# The browser tests: Debian's Chromium and playwright-core (where bindings-wasm/build.sh --browser puts it).
[ -x /usr/bin/chromium ] || apt_install chromium
need_node
TOOLS="$ROOT/target/wasm-work/tools"
if [ ! -f "$TOOLS/node_modules/playwright-core/package.json" ]; then
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || echo '{"name":"snowmint-wasm-tools","private":true}' > "$TOOLS/package.json"
  (cd "$TOOLS" && npm install --no-audit --no-fund playwright-core)
fi
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
SNOWMINT_TOOLS="$TOOLS/node_modules" SNOWMINT_CLI="$ROOT/target/debug/snowmint" \
  timeout 300 node --test service/tests/browser/
# The README's service example, as written.
awk '/<!-- service-example/{f=1;next} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' README.md > "$work/example.sh"
test -s "$work/example.sh"
TMPDIR="$work" PATH="$ROOT/target/debug:$PATH" bash -euo pipefail "$work/example.sh"
