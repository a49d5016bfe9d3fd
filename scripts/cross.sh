#!/usr/bin/env bash
# The same IDs on other CPUs (the `cross` stage of `make test`; `make test-cross` alone). For aarch64
# (64-bit ARM), armv7 (32-bit ARM, hard float) and s390x (64-bit, big-endian), each cross-built here and
# run under qemu-user:
#   - the core's conformance runner (core/tests/vectors.rs: every case of tests/vectors/) and its
#     state-file tests (those that run in one process: the multi-process ones re-run their own binary,
#     which qemu-user without binfmt cannot);
#   - the ID-only C library (libsnowmint-core, cross gcc) with its conformance runner
#     (bindings-c/tests/vectors.c: every case but node_sources.json, the coordination library's), its
#     API test, its threads test and its forked-processes state-file test (reduced counts);
#   - the state file's byte order across hosts: a file made by an x86-64 process is refused by an s390x
#     one with STATE_FILE_MISMATCH, and the other way round.
# Bounded: every emulated program runs under `timeout`; the vectors, not the whole suites.
# Installs what is missing: qemu-user, the cross compilers and C libraries (Debian), the rustup targets,
# and cJSON for each CPU (its Debian .deb downloaded and unpacked under target/cross; the foreign
# architectures are known to dpkg only for that download and removed again at once).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
need_cargo

# triple  Debian-arch  gcc-prefix  qemu
CPUS=(
  "aarch64-unknown-linux-gnu arm64 aarch64-linux-gnu aarch64"
  "armv7-unknown-linux-gnueabihf armhf arm-linux-gnueabihf arm"
  "s390x-unknown-linux-gnu s390x s390x-linux-gnu s390x"
)
[ -n "${SNOWMINT_CROSS_CPUS:-}" ] && read -ra only <<<"$SNOWMINT_CROSS_CPUS" || only=()
OUT="$ROOT/target/cross"
mkdir -p "$OUT"
T0=$(date +%s)

pkgs=(qemu-user libcjson-dev)
triples=()
for c in "${CPUS[@]}"; do
  read -r triple arch prefix _ <<<"$c"
  pkgs+=("gcc-$prefix" "libc6-dev-$arch-cross")
  triples+=("$triple")
done
apt_install "${pkgs[@]}"
rust_targets "${triples[@]}"

# cJSON for each foreign CPU: Debian's libcjson1 for that architecture, unpacked (not installed).
cjson=()
for c in "${CPUS[@]}"; do read -r _ arch _ _ <<<"$c"; cjson+=("libcjson1:$arch"); done
foreign_debs "$OUT/debs" "${cjson[@]}"
mkdir -p "$OUT/include"
cp -r /usr/include/cjson "$OUT/include/"

fails=0
check() { # check NAME COMMAND…: runs it, records a failure
  local name="$1"; shift
  if "$@"; then echo "cross: $name: ok"; else echo "cross: $name: FAILED" >&2; fails=$((fails + 1)); fi
}

