"""Pre-fork servers with a lease source, the README's recipes run as written: gunicorn with and without
--preload, uWSGI and a Celery prefork worker, each with 4 workers on a sequencer of exactly 4 node IDs
(on the embedded store), so that a master that kept the node ID it claimed at import would starve a
worker. Every request must succeed, no ID may repeat, and every worker mints under a node ID of its own.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import snowmint

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent


def _block(title: str) -> str:
    m = re.search(rf"```\w+ title={re.escape(title)}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert m, f"the README shows {title}"
    return m.group(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _four_node_source(tmp_path: Path) -> str:
    store = f"file://{tmp_path / 'leases'}"
    snowmint.Sequencer.create("web", store=store, layout="twitter", node_count=4)
    return f"{store}?sequencer=web&ttl=2s"


def _check(got: list[tuple[int, int]]) -> None:
    ids = [i for i, _ in got]
    assert len(set(ids)) == len(ids), "a duplicate ID"
    node_of_pid: dict[int, set[int]] = {}
    for i, pid in got:
        node_of_pid.setdefault(pid, set()).add(snowmint.decode(i).node_id)
    assert all(len(n) == 1 for n in node_of_pid.values()), f"one node ID per worker: {node_of_pid}"
    nodes = [next(iter(n)) for n in node_of_pid.values()]
    assert len(set(nodes)) == len(nodes), f"workers share a node ID: {node_of_pid}"
    assert set(nodes) <= {0, 1, 2, 3}


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


SERVERS = [line for line in _block("prefork-servers").splitlines() if line.strip()]


@pytest.mark.parametrize("command", SERVERS, ids=[" ".join(c.split()[:4]) for c in SERVERS])
def test_readme_prefork_server_recipe(tmp_path: Path, command: str) -> None:
    argv = shlex.split(command)
    if not (BIN / argv[0]).exists():
        # `make test` installs gunicorn and uWSGI: there a missing server fails the test.
        if os.environ.get("SNOWMINT_REQUIRE_SERVERS"):
            pytest.fail(f"{argv[0]} is not installed in this venv")
        pytest.skip(f"{argv[0]} is not installed in this venv")
    (tmp_path / "prefork_app.py").write_text(_block("prefork_app.py"))
    port = _free_port()
    if argv[0] == "gunicorn":
        argv += ["--bind", f"127.0.0.1:{port}"]
    else:
        assert "127.0.0.1:8000" in argv
        argv[argv.index("127.0.0.1:8000")] = f"127.0.0.1:{port}"
        argv += ["--die-on-term", "--disable-logging"]
    argv[0] = str(BIN / argv[0])
    env = dict(os.environ, SNOWMINT_NODE_SOURCE=_four_node_source(tmp_path), PYTHONPATH=str(tmp_path))
    log = open(tmp_path / "server.log", "w+b")
    server = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
                time.sleep(0.05)

        def fetch(_: int) -> list[tuple[int, int]]:
            # A batch (issue 40: a worker whose first call is `next_ids`).
            body = urllib.request.urlopen(f"{url}?n=3", timeout=10).read().decode().split()
            return [(int(i), int(body[-1])) for i in body[:-1]]

        with ThreadPoolExecutor(8) as pool:
            got = [pair for answer in pool.map(fetch, range(400)) for pair in answer]
        assert len(got) == 1200
        _check(got)
    finally:
        _stop(server)
        log.close()


def test_readme_celery_prefork_recipe(tmp_path: Path) -> None:
    celery = pytest.importorskip("celery")
    (tmp_path / "tasks.py").write_text(_block("tasks.py"))
    argv = shlex.split(_block("celery").strip())
    assert argv[0] == "celery"
    argv[0] = str(BIN / "celery")
    queue = tmp_path / "queue"
    (queue / "results").mkdir(parents=True)
    env = dict(
        os.environ,
        SNOWMINT_NODE_SOURCE=_four_node_source(tmp_path),
        CELERY_QUEUE_DIR=str(queue),
        PYTHONPATH=str(tmp_path),
    )
    log = open(tmp_path / "worker.log", "w+b")
    worker = subprocess.Popen(
        [*argv, "--loglevel=warning", "--without-heartbeat", "--without-gossip", "--without-mingle"],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        # A client of its own (importing tasks.py here would open a generator in this process too).
        client = celery.Celery("client", broker="filesystem://", backend=f"file://{queue}/results")
        client.conf.broker_transport_options = {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "control_folder": str(queue / "control"),  # not ./control in the test's working directory
        }
        # Batches (issue 40: a pool process whose first call is `next_ids`).
        results = [client.send_task("tasks.mint", args=(3,)) for _ in range(40)]
        got = [tuple(r.get(timeout=30, interval=0.05)) for r in results]
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()
        pairs = [(int(i), int(p)) for ids, p in got for i in ids]
        assert len(pairs) == 120
        _check(pairs)
        assert os.getpid() not in {p for _, p in pairs}
    finally:
        _stop(worker)
        log.close()
        shutil.rmtree(queue, ignore_errors=True)


def test_wait_for_node_ms(tmp_path: Path) -> None:
    store = f"file://{tmp_path / 'leases'}"
    snowmint.Sequencer.create("one", store=store, layout="twitter", node_count=1)
    source = f"{store}?sequencer=one&ttl=2s"
    holder = snowmint.Generator(source)
    with pytest.raises(snowmint.NodeIdsExhaustedError) as e:
        snowmint.Generator(source)
    assert "the earliest held claim (node ID 0) expires at" in str(e.value) and "?wait=30s" in str(e.value)
    t0 = time.monotonic()
    with pytest.raises(snowmint.NodeIdsExhaustedError) as e:
        snowmint.Generator(source, wait_for_node_ms=300)
    assert time.monotonic() - t0 >= 0.3 and "after waiting 300 ms" in str(e.value)
    with pytest.raises(snowmint.InvalidArgumentError):
        snowmint.Generator(3, wait_for_node_ms=300)
    last = holder.next_id()
    # The holder lets go while another waits for its node ID.
    import threading

    threading.Timer(0.3, holder.close).start()
    g = snowmint.Generator(source, wait_for_node_ms=10_000)
    assert g.node_id == 0 and g.next_id() > last
    g.close()
