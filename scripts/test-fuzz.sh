#!/usr/bin/env bash
# Fuzzing smoke runs (cargo-fuzz, libFuzzer + AddressSanitizer on nightly): every string parser of the
# core, layout configurations, the generation rule under arbitrary clocks, node sources and store URLs,
# the C API's entry points with arbitrary arguments, and the ID service's request handling
# (service_request: method, path, query and body through Service::handle, the function hyper calls). Each target first replays its committed corpus
# (fuzz/corpus/TARGET: seeds from the conformance vectors and inputs the fuzzer found, minimised with
# `cargo fuzz cmin`) and its regressions (fuzz/regressions/TARGET: every crash ever found, kept after
# its fix), then fuzzes for SNOWMINT_FUZZ_SECONDS seconds: 5 in `make test` (the replay is the regression
# check; the build takes most of the stage), 120 with --long (`make test-long`: the search for new
# inputs). New inputs go to a throw-away directory, never into the repository.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal --no-self-update
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
command -v c++ >/dev/null 2>&1 || apt_install g++   # libFuzzer is C++
seconds=5; [ "${1:-}" = "--long" ] && seconds=120
seconds="${SNOWMINT_FUZZ_SECONDS:-$seconds}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd fuzz
set -x
cargo +nightly fuzz build -O
rm -rf artifacts
set +x
for target in $(cargo +nightly fuzz list); do
  mkdir -p "$work/$target" "corpus/$target"
  echo "== fuzz $target: $(ls "corpus/$target" | wc -l) corpus inputs, then ${seconds} s"
  dirs=("$work/$target" "corpus/$target")
  [ -d "regressions/$target" ] && dirs+=("regressions/$target")
  # cargo-fuzz's own status counts (a crash, a leak, a timeout, an out-of-memory, a build failure); the
  # filter's does not (grep finds nothing in a quiet run).
  set +e
  cargo +nightly fuzz run -O "$target" "${dirs[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 2>&1 |
    grep -E '^(INFO: seed corpus|#[0-9]+ +DONE|stat::number_of_executed_units)|panicked|ERROR|SUMMARY|Test unit written'
  status=${PIPESTATUS[0]}
  set -e
  # And any file libFuzzer wrote under artifacts/ (crash-, leak-, timeout-, oom-, slow-unit-…). One
  # `ls` of several patterns was the check before: it fails when any one pattern matches nothing, so a
  # crash- with no leak- beside it read as "no artifact" and the stage said ok.
  found=""
  [ ! -d "artifacts/$target" ] || found="$(find "artifacts/$target" -type f | head -n 5)"
  if [ "$status" -ne 0 ] || [ -n "$found" ]; then
    echo "fuzz $target: failed (cargo fuzz exit status $status)${found:+; the input is in fuzz/artifacts/$target/ (add it to fuzz/corpus/$target once fixed):}" >&2
    [ -z "$found" ] || printf '  %s\n' $found >&2
    exit 1
  fi
done
