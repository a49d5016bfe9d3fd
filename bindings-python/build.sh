#!/usr/bin/env bash
# Builds the snowmint Python wheels (pyo3 + maturin) once; fast when nothing changed: the abi3 wheel for
# CPython 3.10 and later (cp310-abi3: the fast call path, see Cargo.toml) and the one for CPython 3.9
# (cp39-abi3), side by side in target/python/dist, where `pip install --no-index --find-links` picks the
# right one for the interpreter.
# Installs what a fresh machine lacks: python3 venv support (apt), maturin (pip, in a tool venv).
# Prints the cp310-abi3 wheel's path as the last line (the cp39-abi3 one is beside it); with --this-python
# builds only the wheel this interpreter installs and prints its path; with --tools-only installs the tools
# (maturin) and builds nothing (`make demo` runs it beside its first cargo build).
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
[ "${1:-}" = "--tools-only" ] && exit 0

# Rebuild only when an input changed: the binding, the core, the workspace manifests.
stamp_inputs() {
    local p paths=()
    for p in core/src core/Cargo.toml coord/src coord/Cargo.toml host/src host/Cargo.toml bindings-python/src bindings-python/python bindings-python/Cargo.toml \
        bindings-python/pyproject.toml bindings-python/README.md Cargo.toml Cargo.lock; do
        [ -e "$ROOT/$p" ] && paths+=("$p")
    done
    (cd "$ROOT" && find "${paths[@]}" -type f -not -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum) \
        | sha256sum | cut -d' ' -f1
}
STAMP="$(stamp_inputs)"
# Which wheels: both (tests, the README's install), or with --this-python only the one this interpreter
# installs (`make demo`; the other is built by the first run that needs it). Each has its own stamp.
abis=(abi3-py39 abi3-py310)
if [ "${1:-}" = "--this-python" ]; then
    if "$PY" -c 'import sys; sys.exit(sys.version_info >= (3, 10))'; then abis=(abi3-py39); else abis=(abi3-py310); fi
fi
tag_of() { echo "cp${1#abi3-py}-abi3"; }   # abi3-py39 -> cp39-abi3
for abi in "${abis[@]}"; do
    tag="$(tag_of "$abi")"
    if ls "$DIST"/snowmint-*-"$tag"-*.whl >/dev/null 2>&1 && [ "$(cat "$DIST/.stamp-$tag" 2>/dev/null)" = "$STAMP" ]; then
        log "the $tag wheel is up to date"
        continue
    fi
    rm -f "$DIST"/snowmint-*-"$tag"-*.whl "$DIST/.stamp-$tag"
    log "building the $tag wheel (maturin build --release; about a minute on 2 cores once the crates are built)"
    [ -n "${CARGO_DIR:-}" ] || CARGO_DIR="$(cargo_dir_beside wheel)"
    (cd "$ROOT" && CARGO_TARGET_DIR="$CARGO_DIR" "$TOOLS/bin/maturin" build --release \
        -m bindings-python/Cargo.toml --no-default-features --features "$abi" --out "$DIST" \
        --interpreter "$PY" >&2)
    # The inputs may have changed during the build: stamp what was there before it started.
    echo "$STAMP" > "$DIST/.stamp-$tag"
done
[ -z "${CARGO_DIR:-}" ] || cargo_dir_done "$CARGO_DIR"
WHEEL="$(ls "$DIST"/snowmint-*-"$(tag_of "${abis[-1]}")"-*.whl)"
echo "$WHEEL"
