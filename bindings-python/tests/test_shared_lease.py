"""One leased node ID per host, shared by its worker processes through a state file (a lease source with
`state_file=`): real processes on the embedded store and on the etcd and PostgreSQL servers test.sh
starts, a sequencer of exactly ONE node ID (so a worker that did not share the lease would fail with
NODE_IDS_EXHAUSTED), the process that claimed it SIGKILLed while the others mint, and the README's
gunicorn recipe run as written.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import snowmint
from recipes import CRASH_WORDS, ETCD, POSTGRES, KillAWorker, KillThePrimary, run_gunicorn, server_kinds

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a shared lease needs Linux")

README = Path(__file__).resolve().parents[2] / "README.md"


def _kinds() -> list[str]:
    return ["file", *server_kinds()]


def one_node_source(kind: str, tmp_path: Path) -> str:
    """A new sequencer of one node ID (twitter layout), as a lease source with a 2 s TTL."""
    store = {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]
    name = f"host-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=1)
    return f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"


WORKER = """
import sys, time, snowmint
source, state_file, seconds, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
gen = snowmint.Generator(node_id=source, state_file=state_file)
with open(out, "w") as f:
    f.write(f"node {gen.node_id}\\n")
    f.flush()
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            f.write(f"{gen.next_id()}\\n")
            f.flush()
            time.sleep(0.001)
    except snowmint.SnowmintError as e:
        f.write(f"error {e.code}\\n")
        sys.exit(3)
    gen.close()
    f.write("released\\n")
"""


def _start(source: str, state_file: Path, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WORKER, source, str(state_file), str(seconds), str(out)])


def _wait_for_node(out: Path) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if out.exists() and out.read_text().endswith("\n"):
            first = out.read_text().splitlines()[0]
            assert first.startswith("node "), first
            return int(first.split()[1])
        time.sleep(0.02)
    raise AssertionError(f"{out}: no node ID within 20 s")


def _ids(out: Path) -> list[int]:
    return [int(line) for line in out.read_text().splitlines() if line.isdigit()]


@pytest.mark.parametrize("kind", _kinds())
def test_workers_share_the_one_node_id_and_outlive_the_claimer(kind: str, tmp_path: Path) -> None:
    src = one_node_source(kind, tmp_path)
    state = tmp_path / "host.lease"
    outs = [tmp_path / f"w{i}.txt" for i in range(4)]
    claimer = _start(src, state, 30, outs[0])
    node = _wait_for_node(outs[0])
    others = [_start(src, state, 5, o) for o in outs[1:]]
    assert [_wait_for_node(o) for o in outs[1:]] == [node] * 3
    time.sleep(0.8)
    killed_ms = time.time() * 1000
    claimer.send_signal(signal.SIGKILL)
    claimer.wait(10)
    for p in others:
        assert p.wait(30) == 0
    for o in outs[1:]:
        assert o.read_text().splitlines()[-1] == "released"
    ids = [i for o in outs for i in _ids(o)]
    assert len(set(ids)) == len(ids), "a duplicate among the workers"
    assert {snowmint.decode(i).node_id for i in ids} == {node}
    # Minting went on past the TTL of the killed claimer's last renewal: another worker kept the lease.
    late = [i for i in ids if snowmint.decode(i).timestamp_ms > killed_ms + 2000]
    assert len(late) > 100, len(late)
    # Released by the last worker: the one node ID can be claimed at once, and continues after them.
    after = snowmint.Generator(src)
    assert after.next_id() > max(ids)
    after.close()


def test_a_fixed_node_state_file_is_not_a_lease_file(tmp_path: Path) -> None:
    src = one_node_source("file", tmp_path)
    state = tmp_path / "fixed.snowmint"
    snowmint.Generator(node_id=3, state_file=str(state)).next_id()
    with pytest.raises(snowmint.StateFileMismatchError, match="leased node ID"):
        snowmint.Generator(node_id=src, state_file=str(state))


CLAIMER = """
import sys, time, snowmint
source, stop, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
end, n = time.monotonic() + seconds, 0
while time.monotonic() < end and not __import__("os").path.exists(stop):
    g = snowmint.Generator(source)
    g.next_ids(3)
    g.close()
    n += 1
