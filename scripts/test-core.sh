#!/usr/bin/env bash
# The Rust side: formatting, lints, unit/property/stress/conformance tests, CLI tests, doctests, docs,
# no_std builds for wasm32 and a 32-bit bare-metal target, and the loom model check.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
conformance_dir_absolute
cd "$ROOT"
bash scripts/setup-rust.sh
# The CLI's man pages are rendered by groff in its tests (required here, not skipped).
apt_install groff-base
export SNOWMINT_REQUIRE_MAN=1
set -x
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# Two runs, not one `-p snowmint -p snowmint-cli`: selecting the core turns on its `default` feature for
# every crate above it, so the CLI and everything under it would be built once more for the later stages
# (coord, service, wasm), which build the CLI alone. The CLI's tests here are all but the ones that run
# against every store (CLI_STORE_TESTS, scripts/lib.sh: the coord stage runs those, once).
cargo test -p snowmint
# shellcheck disable=SC2046
cargo test -p snowmint-cli --bins $(cli_core_tests)
cargo test -p snowmint --features serde --test serde  # the serde feature (off by default) …
cargo test -p snowmint --features serde --doc         # … and its documented example
cargo test -p snowmint-coord --test node_sources  # node_sources.json (the core cannot parse node sources)
RUSTDOCFLAGS="-D warnings" cargo doc -p snowmint --no-deps
cargo package -p snowmint --allow-dirty
cargo build -p snowmint --no-default-features --target wasm32-unknown-unknown --release
cargo build -p snowmint --no-default-features --target thumbv7em-none-eabi --release
cargo build -p snowmint --no-default-features --features serde --target thumbv7em-none-eabi --release
# loom: optimised (the model checker runs millions of interleavings) in its own target directory (the
# `--cfg loom` flags rebuild everything); no LTO there: it speeds nothing up in a test and costs link time.
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$ROOT/target/loom" CARGO_PROFILE_RELEASE_LTO=false \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 cargo test -p snowmint --test loom --release
bash scripts/test-install.sh core/README.md cli/README.md  # their install commands, as written
bash scripts/test-readme-rust.sh  # every README's Rust block compiles in a crate made by `cargo new` (edition 2024)
python3 tests/oracle/vectors.py --check
python3 scripts/check-conformance.py --self-test
