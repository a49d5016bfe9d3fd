#!/usr/bin/env bash
# Builds the wheel, installs it with pip into a FRESH venv, and runs the whole pytest suite against it
# (conformance vectors, API and error tests, threads, fork, injected clocks, README quickstart, and a
# mypy --strict check of the type stubs).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
# Conformance record (scripts/check-conformance.py): passed on, as an absolute path, only when set.
if [ -n "${SNOWMINT_CONFORMANCE_DIR:-}" ]; then
  mkdir -p "$SNOWMINT_CONFORMANCE_DIR"; export SNOWMINT_CONFORMANCE_DIR="$(cd "$SNOWMINT_CONFORMANCE_DIR" && pwd)"
fi
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$TARGET/python"
PY="${PYTHON:-python3}"

WHEEL="$("$HERE/build.sh" | tail -n1)"
VENV="$WORK/test-venv"
echo "[python test] fresh venv $VENV, installing $(basename "$WHEEL")" >&2
"$PY" -m venv --clear "$VENV"
"$VENV/bin/pip" install -q "$WHEEL" "pytest>=7" "mypy>=1.8" >&2

# The package source lives in python/snowmint, so from this folder `import snowmint` can only find the
# installed wheel (checked below).
cd "$HERE"
"$VENV/bin/python" - "$WHEEL" <<'PY'
import sys, pathlib, snowmint
p = pathlib.Path(snowmint.__file__).resolve()
assert "site-packages" in p.parts, f"snowmint imported from {p}, not from the installed wheel"
print(f"[python test] snowmint from {p.parent}", file=sys.stderr)
PY
if [ $# -eq 0 ]; then set -- tests; fi
exec "$VENV/bin/python" -m pytest -p no:cacheprovider "$@"
