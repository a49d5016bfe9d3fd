#!/usr/bin/env bash
# Miri (nightly): undefined behaviour, data races and leaks in the core, at reduced sizes (PROPTEST_CASES,
# and `cfg(miri)` branches in the tests). Under Miri the default clock is the plain system clock (Miri
# cannot run `rdtsc`); the counter gate's own logic is still tested there with synthetic counters. The
# state-file tests are native only: Miri runs no file-backed shared mappings, fsync or child processes.
#
#   scripts/test-miri.sh          `make test`: the atomic and unsafe paths, within a hard budget of
#                                 SNOWMINT_MIRI_BUDGET seconds of interpretation (default 900: about
#                                 65 s on a quiet machine, 102-136 s in a clean-clone `make test` beside the
#                                 other stages; but machines of this kind differ from day to day: a CI run
#                                 took the whole `make test` twice as long as those (3,268 s against
#                                 1,664 s), and in a clean-clone run here on such a day the bounded set
#                                 passed 480 s (the stats tests alone 216 s); the stage fails past it):
#                                 the fast clock's gate (unit tests, synthetic counters), the shared
#                                 generator and its state word (two-thread stress, the shared-generator
#                                 tests of generation.rs), the ceiling, the statistics counters (threads
#                                 included) and the take-ahead window. The conformance vectors (over 340 s
#                                 under Miri alone, on paths the set above already covers) run natively in
#                                 every runtime here, and under Miri in the full sweep.
#   scripts/test-miri.sh --full   `make test-long`: every test of the core and its doctests (no budget).
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
echo "miri: building its sysroot (once: about a minute)"
(set -x; cargo +nightly miri setup)
if [ "${1:-}" = "--full" ]; then
  set -x
  SNOWMINT_MIRI_FULL=1 exec cargo +nightly miri test -p snowmint -- --skip state_file
fi
budget="${SNOWMINT_MIRI_BUDGET:-900}"
# Each run gets what is left of the budget; running out fails the stage (the full sweep is `make test-long`).
bounded() {
  local left=$((deadline - SECONDS)) rc=0
  [ "$left" -gt 0 ] || left=1
  echo "+ $* (budget left: ${left}s)"
  timeout --signal=INT --kill-after=10 "$left" "$@" || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "miri: over its ${budget}s budget (SNOWMINT_MIRI_BUDGET): make the tests' cfg(miri) sizes smaller, or move a test to the full sweep (make test-long)" >&2
  fi
  return "$rc"
}
# Compiling is not interpreting: the test binaries are built first, outside the budget.
(set -x; cargo +nightly miri test -p snowmint --lib --test stress --test ceiling --test stats --test take_ahead \
  --test fast_clock_off --test generation --no-run)
deadline=$((SECONDS + budget))
t0=$SECONDS
bounded cargo +nightly miri test -p snowmint --lib -- fast_clock
bounded cargo +nightly miri test -p snowmint --test stress --test ceiling --test stats --test take_ahead \
  --test fast_clock_off -- --skip state_file
# generation.rs: the shared generator (agreement with the plain one; strict policy under threads).
bounded cargo +nightly miri test -p snowmint --test generation -- shared strict_ a_cached_reading
echo "miri: the bounded set took $((SECONDS - t0))s of its ${budget}s budget (every test, doctests included: make test-long)"
