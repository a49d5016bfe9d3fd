#!/usr/bin/env bash
# Builds the CLI (`snowmint serve`, the ID service) once in release and prints the binary's path: the
# service the client tests of the Python, Node and WASM stages run against (SNOWMINT_SERVE). Quick when
# it is current (cargo checks and does nothing).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="$HOME/.cargo/bin:$PATH"
(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build -q --release -p snowmint-cli >&2)
echo "$TARGET/release/snowmint"
