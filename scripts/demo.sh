#!/usr/bin/env bash
# The README's main job: mint the same scripted IDs in Rust, C, Python, Node and WASM, show them side by
# side with their decoding, fail loudly if any runtime differs; then mint live IDs in each runtime.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
bash scripts/setup.sh
cargo build -q --release -p snowmint-cli
cargo build -q --release -p snowmint --example replay
exec python3 scripts/demo.py "$@"
