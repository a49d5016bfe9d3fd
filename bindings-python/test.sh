#!/usr/bin/env bash
# Builds the wheel, installs it with pip into a FRESH venv, and runs the whole pytest suite against it
# (conformance vectors, API and error tests, threads, fork, injected clocks, the ID-service Client against
# a real `snowmint serve` (scripts/service-bin.sh) and the protocol stand-in, and through the stand-in's
# seeded fault layer (tests/test_client_sim.py), state files shared by
# processes (with C processes on the same file and the README's gunicorn recipe), the pre-fork recipes
# with a lease source (tests/test_prefork.py: gunicorn with and without --preload, uWSGI, Celery
# prefork), README quickstart,
# and a mypy --strict check of the type stubs) on CPython 3.11, then its version-sensitive part on 3.9
# and 3.13 (test-versions.sh --version-sensitive; the whole suite on 3.9, 3.10, 3.12 and 3.13 is
# `make test-long`),
# and the node-source, lease and sequencer tests
# (test_coord.py) against the embedded store and real etcd and PostgreSQL servers (scripts/servers.sh:
# free 127.0.0.1 ports, throw-away data, stopped on every exit path), with the TLS and authentication
# servers and their failure cases (binding_servers: tls_servers).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../scripts/lib.sh" # ROOT, the shared helpers
conformance_dir_absolute
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$TARGET/python"
PY="${PYTHON:-python3}"

WHEEL="$("$HERE/build.sh" | tail -n1)"
# The README's install commands, as written, into a throw-away project (build.sh finds the wheel current).
bash "$ROOT/scripts/test-install.sh" bindings-python/README.md >&2
VENV="$WORK/test-venv"
echo "[python test] fresh venv $VENV, installing $(basename "$WHEEL")" >&2
"$PY" -m venv --clear "$VENV"
"$VENV/bin/pip" install -q "$WHEEL" "pytest>=7" "mypy>=1.8" "gunicorn>=21" >&2
# The pre-fork servers of tests/test_prefork.py (the README's recipes): uWSGI (pip builds it with the C
# compiler) and Celery (its prefork pool, on kombu's filesystem transport: no broker server).
"$VENV/bin/pip" install -q "pyuwsgi>=2.0" "celery>=5.3" >&2   # pyuwsgi: uWSGI as a wheel (its `uwsgi` command), no C build

# The C binding's state-file worker: C processes minting on the same state file as Python ones
# (tests/test_state_file.py). Quick when the C stage has built it already.
bash "$ROOT/bindings-c/build.sh"
make -s -C "$ROOT/bindings-c" "$TARGET/bindings-c/static/state_file" >&2
export SNOWMINT_C_STATE_WORKER="$TARGET/bindings-c/static/state_file"

# The package source lives in python/snowmint, so from this folder `import snowmint` can only find the
# installed wheel (checked below).
cd "$HERE"
"$VENV/bin/python" - "$WHEEL" <<'PY'
import sys, pathlib, snowmint
p = pathlib.Path(snowmint.__file__).resolve()
assert "site-packages" in p.parts, f"snowmint imported from {p}, not from the installed wheel"
print(f"[python test] snowmint from {p.parent}", file=sys.stderr)
import zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for lic in ("LICENSE-MIT", "LICENSE-APACHE"):
    assert any(n.endswith("/" + lic) for n in names), f"the wheel does not ship {lic}"
PY
# --recipes-long (`make test-long`): the README's recipes killed mid-load (tests/test_recipes.py), 3 runs in a
# row per recipe and store (`make test` runs each once).
if [ "${1:-}" = "--recipes-long" ]; then export SNOWMINT_RECIPE_RUNS=3; set -- tests/test_recipes.py; fi
if [ $# -eq 0 ]; then set -- tests; fi
# shellcheck source=../scripts/servers.sh
source "$ROOT/scripts/servers.sh"
binding_servers
# The ID service (`snowmint serve`) for the client tests (tests/test_client.py, the README's Client block).
export SNOWMINT_SERVE="$(bash "$ROOT/scripts/service-bin.sh")"
# Not exec: the servers' trap stops them when pytest is done.
"$VENV/bin/python" -m pytest -p no:cacheprovider --durations=15 "$@"
# The whole run (no test selection given): the wheels on the oldest and the newest other CPython, the
# version-sensitive part of the suite (test-versions.sh; the whole suite there is `make test-long`).
if [ "$*" = "tests" ]; then
  bash "$HERE/test-versions.sh" --version-sensitive "$WHEEL"
fi
