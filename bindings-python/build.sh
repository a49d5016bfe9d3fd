#!/usr/bin/env bash
# Builds the snowmint Python wheel (pyo3 + maturin) once; fast when nothing changed.
# Installs what a fresh machine lacks: python3 venv support (apt), maturin (pip, in a tool venv).
# Prints the wheel's path as the last line.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$TARGET/python"
DIST="$WORK/dist"
TOOLS="$WORK/tools-venv"
PY="${PYTHON:-python3}"
mkdir -p "$WORK" "$DIST"

log() { echo "[python build] $*" >&2; }

# shellcheck source=../scripts/lib.sh
source "$ROOT/scripts/lib.sh"
need_cargo
if ! command -v "$PY" >/dev/null || ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
    apt_install python3 python3-venv python3-pip >&2
fi

# maturin in its own venv (never touches the system Python).
if [ ! -x "$TOOLS/bin/maturin" ]; then
    log "creating $TOOLS with maturin"
    "$PY" -m venv --clear "$TOOLS"
    "$TOOLS/bin/pip" install -q "maturin>=1.16,<2" >&2
fi

# Rebuild only when an input changed: the binding, the core, the workspace manifests.
stamp_inputs() {
    local p paths=()
    for p in core/src core/Cargo.toml coord/src coord/Cargo.toml bindings-python/src bindings-python/python bindings-python/Cargo.toml \
        bindings-python/pyproject.toml bindings-python/README.md Cargo.toml Cargo.lock; do
        [ -e "$ROOT/$p" ] && paths+=("$p")
    done
    (cd "$ROOT" && find "${paths[@]}" -type f -not -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum) \
        | sha256sum | cut -d' ' -f1
}
STAMP="$(stamp_inputs)"
WHEEL="$(ls -t "$DIST"/snowmint-*.whl 2>/dev/null | head -n1 || true)"
if [ -n "$WHEEL" ] && [ -f "$DIST/.stamp" ] && [ "$(cat "$DIST/.stamp")" = "$STAMP" ]; then
    log "wheel up to date"
    echo "$WHEEL"
    exit 0
fi

log "building the wheel (maturin build --release)"
rm -f "$DIST"/snowmint-*.whl "$DIST/.stamp"
(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" "$TOOLS/bin/maturin" build --release \
    -m bindings-python/Cargo.toml --out "$DIST" --interpreter "$PY" >&2)
WHEEL="$(ls -t "$DIST"/snowmint-*.whl | head -n1)"
# The inputs may have changed during the build: stamp what was there before it started.
echo "$STAMP" > "$DIST/.stamp"
log "built $WHEEL"
echo "$WHEEL"
