#!/usr/bin/env bash
# The wheels are abi3: install the one build.sh made for each CPython (cp310-abi3 for 3.10 and later,
# cp39-abi3 for 3.9, picked by pip from the folder as a user's `--find-links` install would) into a fresh
# venv of other CPythons this machine has under pyenv (test.sh itself runs the whole suite on 3.11 on the
# cp310-abi3 wheel) and check the wheel there:
#   test-versions.sh --version-sensitive [WHEEL]   `make test` (test.sh, on 3.9 and 3.13): what can differ
#       between CPython versions — the abi3 wheel's tag and import, every conformance vector, the API
#       surface and its errors, the type stubs (mypy --strict and stubtest against that runtime), pickling,
#       clocks, fork, opaque IDs, host inputs, the READMEs' examples, and the ID-service Client's TLS and
#       asyncio paths (the ssl and asyncio modules change between versions). What runs the same Python
#       code over the same native calls (the rest of the Client against a live service, state files
#       shared by processes, the thread stress, the demo) is left to the 3.11 run and to:
#   test-versions.sh [WHEEL]   `make test-long` (3.9, 3.10, 3.12, 3.13): the whole suite
# — in both but for the server-bound tests (test_coord.py, test_range.py: the same Python code over the
# same native calls, run by test.sh against real etcd and PostgreSQL on the default interpreter) and the
# pre-fork server recipes (test_prefork.py: gunicorn, uWSGI and Celery, which pip would compile or fetch
# again for each interpreter; test.sh runs them on the default one).
# WHEEL defaults to build.sh's (current after `make demo`). SNOWMINT_PYTHON_VERSIONS overrides the list of
# versions (`make test` and `make test-long` set it, see scripts/test-all.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
scope=full
if [ "${1:-}" = "--version-sensitive" ]; then scope=version-sensitive; shift; fi
if [ $# -ge 1 ]; then
  WHEEL="$1"
else
  # Run alone (`make test-long`): what test.sh provides first — the wheels, the C binding's state-file
  # worker (tests/test_state_file.py) and the ID service (tests/test_client.py), each current after
  # `make demo` / `make test`.
  WHEEL="$("$HERE/build.sh" | tail -n1)"
  bash "$ROOT/bindings-c/build.sh"
  make -s -C "$ROOT/bindings-c" "${CARGO_TARGET_DIR:-$ROOT/target}/bindings-c/static/state_file" >&2
  export SNOWMINT_C_STATE_WORKER="${CARGO_TARGET_DIR:-$ROOT/target}/bindings-c/static/state_file"
  export SNOWMINT_SERVE="$(bash "$ROOT/scripts/service-bin.sh")"
fi
WORK="${CARGO_TARGET_DIR:-$ROOT/target}/python"
PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}"
# The version-sensitive part of the suite (see the top of this file).
VERSION_SENSITIVE=(tests/test_vectors.py tests/test_api.py tests/test_stubs.py tests/test_conventions.py
  tests/test_edges.py tests/test_clock.py tests/test_fork.py tests/test_opaque.py tests/test_host_inputs.py
  tests/test_readme.py tests/test_readme_api.py
  tests/test_client.py::test_tls_with_a_private_ca_and_a_bearer_token tests/test_client.py::test_async_client
  tests/test_client.py::test_bad_options)
tested=()
for minor in ${SNOWMINT_PYTHON_VERSIONS:-3.9 3.10 3.12 3.13}; do
  # The newest patch release of this minor under pyenv.
  dir="$(ls -d "$PYENV_ROOT/versions/$minor".* 2>/dev/null | sort -V | tail -n1 || true)"
  if [ -z "$dir" ] || [ ! -x "$dir/bin/python3" ]; then
    echo "[python versions] CPython $minor is not installed under $PYENV_ROOT/versions: this machine cannot test it" >&2
    exit 1
  fi
  venv="$WORK/venv-$minor"
  "$dir/bin/python3" -m venv --clear "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$(dirname "$WHEEL")" snowmint >&2
  want=cp310-abi3; [ "$minor" = 3.9 ] && want=cp39-abi3
  got="$("$venv/bin/python" -c 'import importlib.metadata as m; print(next(l for l in m.distribution("snowmint").read_text("WHEEL").splitlines() if l.startswith("Tag:")).split()[1])')"
  [ "${got%%-manylinux*}" = "$want" ] || { echo "[python versions] CPython $minor installed the $got wheel, not $want" >&2; exit 1; }
  echo "[python versions] $("$dir/bin/python3" --version): fresh venv, the $got wheel" >&2
  if [ "$scope" = full ]; then
    "$venv/bin/pip" install -q --disable-pip-version-check "pytest>=7" "mypy>=1.8" "gunicorn>=21" >&2
    (cd "$HERE" && "$venv/bin/python" -m pytest -q -p no:cacheprovider tests \
       --ignore=tests/test_coord.py --ignore=tests/test_range.py \
       --ignore=tests/test_prefork.py) >&2
  else
    "$venv/bin/pip" install -q --disable-pip-version-check "pytest>=7" "mypy>=1.8" >&2
    (cd "$HERE" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "${VERSION_SENSITIVE[@]}") >&2
  fi
  tested+=("$minor")
done
echo "[python versions] the wheels passed on CPython ${tested[*]} ($scope suite; the whole suite on 3.11 in test.sh)" >&2
