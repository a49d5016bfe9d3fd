#!/usr/bin/env bash
# Every test of the C binding. Stages: Rust unit tests of the glue (codes match the core), make check
# (C tests linked statically and against the shared library, under valgrind and ASan/UBSan, the C++
# header check, the quickstart; the conformance runner over EVERY tests/vectors/*.json case), the
# conformance runner's self-test (it must reject bad corpora), make install + pkg-config consumer
# (SONAME, symlinks, DESTDIR), the README's shell blocks run as written, and the committed header being current. Prints "bindings-c: N passed, M failed"; non-zero on failure.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../scripts/lib.sh" # ROOT, the shared helpers
conformance_dir_absolute
export PATH="$HOME/.cargo/bin:$PATH"
apt_install valgrind python3 >&2   # make check-valgrind; the runner self-test mutates a copy of the corpus
if ! bash "$HERE/build.sh"; then
  echo "bindings-c: 0 passed, 1 failed (build.sh)"
  exit 1
fi

# Real etcd and PostgreSQL servers for tests/coord.c (free 127.0.0.1 ports, throw-away data, stopped on
# every exit path), and the TLS and authentication ones with their failure cases (tls_servers).
# shellcheck source=../scripts/servers.sh
source "$ROOT/scripts/servers.sh"
binding_servers

passed=0; failed=0; failures=()
stage() {
  local name="$1"; shift
  echo "---- $name"
  local t0=$SECONDS
  if "$@"; then passed=$((passed + 1)); echo "---- $name: ok ($((SECONDS - t0))s)"
  else failed=$((failed + 1)); failures+=("$name"); echo "---- $name: FAILED ($((SECONDS - t0))s)"; fi
}

# Debug, on the graph the core and coord stages built: a release test harness is its own optimised,
# link-time-optimised build of the crate (52 s against 3 s), shared with no artifact.
stage "rust unit tests" cargo test -q -p snowmint-c --lib --manifest-path "$ROOT/Cargo.toml"
# The static, shared, valgrind and ASan runs side by side (each one mostly one core: valgrind alone is
# about 50 s), every target's output kept together.
stage "make check" make -s -j"$(nproc)" -Otarget -C "$HERE" check
stage "ID-only library (snowmint-core)" make -s -C "$HERE" check-core
stage "runner self-test" bash "$HERE/tests/runner_selftest.sh"
stage "install + pkg-config" make -s -C "$HERE" install-check
stage "README commands, as written" bash "$HERE/tests/readme.sh"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
  stage "header up to date" git -C "$ROOT" diff --exit-code --stat -- bindings-c/include/snowmint.h
fi

echo "bindings-c: $passed passed, $failed failed${failures:+ (${failures[*]})}"
[ "$failed" -eq 0 ]
