"""Issue 40: every recipe the repository's README shows for a service's workers, run as written (recipes.py's
RECIPES: gunicorn on a state file with a fixed node ID; gunicorn and the CLI with one lease per host, on the
embedded store, etcd and PostgreSQL), every worker's first call a batch, a worker SIGKILLed mid-load and,
for gunicorn, the primary too; while 2 other processes claim and release node IDs on the same store. No
ID twice, no error answered but TOO_FAR_AHEAD (retry shortly; counted), no worker hung or crashed (issue
40: with PostgreSQL, forked workers used the master's connection and runtime, and hung or died by
SIGSEGV), the replacement answers within 1 s under the host's node ID (on a host busier than its CPUs,
1 s per CPU's worth of load: recipes.py's `replacement_bound`). One run per case in `make test`;
SNOWMINT_RECIPE_RUNS=3 (`make test-long`) runs each 3 times in a row.

bindings-python/README.md's pre-fork recipes (prefork_app.py under gunicorn with and without --preload and
under uWSGI: a lease of its own per worker) run on one store each in `make test` (etcd, PostgreSQL, the
embedded store) and on all three with SNOWMINT_RECIPE_RUNS > 1. Its Celery recipe (tasks.py, `celery -A tasks
worker --pool=prefork --concurrency=4`, every task `mint(5)`) runs on all three in both: a pool process and then
the worker's main process SIGKILLed mid-load, the worker started again (recipes.py's run_celery_killed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from recipes import KNOWN_BUGS, RECIPES, recipe_cases, run_killed, start_claimers, stop_claimers

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a shared lease needs Linux")

RUNS = int(os.environ.get("SNOWMINT_RECIPE_RUNS", "1"))


@pytest.mark.parametrize(
    "name,kind",
    [
        pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[case]) if case in KNOWN_BUGS else ())
        for case in recipe_cases()
    ],
)
def test_readme_recipe_survives_a_killed_worker_and_primary(name: str, kind: str, tmp_path: Path) -> None:
    if RECIPES[name].app is not None:
        pytest.importorskip("celery" if RECIPES[name].front == "celery" else "gunicorn")
    claimers, stop = [], tmp_path / "stop-claimers"
    if kind != "none":
        claimers = start_claimers(kind, tmp_path, 2, stop)
    try:
        run_killed(name, kind, tmp_path, RUNS)
    finally:
        if claimers:
            stop_claimers(claimers, stop)
