#!/usr/bin/env bash
# Rust pieces every stage needs: the targets of the no_std builds, of the emulated CPUs (the cross
# stage) and of the portable artifacts (the dist-build and dist stages), and the lint components. All
# here, before any stage starts: the dist-build stage runs beside the others, and two rustup
# installations at once into one toolchain can race.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rust_targets wasm32-unknown-unknown thumbv7em-none-eabi \
  aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf s390x-unknown-linux-gnu \
  x86_64-unknown-linux-musl aarch64-unknown-linux-musl
rustup component list --installed | grep -q '^clippy' || rustup component add clippy
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
