#!/usr/bin/env bash
# demo.sh CASE.json  - mints the IDs of one generate.json-format case (scripted clock) through the
#                      Python binding, one decimal ID per line; a failing step prints `error CODE`.
# demo.sh --live N   - N IDs from the host clock (layout twitter, node 7).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$TARGET/python"
PY="${PYTHON:-python3}"
if [ $# -eq 1 ] && [ "$1" != "--live" ]; then
    CASE="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    set -- "$CASE"
fi

WHEEL="$("$HERE/build.sh" --this-python 2>/dev/null | tail -n1)" || { "$HERE/build.sh" --this-python >&2; exit 1; }
VENV="$WORK/demo-venv"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV" >&2
fi
if [ "$(cat "$VENV/.wheel" 2>/dev/null || true)" != "$(sha256sum "$WHEEL")" ]; then
    "$VENV/bin/pip" install -q --force-reinstall --no-deps "$WHEEL" >&2
    sha256sum "$WHEEL" > "$VENV/.wheel"
fi
cd "$WORK"
exec "$VENV/bin/python" "$HERE/demo.py" "$@"
