#!/usr/bin/env bash
# Coordination: lints, unit and in-process tests of snowmint-coord (in-memory and embedded stores,
# injected clocks), docs, then the multi-process lease and sequencer tests (cli/tests/leases.rs) against
# every store URL in SNOWMINT_TEST_STORES (space-separated). The embedded store always runs, in a
# throw-away directory; server stores add their URLs to STORES below.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$ROOT"
bash scripts/setup-rust.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
STORES="file://$work/embedded"
set -x
cargo clippy -p snowmint-coord --all-targets -- -D warnings
cargo test -p snowmint-coord
RUSTDOCFLAGS="-D warnings" cargo doc -p snowmint-coord --no-deps
SNOWMINT_TEST_STORES="$STORES" cargo test -p snowmint-cli --test leases
# The README's embedded example, as written.
cargo build -p snowmint-cli
awk '/<!-- coord-example/{f=1;next} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' README.md > "$work/example.sh"
test -s "$work/example.sh"
TMPDIR="$work" PATH="$ROOT/target/debug:$PATH" bash -euo pipefail "$work/example.sh"
