#!/usr/bin/env bash
# Miri over every test of the core — unit tests, generation, properties, conformance vectors, the
# two-thread stress test, the fast-clock-off path and the doctests — at reduced sizes (PROPTEST_CASES,
# and `cfg(miri)` branches in the tests): undefined behaviour, data races and leaks. Under Miri the
# default clock is the plain system clock (Miri cannot run `rdtsc`); the counter gate's own logic is
# still tested there with synthetic counters. The state-file tests are native only: Miri runs no
# file-backed shared mappings, fsync or child processes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^miri'; then
  rustup toolchain install nightly --profile minimal -c miri,rust-src --no-self-update
fi
# The conformance record is the native runs' (the Miri run skips the largest generation cases).
unset SNOWMINT_CONFORMANCE_DIR
# Miri's sysroot inside the build tree, not ~/.cache.
export MIRI_SYSROOT="$ROOT/target/miri-sysroot"
export PROPTEST_CASES="${PROPTEST_CASES:-4}"
# The tests read the real clock and the environment.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
set -x
cargo +nightly miri setup
cargo +nightly miri test -p snowmint -- --skip state_file
