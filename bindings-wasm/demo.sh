#!/usr/bin/env bash
# demo.sh CASE.json [NAME]: the decimal IDs snowmint-wasm mints for one generate-vector case (its
# scripted clock), one per line; a failing call prints `error CODE`.
# demo.sh --live N: N IDs from the host clock (Date.now(); layout twitter, node 7).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$HERE/build.sh" >/dev/null 2>&1 || "$HERE/build.sh" >&2
# Resolve a relative CASE.json against the caller's directory.
args=("$@")
if [ $# -ge 1 ] && [ "$1" != "--live" ] && [ -f "$1" ]; then args[0]="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; fi
exec node "$HERE/demo.mjs" "${args[@]}"
