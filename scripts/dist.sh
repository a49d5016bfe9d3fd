#!/usr/bin/env bash
# `make dist`: the portable release artifacts, into target/dist/.
#   python/  abi3 wheels (CPython >= 3.9) for manylinux2014 (glibc 2.17) x86_64 and aarch64 and
#            musllinux_1_2 x86_64 and aarch64, and the sdist (builds with cargo where no wheel fits)
#   npm/     the napi platform packages linux-x64-gnu and linux-arm64-gnu (glibc 2.17), linux-x64-musl and
#            linux-arm64-musl, and the main package `snowmint` (its loader picks the platform package, or
#            the WebAssembly fallback where none fits), packed with npm
# One release build of the dependency graph per target (cargo-zigbuild: zig links against glibc 2.17's
# symbols or against musl, and compiles the C parts for the target), shared by the Python module and the
# Node addon, in a target folder of its own (target/dist/cargo: cargo locks the host's release folder
# too while it builds for another target, which would stall the other stages' release builds while
# these run beside them). Each wheel is the wheel maturin builds here (bindings-python/build.sh: its
# pure-Python files and metadata) with the module built for the target in its place and its platform
# tag set (`wheel pack` writes the RECORD again). About 100 to 140 s and 200 CPU seconds per target on
# 2 cores.
# Tools (PyPI, in target/dist/tools-venv): ziglang, cargo-zigbuild, wheel, auditwheel.
#   scripts/dist.sh [TARGET…]             only these (e.g. aarch64-unknown-linux-gnu)
#   scripts/dist.sh --modules [TARGET…]   the cargo builds alone (each target's Python module and Node
#                                         addon), at the lowest CPU priority (nice 19): `make test`
#                                         starts this first, beside all its other stages (stage
#                                         `dist-build`), so the four builds take only the CPU those
#                                         leave idle; its `dist` stage then packs and checks
#                                         (scripts/test-dist.sh: this script again, whose builds are
#                                         then current)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
need_cargo
need_node
OUT="$ROOT/target/dist"
TOOLS="$OUT/tools-venv"
CARGO_OUT="$OUT/cargo"
modules_only=
if [ "${1:-}" = --modules ]; then
  shift
  modules_only=1
  renice -n 19 -p $$ >/dev/null   # inherited by every build below
fi
mkdir -p "$OUT/python" "$OUT/npm"
log() { echo "[dist] $*" >&2; }