print(n)
"""


def _claimers(kind: str, tmp_path: Path, count: int, stop: Path) -> list[subprocess.Popen[bytes]]:
    """`count` processes claiming and releasing node IDs of another sequencer on the same store, over and
    over, until `stop` exists (at most 120 s)."""
    store = {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]
    name = f"others-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=64)
    src = f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"
    return [
        subprocess.Popen([sys.executable, "-c", CLAIMER, src, str(stop), "120"], stdout=subprocess.PIPE)
        for _ in range(count)
    ]


def _readme_host_lease_app(tmp_path: Path) -> str:
    """Writes the README's app_host_lease.py into `tmp_path` (its state file there); returns the
    gunicorn command the README shows."""
    text = README.read_text(encoding="utf-8")
    app = re.search(r"```python title=app_host_lease\.py\n(.*?)```", text, re.S)
    cmd = re.search(r"```sh title=gunicorn-host-lease\n(.*?)```", text, re.S)
    assert app and cmd, "the README shows app_host_lease.py and the gunicorn command"
    state = str(tmp_path / "orders.lease")
    (tmp_path / "app_host_lease.py").write_text(app.group(1).replace("/dev/shm/orders.lease", state))
    return cmd.group(1)


@pytest.mark.parametrize("kind", _kinds())
def test_readme_gunicorn_host_lease_recipe(kind: str, tmp_path: Path) -> None:
    """The README's recipe as written (gunicorn --preload: the master opens the generator and forks the
    workers), every request a batch (`?n=5`: each worker's FIRST call is `next_ids`), 3 runs in a row,
    one worker SIGKILLed mid-load each run (gunicorn replaces it: the replacement answers within 1 s,
    under the host's node ID), while 2 other processes claim and release node IDs on the same store:
    every request answered (but those the killed worker dropped), no
    worker hung or crashed (issue 40: with PostgreSQL, workers used the master's connection and runtime,
    and hung or died by SIGSEGV), one node ID, no duplicate."""
    pytest.importorskip("gunicorn")
    command = _readme_host_lease_app(tmp_path)
    src = one_node_source(kind, tmp_path)
    stop = tmp_path / "stop-claimers"
    claimers = _claimers(kind, tmp_path, 2, stop)
    try:
        all_ids: list[int] = []
        for run in range(3):
            t0 = time.monotonic()
            kill = KillAWorker()
            env = {**os.environ, "SNOWMINT_NODE_SOURCE": src}
            served = run_gunicorn(command, tmp_path, 600, env, query="n=5", while_serving=kill)
            ids = served.ids()
            assert not served.errors, f"run {run}: {served.errors[:5]}"
            # Only the requests the killed worker was answering go unanswered (8 at a time).
            assert served.dropped <= 8 and len(served.answers) == 600 - served.dropped
            assert all(len(i) == 5 for i, _ in served.answers)
            assert len({pid for _, pid in served.answers}) >= 2, "the requests reached several workers"
            assert {snowmint.decode(i).node_id for i in ids} == {0}, "the sequencer's one node ID"
            assert 0 <= kill.recovered_s < 1.0, f"run {run}: the replacement answered after {kill.recovered_s:.2f} s"
            assert kill.node_id == 0, "the replacement mints under the host's node ID"
            all_ids += ids
            print(
                f"{kind} run {run}: {len(ids)} IDs, 0 errors, {served.dropped} dropped by the killed worker, "
                f"replacement answered in {kill.recovered_s * 1000:.0f} ms, {time.monotonic() - t0:.1f} s"
            )
        # The primary killed mid-load: its workers exit; the recipe started again (as systemd would)
        # answers under the host's node ID.
        env = {**os.environ, "SNOWMINT_NODE_SOURCE": src}
        kill_primary = KillThePrimary(command, tmp_path, env)
        served = run_gunicorn(command, tmp_path, 3000, env, query="n=5", while_serving=kill_primary)
        assert not served.errors, served.errors[:5]
        assert kill_primary.node_id == 0, kill_primary.log[-3000:]
        assert not [w for w in CRASH_WORDS if w in kill_primary.log], kill_primary.log[-3000:]
        all_ids += served.ids()
        print(
            f"{kind} primary killed: {len(served.ids())} IDs before, {served.dropped} requests refused after; "
            f"started again, answered in {kill_primary.recovered_s * 1000:.0f} ms"
        )
        assert len(set(all_ids)) == len(all_ids), "gunicorn workers minted a duplicate"
    finally:
        stop.touch()
        for c in claimers:
            out, _ = c.communicate(timeout=30)
            assert c.returncode == 0 and int(out) > 0, "the other claimers claimed"


AT_ONCE = """
import sys, time, snowmint
source, state_file, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
print("ready", flush=True)  # imported: the parent then sends every process one start time
start_at = float(sys.stdin.readline())
time.sleep(max(0.0, start_at - time.time()))
gen = snowmint.Generator(node_id=source, state_file=state_file)
ids = gen.next_ids(3)
end = time.monotonic() + seconds
while time.monotonic() < end:
    ids += gen.next_ids(3)
    time.sleep(0.005)
print(gen.node_id, *ids)
gen.close()
"""


@pytest.mark.parametrize("kind", _kinds())
def test_processes_started_at_once_share_one_node(kind: str, tmp_path: Path) -> None:
    """Issue 40 item 4: 4, 8 or 16 processes of one host open the same lease source and state file at
    the same instant (after a common start time; they import snowmint before it), 20 runs in a row (a
    new sequencer of 16 node IDs each: a process that did not wait for the first claimer's record would
    take another one). Every process of a run mints under ONE node ID; no ID repeats."""
    counts = [4, 8, 16]
    for run in range(20):
        n = counts[run % len(counts)]
        store = {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]
        name = f"once-{uuid.uuid4().hex[:10]}"
        snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=16)
        src = f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"
        state = tmp_path / f"run{run}.lease"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", AT_ONCE, src, str(state), "0.3"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(n)
        ]
        # Every process started and imported snowmint (it said so); then one start time for all, a
        # moment ahead, so that they open the source at the same instant.
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == b"ready\n", f"run {run}: not started"
        start_at = f"{time.time() + 0.05}\n".encode()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(start_at)
            p.stdin.close()
        results = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, f"run {run}: {err.decode()[-2000:]}"
            results.append(out.decode().split())
        nodes = {int(r[0]) for r in results}
        assert len(nodes) == 1, f"run {run} ({n} processes): node IDs {sorted(nodes)}"
        ids = [int(i) for r in results for i in r[1:]]
        assert len(ids) >= 3 * n and len(set(ids)) == len(ids), f"run {run}: a duplicate"
        assert {snowmint.decode(i).node_id for i in ids} == nodes


@pytest.mark.parametrize("kind", _kinds())
def test_processes_one_after_another_keep_the_hosts_node(kind: str, tmp_path: Path) -> None:
    """Processes of one host on one state file that do not overlap (each releases the lease before the
    next joins: short jobs, or late joiners of a start at once) claim the node ID the file last named
    again when it is free, rather than any other of the sequencer's 64."""
    store = {"file": f"file://{tmp_path / 'store'}", "etcd": ETCD, "postgres": POSTGRES}[kind]
    name = f"after-{uuid.uuid4().hex[:10]}"
    snowmint.Sequencer.create(name, store=store, layout="twitter", node_count=64)
    src = f"{store}{'&' if '?' in store else '?'}sequencer={name}&ttl=2s"
    state = tmp_path / "host.lease"
    nodes, ids = [], []
    for _ in range(6):
        out = subprocess.run(
            [sys.executable, "-c", AT_ONCE, src, str(state), "0", "0.05"], capture_output=True, timeout=60
        )
        assert out.returncode == 0, out.stderr.decode()[-2000:]
        words = out.stdout.decode().split()
        nodes.append(int(words[0]))
        ids += [int(i) for i in words[1:]]
    assert len(set(nodes)) == 1, f"node IDs one after another: {nodes}"
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