selected() { [ ${#only[@]} -eq 0 ] || printf '%s\n' "${only[@]}" | grep -qx "$1"; }
# Each CPU's linker, runner and C compiler; then one build of every CPU's test binaries and ID-only C
# library (cargo builds the targets side by side), then the emulated runs of the CPUs at once (each one
# single-threaded qemu: one core each), each CPU's output kept and printed in order.
built=()
for c in "${CPUS[@]}"; do
  read -r triple arch prefix qemu <<<"$c"
  selected "$arch" || continue
  up=$(tr 'a-z-' 'A-Z_' <<<"$triple")
  export "CARGO_TARGET_${up}_LINKER=$prefix-gcc"
  export "CARGO_TARGET_${up}_RUNNER=timeout 300 qemu-$qemu -L /usr/$prefix"
  export "CC_${triple//-/_}=$prefix-gcc"
  built+=(--target "$triple")
done
t=$(date +%s)
env -u SNOWMINT_CONFORMANCE_DIR cargo test -q -p snowmint "${built[@]}" --test vectors --test state_file --no-run
cargo build -q -p snowmint-c --no-default-features "${built[@]}"
echo "== built for $(( ${#built[@]} / 2 )) CPUs in $(( $(date +%s) - t )) s"
run_cpu() { # run_cpu TRIPLE ARCH PREFIX QEMU: every emulated check of one CPU; exits with its failures
  local triple="$1" arch="$2" prefix="$3" qemu="$4" t test
  fails=0
  t=$(date +%s)
  local sysroot="/usr/$prefix" root="$OUT/root-$arch"
  [ -d "$root" ] || dpkg -x "$(ls "$OUT"/debs/libcjson1_*_"$arch".deb)" "$root"  # cJSON alone
  local libdir="$root/usr/lib/$prefix"
  check "$arch core vectors + state file" env -u SNOWMINT_CONFORMANCE_DIR cargo test -q -p snowmint --target "$triple" \
    --test vectors --test state_file -- \
    --skip four_processes_of_two_threads --skip sigkill_mid_minting --skip an_unlinked_or_replaced_file
  local lib="$ROOT/target/$triple/debug/libsnowmint.a"
  local bin="$OUT/$arch"; mkdir -p "$bin"
  local cc=("$prefix-gcc" -std=c11 -Wall -Wextra -Werror -pedantic -O1 -DSNOWMINT_ID_ONLY -Ibindings-c/include -I"$OUT/include")
  local run=(env QEMU_LD_PREFIX="$sysroot" LD_LIBRARY_PATH="$libdir" timeout 300 "qemu-$qemu")
  for test in vectors api threads state_file; do
    local extra=() args=()
    case $test in
      vectors) extra=("$libdir/libcjson.so.1"); args=("$ROOT/tests/vectors") ;;
      state_file) args=(20000) ;;
    esac
    "${cc[@]}" "bindings-c/tests/$test.c" -o "$bin/$test" "$lib" "${extra[@]}" -lpthread -lm -ldl
    check "$arch C $test" "${run[@]}" "$bin/$test" "${args[@]}"
  done
  echo "== $triple (qemu-$qemu): $(( $(date +%s) - t )) s"
  exit "$fails"
}
pids=(); arches=()
for c in "${CPUS[@]}"; do
  read -r triple arch prefix qemu <<<"$c"
  selected "$arch" || continue
  ( run_cpu "$triple" "$arch" "$prefix" "$qemu" ) >"$OUT/$arch.log" 2>&1 &
  pids+=($!); arches+=("$arch")
done
for i in "${!pids[@]}"; do
  rc=0; wait "${pids[$i]}" || rc=$?
  echo "== ${arches[$i]}"; cat "$OUT/${arches[$i]}.log"
  fails=$((fails + rc))
done
if selected s390x; then
  d="$(mktemp -d)"; trap 'rm -rf "$d"' EXIT
  across() { # across [--target T] ENV…
    local target=()
    [ "$1" = --target ] && { target=(--target "$2"); shift 2; }
    env -u SNOWMINT_CONFORMANCE_DIR "$@" cargo test -q -p snowmint "${target[@]}" --test state_file -- \
      --ignored --exact byte_order_across_hosts --nocapture
  }
  check "byte order: x86-64 makes a file" across SNOWMINT_BYTE_ORDER_MAKE="$d/little"
  check "byte order: s390x refuses it, makes its own" across --target s390x-unknown-linux-gnu \
    SNOWMINT_BYTE_ORDER_REFUSE="$d/little" SNOWMINT_BYTE_ORDER_MAKE="$d/big"
  check "byte order: x86-64 refuses the s390x file" across SNOWMINT_BYTE_ORDER_REFUSE="$d/big"
fi

echo "cross: $(( $(date +%s) - T0 )) s in all, $fails failed"
[ "$fails" -eq 0 ]