# triple (cargo-zigbuild's, with the glibc version) | wheel platform tag | napi platform
ALL=(
  "x86_64-unknown-linux-gnu.2.17|manylinux_2_17_x86_64.manylinux2014_x86_64|linux-x64-gnu"
  "aarch64-unknown-linux-gnu.2.17|manylinux_2_17_aarch64.manylinux2014_aarch64|linux-arm64-gnu"
  "x86_64-unknown-linux-musl|musllinux_1_2_x86_64|linux-x64-musl"
  "aarch64-unknown-linux-musl|musllinux_1_2_aarch64|linux-arm64-musl"
)
selected=()
for t in "${ALL[@]}"; do
  triple="${t%%|*}"
  if [ $# -eq 0 ] || printf '%s\n' "$@" | grep -qx "${triple%.2.17}"; then selected+=("$t"); fi
done
[ ${#selected[@]} -gt 0 ] || { echo "dist.sh: no such target: $*" >&2; exit 2; }

if [ ! -x "$TOOLS/bin/cargo-zigbuild" ]; then
  log "creating $TOOLS (ziglang, cargo-zigbuild, wheel, auditwheel)"
  python3 -m venv --clear "$TOOLS"
  "$TOOLS/bin/pip" install -q "ziglang>=0.15,<0.18" "cargo-zigbuild>=0.24,<0.25" "wheel>=0.45,<1" "auditwheel>=6,<7" >&2
fi
export PATH="$TOOLS/bin:$PATH"
triples=()
for t in "${selected[@]}"; do triples+=("$(cut -d'|' -f1 <<<"$t" | sed 's/\.2\.17$//')"); done
rust_targets "${triples[@]}" >&2

build_modules() { # build_modules ZTRIPLE TRIPLE: the target's Python module and Node addon
  local up; up="$(tr 'a-z-' 'A-Z_' <<<"$2")"
  # A cdylib on musl links the C library dynamically (as Alpine's Python and Node do).
  case $2 in *musl) export "CARGO_TARGET_${up}_RUSTFLAGS=-C target-feature=-crt-static" ;; esac
  # PYO3_PYTHON: pyo3 configures a build for this machine's CPU from an interpreter, which it would
  # otherwise look up in PATH (and build again whenever PATH differs: the dist-build stage's and the
  # dist stage's do).
  PYO3_PYTHON="$TOOLS/bin/python3" PYO3_BUILD_EXTENSION_MODULE=1 CARGO_TARGET_DIR="$CARGO_OUT" cargo zigbuild -q --release --target "$1" \
    -p snowmint-python --no-default-features --features snowmint-python/abi3-py39 >&2
  CARGO_TARGET_DIR="$CARGO_OUT" cargo zigbuild -q --release --target "$1" -p snowmint-node >&2
}
if [ -n "$modules_only" ]; then
  for t in "${selected[@]}"; do
    ztriple="${t%%|*}"; t0=$(date +%s)
    log "cargo zigbuild --release --target $ztriple (the Python module and the Node addon; nice 19)"
    build_modules "$ztriple" "${ztriple%.2.17}"
    log "$ztriple: $(( $(date +%s) - t0 )) s"
  done
  exit 0
fi

# The template wheel: maturin's cp39-abi3 wheel for this machine (its Python files and metadata).
bash bindings-python/build.sh >/dev/null
TEMPLATE="$(ls "$ROOT"/target/python/dist/snowmint-*-cp39-abi3-*.whl)"
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"

for t in "${selected[@]}"; do
  IFS='|' read -r ztriple wheeltag napi <<<"$t"
  triple="${ztriple%.2.17}"
  t0=$(date +%s)
  log "$napi: cargo zigbuild --release --target $ztriple (the Python module and the Node addon)"
  build_modules "$ztriple" "$triple"
  rel="$CARGO_OUT/$triple/release"

  # The wheel: the template unpacked, the module replaced, the tag set, packed again.
  work="$(mktemp -d)"
  wheel unpack -d "$work" "$TEMPLATE" >/dev/null
  root="$(echo "$work"/snowmint-*)"
  cp "$rel/lib_snowmint.so" "$root/snowmint/_snowmint.abi3.so"
  wheelfile="$root/snowmint-$VERSION.dist-info/WHEEL"
  grep -v '^Tag:' "$wheelfile" > "$wheelfile.new"
  for tag in ${wheeltag//./ }; do echo "Tag: cp39-abi3-$tag" >> "$wheelfile.new"; done
  mv "$wheelfile.new" "$wheelfile"
  rm -f "$OUT"/python/snowmint-*-"$wheeltag".whl
  wheel pack -d "$OUT/python" "$root" >/dev/null
  rm -rf "$work"

  # The napi platform package.
  pkg="$OUT/npm/$napi"
  rm -rf "$pkg" && cp -r "bindings-node/npm/$napi" "$pkg"
  cp "$rel/libsnowmint_node.so" "$pkg/snowmint.$napi.node"
  cp LICENSE-MIT LICENSE-APACHE "$pkg/"
  (cd "$pkg" && npm pack --silent --ignore-scripts --pack-destination "$OUT/npm" >/dev/null)
  log "$napi: $(( $(date +%s) - t0 )) s"
done

# The sdist, and the main npm package (the loader, its types and its WebAssembly fallback's glue).
log "the sdist (maturin sdist)"
rm -f "$OUT"/python/snowmint-*.tar.gz
"$ROOT/target/python/tools-venv/bin/maturin" sdist -m bindings-python/Cargo.toml --out "$OUT/python" >&2
bash bindings-node/build.sh >/dev/null
(cd bindings-node && npm pack --silent --pack-destination "$OUT/npm" >/dev/null)

echo "dist: target/dist/"
(cd "$OUT" && for f in python/*.whl python/*.tar.gz npm/*.tgz; do printf '  %-78s %9s bytes\n' "$f" "$(stat -c %s "$f")"; done)
