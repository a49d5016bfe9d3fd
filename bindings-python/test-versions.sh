#!/usr/bin/env bash
# The wheels are abi3: install the one build.sh made for each CPython (cp310-abi3 for 3.10 and later,
# cp39-abi3 for 3.9, picked by pip from the folder as a user's `--find-links` install would) into a fresh
# venv of every other CPython this machine has under pyenv (3.9, 3.10, 3.12, 3.13; test.sh itself runs
# 3.11 on the cp310-abi3 wheel) and run the suite
# there, but for the server-bound tests (test_coord.py, test_range.py: the same Python code over the same
# native calls, run by test.sh against real etcd and PostgreSQL on the default interpreter) and the
# pre-fork server recipes (test_prefork.py: gunicorn, uWSGI and Celery, which pip would compile or fetch
# again for each interpreter; test.sh runs them on the default one).
# Usage: test-versions.sh [WHEEL] (default: build.sh's, current after `make demo`). SNOWMINT_PYTHON_VERSIONS
# overrides the list ("3.9 3.13"; `make test` and `make test-long` split it, see scripts/test-all.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
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
  "$venv/bin/pip" install -q --disable-pip-version-check "pytest>=7" "mypy>=1.8" "gunicorn>=21" >&2
  (cd "$HERE" && "$venv/bin/python" -m pytest -q -p no:cacheprovider tests \
     --ignore=tests/test_coord.py --ignore=tests/test_range.py \
     --ignore=tests/test_prefork.py) >&2
  tested+=("$minor")
done
echo "[python versions] the wheels passed on CPython ${tested[*]} (and 3.11 in test.sh)" >&2
