#!/usr/bin/env bash
# demo.sh CASE.json : the decimal IDs minted through the C API for one generate.json-format case (its
#                     scripted injected clock), one per line; a failing call prints "error CODE".
# demo.sh --live N  : N IDs from the host clock (layout twitter, node 7).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
bash "$HERE/build.sh" >&2
make -s -C "$HERE" demo >&2
if [ "${1:-}" != "--live" ] && [ $# -ge 1 ]; then set -- "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; fi
exec "${CARGO_TARGET_DIR:-$ROOT/target}/bindings-c/demo" "$@"
