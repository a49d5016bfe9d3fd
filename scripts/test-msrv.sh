#!/usr/bin/env bash
# The minimum supported Rust versions the manifests declare, built with those toolchains: the core
# (no dependencies) and the host layer (the core only) on the core's rust-version, the WASM crates
# on theirs (wasm-bindgen's floor), the rest of the workspace on the workspace's (the floor of its
# dependencies: napi, sha2 under tokio-postgres). Library builds (`cargo check`): the tests'
# dev-dependencies need a newer Rust.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
# One rust-version per manifest, read from the manifests themselves (so the check cannot drift).
version_of() { # package -> its declared rust-version
  cargo metadata --no-deps --format-version 1 |
    python3 -c "import json,sys; print(next(p['rust_version'] for p in json.load(sys.stdin)['packages'] if p['name']=='$1'))"
}
core_v=$(version_of snowmint); wasm_v=$(version_of snowmint-wasm); rest_v=$(version_of snowmint-coord)
[ "$(version_of snowmint-wasm-opaque)" = "$wasm_v" ] || { echo "the WASM crates disagree on rust-version"; exit 1; }
# The host layer has only the core beneath it and the WASM package above it: the core's floor.
[ "$(version_of snowmint-host)" = "$core_v" ] || { echo "snowmint-host declares another rust-version than the core's $core_v"; exit 1; }
for p in snowmint-cli snowmint-python snowmint-node snowmint-c snowmint-benches; do
  [ "$(version_of $p)" = "$rest_v" ] || { echo "$p declares another rust-version than $rest_v"; exit 1; }
done
for v in "$core_v" "$wasm_v" "$rest_v"; do
  rustup toolchain list | grep -q "^$v-" || rustup toolchain install "$v" --profile minimal --no-self-update
done
rustup target list --toolchain "$wasm_v" --installed | grep -qx wasm32-unknown-unknown ||
  rustup target add --toolchain "$wasm_v" wasm32-unknown-unknown
export CARGO_TARGET_DIR="$ROOT/target/msrv"
set -x
cargo "+$core_v" check -p snowmint --no-default-features
cargo "+$core_v" check -p snowmint
cargo "+$core_v" check -p snowmint-host --no-default-features
cargo "+$core_v" check -p snowmint-host
cargo "+$wasm_v" check -p snowmint-wasm -p snowmint-wasm-opaque --target wasm32-unknown-unknown
cargo "+$rest_v" check --workspace --exclude snowmint-wasm --exclude snowmint-wasm-opaque
