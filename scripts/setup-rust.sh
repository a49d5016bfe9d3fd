#!/usr/bin/env bash
# Rust pieces every stage needs: the targets of the no_std builds and the lint components.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rust_targets wasm32-unknown-unknown thumbv7em-none-eabi
rustup component list --installed | grep -q '^clippy' || rustup component add clippy
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
