#!/usr/bin/env bash
# The machine set-up, in one place: every Debian package, Rust target and component the project's builds
# and tests need, installed when missing (a no-op on a ready machine). `make test` runs it first, `make
# demo` runs `setup.sh --demo` (only what the demo uses); each build.sh also installs its own part through
# the same helpers (scripts/lib.sh), so a single binding can be built on a fresh machine without this
# script. Toolchains pinned by a stage (nightly for
# Miri and fuzzing, the MSRV toolchains) are installed by that stage, only when it runs; the nightly
# toolchain and cargo-fuzz also here (`make test`), since the Miri and fuzz stages start together and run
# beside each other (two rustup installations of one toolchain at once can race).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_cargo
if [ "${1:-}" = "--demo" ]; then
  # `make demo`: the C, Python and Node builds and the WASM package run in Node (no browser, no server:
  # the fleet uses the embedded store).
  apt_install gcc g++ make pkg-config libcjson-dev python3 python3-venv python3-pip procps
  need_node
  exit 0
fi
# C binding and its tests; Python; Node and the WASM package; the browser tests; the coordination servers
# (scripts/servers.sh) and their readiness checks.
apt_install gcc g++ make valgrind pkg-config libcjson-dev uuid-dev \
  python3 python3-venv python3-pip \
  chromium \
  etcd-server postgresql-15 procps curl
need_node   # Node.js may come from elsewhere than Debian (its npm is then no Debian package)
need_pg_dev # the PostgreSQL extension (pg/): PGXS and the server headers
"$(dirname "${BASH_SOURCE[0]}")/setup-rust.sh"
# The Miri and fuzz stages' nightly toolchain (Miri, its sources), and cargo-fuzz: the same checks and
# versions as scripts/test-miri.sh and scripts/test-fuzz.sh.
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^miri'; then
  rustup toolchain install nightly --profile minimal -c miri,rust-src --no-self-update
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
